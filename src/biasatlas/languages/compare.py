"""Across languages, side by side: each group's effect in every language, and whether it differs.

Groups are aligned across languages by their descriptor id: the nine MMHB packs share MMHB ids
(``P_D001`` is "diabetic" in fr, es, ..., ko); en (HolisticBias text keys) and de/is (paper 000's keys)
align only with languages that use the same keys. The effect is the share of biased decisions of the
contact probe (``biased`` = 1 / 0 per answered prompt), with a Wilson 95% interval
(``statsmodels.stats.proportion.proportion_confint``). Whether it differs between languages is the
Pearson chi-square test of homogeneity of that share over the languages a group was asked in
(``scipy.stats.chi2_contingency`` on the 2 x L table), Benjamini-Hochberg adjusted over the groups of a
model (``statsmodels.stats.multitest.multipletests``). ``min_expected`` < 5 flags tables where the
chi-square approximation is rough. Wiring into summary / report / export is left to their owners.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

METHOD = ("Pearson chi-square test of homogeneity of the biased share across languages "
          "(scipy.stats.chi2_contingency, 2 x L), Benjamini-Hochberg over a model's groups; "
          "Wilson 95% intervals per language")


def effects_by_language(frame: pd.DataFrame, *, group: str = "descriptor", language: str = "language",
                        outcome: str = "biased", model: str = "model", alpha: float = 0.05) -> pd.DataFrame:
    """One row per model x group x language: n, biased count, share and its Wilson interval."""
    import pandas as pd
    from statsmodels.stats.proportion import proportion_confint

    df = _prepared(frame, group, language, outcome, model)
    rows = df.groupby(["model", group, language], sort=True)[outcome].agg(n="count", k="sum").reset_index()
    rows["k"] = rows["k"].astype(int)
    low, high = proportion_confint(rows["k"], rows["n"], alpha=alpha, method="wilson")
    rows["share"] = rows["k"] / rows["n"]
    rows["ci_low"], rows["ci_high"] = pd.Series(low).to_numpy(), pd.Series(high).to_numpy()
    return rows.rename(columns={group: "group", language: "language"})


def language_differences(frame: pd.DataFrame, *, group: str = "descriptor", language: str = "language",
                         outcome: str = "biased", model: str = "model", alpha: float = 0.05) -> pd.DataFrame:
    """One row per model x group asked in two or more languages: the homogeneity test (see module doc)."""
    import numpy as np
    import pandas as pd
    from scipy.stats import chi2_contingency
    from statsmodels.stats.multitest import multipletests

    effects = effects_by_language(frame, group=group, language=language, outcome=outcome, model=model,
                                  alpha=alpha)
    out = []
    for (m, g), rows in effects.groupby(["model", "group"], sort=True):
        if len(rows) < 2:
            continue
        table = np.array([rows["k"].to_numpy(), (rows["n"] - rows["k"]).to_numpy()])
        row: dict[str, object] = {"model": m, "group": g, "languages": ",".join(rows["language"]),
                                  "n": int(rows["n"].sum()), "chi2": 0.0, "dof": len(rows) - 1, "p": 1.0,
                                  "min_expected": 0.0}
        if table.sum(axis=1).min() > 0:  # a biased share of 0 or 1 everywhere: nothing differs
            res = chi2_contingency(table, correction=False)
            row.update(chi2=float(res.statistic), p=float(res.pvalue), min_expected=float(res.expected_freq.min()))
        out.append(row)
    tests = pd.DataFrame(out, columns=["model", "group", "languages", "n", "chi2", "dof", "p", "min_expected"])
    tests["p_adj"] = np.nan
    for _, idx in tests.groupby("model").groups.items():
        tests.loc[idx, "p_adj"] = multipletests(tests.loc[idx, "p"], alpha=alpha, method="fdr_bh")[1]
    tests["differs"] = tests["p_adj"] < alpha
    tests.attrs["method"] = METHOD
    return tests


def _prepared(frame: pd.DataFrame, group: str, language: str, outcome: str, model: str) -> pd.DataFrame:
    missing = [c for c in (group, language, outcome) if c not in frame.columns]
    if missing:
        raise ValueError(f"the frame lacks column(s) {missing}")
    df = frame[frame[outcome].notna()].copy()
    df["model"] = df[model].astype(str) if model in df.columns else "all"
    df[outcome] = df[outcome].astype(float)
    return df
