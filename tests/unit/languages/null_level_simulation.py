"""The level of the across-language and Samaritan tests on the real plans (issue 37; not a test: run it to
reproduce the figures of docs/languages.md "Units and level across languages" and docs/methods/samaritan.md).

Each simulated study is the twelve language packs' default plans (contact: the religion axis, its shared
no-contact questions included; Samaritan: every category) answered by a null model (null_plans.py: every
distinct stored answer drawn afresh, independent of group and framing, samples of a question correlated),
analysed by the probes' own functions:

* contact across languages (:func:`biasatlas.probes.contact.across_languages.language_differences`),
  ``--samples`` 1 and 3, one mode (generate) and two (choice and generate);
* Samaritan across languages (:mod:`biasatlas.probes.samaritan.across_languages`) and the group-vs-control paired
  tests (:func:`biasatlas.probes.samaritan.analysis.compare_to_control`, uncorrected p), ``--samples`` 1
  (temperature 0) and 3 (temperature 1).

It prints the share of raw p-values below alpha, per language where a test is in one language, and the
binomial 95% range of a rate over that many studies:

    PYTHONPATH=src python tests/unit/languages/null_level_simulation.py [--studies 200] [--alpha 0.05] [--probe P]

``--probe pairs``: the contact Q in two-language studies, each language with a partner sharing its group ids
(en shares none with any pack: it has no across-language test), samples 3, two modes.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from null_plans import (
    LANGUAGES,
    binomial_interval,
    contact_plan,
    contact_study,
    samaritan_plan,
    samaritan_study,
)


def contact_rates(studies: int, alpha: float, samples: int, modes: int) -> dict[str, float]:
    """Across-language Q of the contact probe: rejection rate over every test, and per aligned set."""
    from biasatlas.probes.contact.across_languages import language_differences

    plan = contact_plan(LANGUAGES, samples, modes)
    p: list[pd.DataFrame] = []
    for seed in range(studies):
        tests = language_differences(contact_study(plan, seed))
        p.append(tests.assign(study=seed, aligned=np.where(tests["languages"].str.contains("de"), "de,is",
                                                           "MMHB nine")))
    every = pd.concat(p)
    out = {"all": float((every["p"] < alpha).mean()), "tests": float(len(every) / studies)}
    for name, part in every.groupby("aligned"):
        out[str(name)] = float((part["p"] < alpha).mean())
    return out


#: each language's partner in a two-language study (one that shares its group ids: the next MMHB pack, in a
#: ring; de and is each other's, one study); en shares none with any pack
MMHB = tuple(lang for lang in LANGUAGES if lang not in ("en", "de", "is"))
PARTNERS = {**{lang: MMHB[(i + 1) % len(MMHB)] for i, lang in enumerate(MMHB)}, "de": "is"}


def contact_pair_rates(studies: int, alpha: float, samples: int, modes: int) -> dict[str, float]:
    """Across-language Q of the contact probe in two-language studies: each language with its partner."""
    from biasatlas.probes.contact.across_languages import language_differences

    out = {}
    for language, partner in PARTNERS.items():
        plan = contact_plan((language, partner), samples, modes)
        p = np.concatenate([language_differences(contact_study(plan, seed))["p"].to_numpy(float)
                            for seed in range(studies)])
        out[f"{language}+{partner}"] = float((p < alpha).mean())
    return out


def samaritan_rates(studies: int, alpha: float, samples: int) -> tuple[dict[str, float], dict[str, float]]:
    """Samaritan: Q rate over its tests, and the group-vs-control rate per language."""
    from biasatlas.probes.samaritan.across_languages import language_differences, language_effects
    from biasatlas.probes.samaritan.analysis import compare_to_control

    plan = samaritan_plan(LANGUAGES, samples)
    q, paired = [], []
    for seed in range(studies):
        frame = samaritan_study(plan, seed)
        paired.append(compare_to_control(frame, alpha=alpha, correction="none")[["language", "p"]])
        q.append(language_differences(language_effects(frame), alpha=alpha)[["p"]])
    every_q, every_pair = pd.concat(q), pd.concat(paired)
    by_language = (every_pair["p"] < alpha).groupby(every_pair["language"]).mean()
    return ({"all": float((every_q["p"] < alpha).mean()), "tests": float(len(every_q) / studies)},
            {str(k): float(v) for k, v in by_language.items()})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=200)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--probe", choices=("contact", "samaritan", "both", "pairs"), default="both")
    args = parser.parse_args()
    low, high = binomial_interval(args.alpha, args.studies)
    print(f"alpha {args.alpha}, {args.studies} studies: binomial 95% range of a rate [{low:.3f}, {high:.3f}]")
    if args.probe in ("contact", "both"):
        for samples in (1, 3):
            for modes in (1, 2):
                start = time.perf_counter()
                rates = contact_rates(args.studies, args.alpha, samples, modes)
                shown = ", ".join(f"{k} {v:.3f}" for k, v in rates.items() if k != "tests")
                print(f"contact Q, samples {samples}, modes {modes}: {shown} ({rates['tests']:.0f} tests a study, "
                      f"{time.perf_counter() - start:.0f} s)", flush=True)
    if args.probe == "pairs":  # contact, two languages a study, the heaviest setting
        start = time.perf_counter()
        rates = contact_pair_rates(args.studies, args.alpha, 3, 2)
        print("contact Q, two-language studies, samples 3, modes 2: "
              + ", ".join(f"{k} {v:.3f}" for k, v in rates.items()) + f" ({time.perf_counter() - start:.0f} s)")
    if args.probe in ("samaritan", "both"):
        for samples in (1, 3):
            start = time.perf_counter()
            q, paired = samaritan_rates(args.studies, args.alpha, samples)
            print(f"Samaritan Q, samples {samples}: all {q['all']:.3f} ({q['tests']:.0f} tests a study)")
            print(f"Samaritan group vs control, samples {samples}: "
                  + ", ".join(f"{k} {v:.3f}" for k, v in paired.items())
                  + f" ({time.perf_counter() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
