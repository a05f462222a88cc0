"""Planted nulls on the contact probe's real plans: the rejection rate of its paired tests in every language.

A simulated study asks the plan's prompts of one language: every distinct prompt text gets its own answer
(a text asked by several prompt sets is answered once, as the cache does), drawn independently of group and
framing with a probability of the biased decision that differs between scenario x action cells and between
studies; with ``samples`` > 1 each text is answered that many times and a set decides by majority. The
probe's own test functions (``effects._decision_tests``, ``effects._probability_tests``) then run on the
sets, with the probe's own question units (``effects.question_units``).

    PYTHONPATH=src python tests/helpers/contact_null_plans.py [--studies 200] [--axis religion|all]

prints, per language, samples and test, the rejections at alpha 0.05 and the binomial 95% interval of alpha.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import binom

import biasatlas
from biasatlas.probes.contact import effects

ALPHA = 0.05
TESTS = ("positive vs none decision", "negative vs none decision", "none / positive / negative decision",
         "positive vs none P(biased) paired t", "positive vs none P(biased) Wilcoxon")


@dataclass(frozen=True)
class PlanShape:
    """The prompt sets of one language's plan: each set's three text ids and its scenario x action cell."""

    language: str
    set_ids: np.ndarray
    texts: dict[str, np.ndarray]  # framing -> text id per set
    cell: np.ndarray  # cell id per text
    n_texts: int
    units: pd.Series  # set id -> question (what the probe finds)


def plan_shape(language: str, axes: list[str] | None) -> PlanShape:
    prompts = biasatlas.plan("contact", languages=[language], axes=axes)
    ids: dict[str, int] = {}
    cells: dict[tuple[str, str], int] = {}
    cell_of_text: list[int] = []
    by_set: dict[str, dict[str, int]] = {}
    rows = []
    for p in prompts:
        text = p.messages[0].content
        if text not in ids:
            ids[text] = len(ids)
            cell_of_text.append(cells.setdefault((str(p.meta["scenario"]), str(p.meta["action"])), len(cells)))
        by_set.setdefault(p.meta["set_id"], {})[p.meta["contact"]] = ids[text]
        rows.append({"set_id": p.meta["set_id"], "contact": p.meta["contact"],
                     "messages_json": text})
    set_ids = np.array(list(by_set))
    texts = {f: np.array([by_set[s][f] for s in set_ids]) for f in ("none", "positive", "negative")}
    units = effects.question_units(pd.DataFrame(rows))
    return PlanShape(language, set_ids, texts, np.array(cell_of_text), len(ids), units)


def one_study(shape: PlanShape, rng: np.random.Generator, samples: int) -> dict[str, float]:
    """The p of each test in :data:`TESTS` for one simulated null study."""
    p_cell = rng.uniform(0.1, 0.9, shape.cell.max() + 1)
    p_text = p_cell[shape.cell]
    draws = rng.random((samples, shape.n_texts)) < p_text
    decision = (draws.mean(0) > 0.5).astype(float)  # odd samples: no tie
    wide = pd.DataFrame({f: decision[t] for f, t in shape.texts.items()}, index=shape.set_ids)
    labels: dict[str, Any] = {}
    out = {}
    for row in effects._decision_tests(wide, shape.units, labels, ALPHA):
        out[f"{row['comparison']} decision"] = row["p"]
    # choice mode: log-odds of P(biased) per text, centred on the cell's, independent of framing
    logit = np.log(p_text / (1 - p_text)) + rng.normal(0, 1, shape.n_texts)
    logits = pd.DataFrame({f: logit[t] for f, t in shape.texts.items()}, index=shape.set_ids)
    probs = 1 / (1 + np.exp(-logits))
    for row in effects._probability_tests(logits[["none", "positive"]], probs[["none", "positive"]], shape.units,
                                          labels, ALPHA):
        out[f"{row['comparison']} P(biased) {row['method_kind']}"] = row["p"]
    return out


def rejection_rates(shape: PlanShape, studies: int, samples: int, seed: int = 0) -> dict[str, int]:
    rng = np.random.default_rng(seed)
    counts = dict.fromkeys(TESTS, 0)
    for _ in range(studies):
        for name, p in one_study(shape, rng, samples).items():
            counts[name] += p is not None and p < ALPHA
    return counts


def band(studies: int, level: float = 0.95) -> tuple[int, int]:
    """The binomial interval of rejections around alpha over ``studies`` studies."""
    return int(binom.ppf((1 - level) / 2, studies, ALPHA)), int(binom.ppf(1 - (1 - level) / 2, studies, ALPHA))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--studies", type=int, default=200)
    parser.add_argument("--axis", default="religion")
    args = parser.parse_args()
    low, high = band(args.studies)
    print(f"alpha {ALPHA}, {args.studies} studies, binomial 95% interval of rejections {low}-{high}")
    from biasatlas.probes.contact.data import languages

    for language in languages():
        shape = plan_shape(language, None if args.axis == "all" else [args.axis])
        for samples in (1, 3):
            counts = rejection_rates(shape, args.studies, samples)
            cells = "  ".join(f"{name}: {count / args.studies:.3f}" for name, count in counts.items())
            print(f"{language} ({len(shape.set_ids)} sets, {shape.units.nunique()} questions), samples {samples}: "
                  f"{cells}")


if __name__ == "__main__":
    main()
