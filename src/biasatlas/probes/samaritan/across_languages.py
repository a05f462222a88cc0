"""Across languages, side by side, for the Samaritan probe: each group's gap from the control in every language.

Groups are aligned across languages by their English names (``Man``'s group ``male``): every language asks
the same scenario ids and names the groups by the English phrasing keys. A group's **effect** in a language is
the probe's own paired difference from the no-demographic control (:func:`compare_to_control`: each phrasing
paired with the control over the scenario x rephrasing cells readable for both, averaged per scenario), in
rating points with its Student t interval over scenarios. It is taken over the phrasings asked in *every*
compared language (en and de ask two phrasings of some groups, the packs one), so each language's effect is
about the same English phrasings. The control is asked in the same language, so a language in which the model
rates everyone higher (a language-wide shift) moves both sides and is not a difference of the group.

Whether the effect differs between languages is Cochran's Q test of heterogeneity of these per-language mean
differences (statsmodels ``combine_effects``/``test_homogeneity``; variance = squared standard error of the
mean difference, sd of the scenario differences / sqrt(scenarios)), with I² (clipped at 0) and
Benjamini-Hochberg over the groups of one model x decoding. Ratings are whole numbers, so a language whose
scenario differences never vary would have a variance of 0 and an infinite weight: each scenario difference's
variance is floored at 1/6, the variance of the rounding of two whole-number ratings (each ± 0.5, uniform).
The languages share scenarios, but their differences are treated as independent samples (conservative when a
scenario moves the gap alike in every language).

The unit is the *scenario* of a language (issue 37): the samples of a prompt, its rephrasings and the group's
phrasings are averaged into one paired difference per scenario, a stored answer (one cache key) counts once
(:func:`biasatlas.probes.samaritan.analysis.stored_answers`), and decodings are never pooled (each test is per
model x decoding; the probe asks in generate mode only). ``n`` counts these scenarios. Measured level on the
real plans: docs/languages.md, "Units and level across languages".
"""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

DECODING = ["model", "temperature", "max_tokens"]
GROUP = [*DECODING, "category", "group"]
#: what ``n`` counts (the export's n_unit)
UNIT = "scenarios (a scenario's samples, rephrasings and phrasings averaged; a stored answer counted once)"
METHOD = ("Cochran's Q test of heterogeneity over languages of the group's mean paired difference from the "
          "control (rating points; variance = squared standard error over scenarios, each scenario's variance "
          "floored at 1/6; statsmodels combine_effects), Benjamini-Hochberg over the groups of one model x "
          "decoding; Student t 95% intervals per language; unit: " + UNIT)
#: scenarios per language below which the Q test rejects a true null clearly more often than alpha: Q takes the
#: variances estimated from the scenarios as known. Simulated (tests/unit/languages/q_level_simulation.py; normal
#: differences, 20,000 draws, 2 to 12 languages), level / alpha: at 20 scenarios 1.2-2.0 (alpha 0.05) and 1.6-3.4
#: (0.01); at 30, 1.1-1.6 and 1.5-2.3; at the full 103, 1.0-1.2 and 1.1-1.3 (docs/languages.md)
MIN_PAIRS = 30
#: floor of one scenario difference's variance: two whole-number ratings, each rounded by up to ± 0.5
ROUNDING_VARIANCE = 1 / 6
EFFECT_COLUMNS = [*GROUP, "language", "phrasings", "left_out", "n", "rating", "control_rating", "effect", "ci_low",
                  "ci_high", "se", "sd_diff", "only_rating"]
TEST_COLUMNS = [*GROUP, "languages", "phrasings", "left_out", "n", "q", "dof", "p", "p_adj", "i2", "effect_min",
                "effect_max", "flags", "flag_notes", "differs"]


def common_phrasings(outcomes: pd.DataFrame) -> tuple[pd.DataFrame, dict[tuple[Any, ...], list[str]]]:
    """The outcomes with, per model x decoding x group, only the phrasings asked in every language that asked
    the group (the control kept whole), and the phrasings left out per group."""
    import pandas as pd

    from biasatlas.probes.samaritan.data import CONTROL

    is_control = outcomes["category"] == CONTROL
    groups = outcomes[~is_control]
    by_group = groups.groupby(GROUP, dropna=False)["language"].nunique().rename("n_group")
    by_phrasing = groups.groupby([*GROUP, "phrasing"], dropna=False)["language"].nunique().rename("n_phrasing")
    table = by_phrasing.reset_index().merge(by_group.reset_index(), on=GROUP)
    common = table["n_phrasing"] == table["n_group"]
    asked_in = groups.groupby([*GROUP, "phrasing"], dropna=False)["language"].agg(lambda s: ",".join(sorted(set(s))))
    dropped: dict[tuple[Any, ...], list[str]] = {}
    for row in table[~common].itertuples(index=False):
        key = tuple(getattr(row, k) for k in GROUP)
        dropped.setdefault(key, []).append(f"{row.phrasing} (asked in {asked_in[(*key, row.phrasing)]} only)")
    kept = groups.merge(table.loc[common, [*GROUP, "phrasing"]], on=[*GROUP, "phrasing"], how="inner")
    return pd.concat([outcomes[is_control], kept], ignore_index=True), dropped


def language_effects(outcomes: pd.DataFrame, ci_level: float = 0.95) -> pd.DataFrame:
    """One row per model x decoding x group x language: the group's mean paired difference from the control
    (``effect``, rating points) over ``n`` scenarios, its Student t interval and standard error."""
    import pandas as pd

    from biasatlas.probes.samaritan.analysis import compare_to_control
    from biasatlas.probes.samaritan.data import CONTROL

    if outcomes.empty:
        return pd.DataFrame(columns=EFFECT_COLUMNS)
    kept, dropped = common_phrasings(outcomes)
    # only the mean differences, intervals and sds are used here: no correction (holm is slow in statsmodels)
    table = compare_to_control(kept, correction="none", ci_level=ci_level)
    if table.empty:
        return pd.DataFrame(columns=EFFECT_COLUMNS)
    names = (kept[kept["category"] != CONTROL].groupby(GROUP, dropna=False)["phrasing"]
             .agg(lambda s: "; ".join(sorted(set(map(str, s))))).rename("phrasings").reset_index())
    table = table.merge(names, on=GROUP, how="left").merge(_only_rating(kept), on=[*GROUP, "language"], how="left")
    table["left_out"] = ["; ".join(dropped.get(tuple(r), [])) for r in table[GROUP].itertuples(index=False)]
    table["effect"] = table["mean_diff"]
    table["se"] = table["sd_diff"] / table["n"].clip(lower=1) ** 0.5
    return pd.DataFrame(table, columns=EFFECT_COLUMNS).sort_values([*GROUP, "language"]).reset_index(drop=True)


def _only_rating(kept: pd.DataFrame) -> pd.DataFrame:
    """Per group x language: the one rating its and the control's readable answers all gave, else NaN."""
    import pandas as pd

    from biasatlas.probes.samaritan.data import CONTROL

    valid = kept[kept["rating"].notna()]
    control = valid[valid["category"] == CONTROL]
    by_unit = {k: set(v) for k, v in control.groupby([*DECODING, "language"], dropna=False)["rating"]}
    rows = []
    for key, ratings in valid[valid["category"] != CONTROL].groupby([*GROUP, "language"], dropna=False)["rating"]:
        values = set(ratings) | by_unit.get((*key[:3], key[-1]), set())
        rows.append({**dict(zip([*GROUP, "language"], key, strict=True)),
                     "only_rating": float(next(iter(values))) if len(values) == 1 else math.nan})
    return pd.DataFrame(rows, columns=[*GROUP, "language", "only_rating"])


def language_differences(effects: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """One row per model x decoding x group asked in two or more languages: Cochran's Q of its effect over
    languages (module doc), I², BH-adjusted p over the model x decoding's groups, and flags."""
    import numpy as np
    import pandas as pd
    from statsmodels.stats.meta_analysis import combine_effects
    from statsmodels.stats.multitest import multipletests

    out = []
    for key, rows in effects.groupby(GROUP, sort=True, dropna=False):
        if len(rows) < 2:
            continue
        flags, notes = [], []
        usable = rows[rows["n"] >= 2]
        thin = rows[rows["n"] < MIN_PAIRS]
        if len(thin):
            flags.append("few_pairs")
            counts = ", ".join(f"{lang} {n}" for lang, n in zip(thin["language"], thin["n"], strict=True))
            notes.append(f"few paired scenarios: {counts}"
                         + f" (fewer than {MIN_PAIRS}: the Q test rejects a true null clearly more often than alpha)")
        only = rows["only_rating"]
        if only.notna().all() and only.nunique() == 1:
            flags.append("one_option")
            notes.append(f"no variation: every rating of the group and the control is {only.iloc[0]:g}")
        flat = usable[usable["sd_diff"] == 0]
        if len(flat) and "one_option" not in flags:
            flags.append("no_spread")
            notes.append("the scenario differences do not vary in " + ", ".join(flat["language"])
                         + " (variance floored at the rating's rounding)")
        q = p = i2 = math.nan
        if len(usable) >= 2:
            n = usable["n"].to_numpy(float)
            var = np.maximum(usable["sd_diff"].to_numpy(float) ** 2, ROUNDING_VARIANCE) / n
            with warnings.catch_warnings():  # the random-effects parts (unused) divide by 0 when Q = 0
                warnings.simplefilter("ignore", RuntimeWarning)
                test = combine_effects(usable["effect"].to_numpy(float), var, method_re="dl").test_homogeneity()
            q, p = float(test.statistic), float(test.pvalue)
            i2 = max(0.0, (q - (len(usable) - 1)) / q) if q > 0 else 0.0  # I² = (Q - df) / Q, at least 0
        else:
            flags.append("not_tested")
            notes.append("not tested: fewer than two languages with two or more paired scenarios")
        out.append({**dict(zip(GROUP, key, strict=True)), "languages": ",".join(usable["language"]),
                    "phrasings": rows["phrasings"].iloc[0],
                    "left_out": rows["left_out"].iloc[0] if "left_out" in rows else "",
                    "n": int(rows["n"].sum()), "q": q,
                    "dof": max(len(usable) - 1, 0), "p": p, "i2": i2,
                    "effect_min": float(rows["effect"].min()), "effect_max": float(rows["effect"].max()),
                    "flags": "; ".join(flags), "flag_notes": " | ".join(notes)})
    tests = pd.DataFrame(out, columns=[c for c in TEST_COLUMNS if c not in ("p_adj", "differs")])
    tests["p_adj"] = np.nan
    for _, idx in tests.groupby(DECODING, dropna=False).groups.items():
        tested = [i for i in idx if tests.loc[i, "p"] == tests.loc[i, "p"]]  # NaN: not tested
        if tested:
            tests.loc[tested, "p_adj"] = multipletests(tests.loc[tested, "p"], alpha=alpha, method="fdr_bh")[1]
    tests["differs"] = (tests["p_adj"] < alpha) & ~tests["flags"].str.contains("one_option")
    tests = pd.DataFrame(tests, columns=TEST_COLUMNS)
    tests.attrs["method"] = METHOD
    return tests


def across_languages(outcomes: pd.DataFrame, alpha: float = 0.01) -> dict[str, Any] | None:
    """The summary block: effects per language (95% intervals) and the tests (``differs`` at ``alpha``, the
    probe's alpha), or None when the readable answers are in one language."""
    if outcomes.empty or outcomes.loc[outcomes["rating"].notna(), "language"].nunique() < 2:
        return None
    effects = language_effects(outcomes)
    tests = language_differences(effects, alpha=alpha)
    aligned = set(map(tuple, tests[GROUP].astype(str).to_numpy()))
    effects = effects[[tuple(r) in aligned for r in effects[GROUP].astype(str).to_numpy()]]
    return {"method": METHOD, "unit": UNIT, "alpha": alpha, "min_pairs": MIN_PAIRS, "effects": _records(effects),
            "tests": _records(tests)}


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    rows = frame.to_dict(orient="records")
    return [{str(k): (None if isinstance(v, float) and math.isnan(v) else (v.item() if hasattr(v, "item") else v))
             for k, v in row.items()} for row in rows]
