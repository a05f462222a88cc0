"""Tables and tests of the contact probe, from its outcomes frame (pure functions)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from biasatlas.stats.multitest import adjust
from biasatlas.stats.paired import cochran_q, mcnemar_paired
from biasatlas.stats.proportions import rate_table

DECISIONS = ("unbiased", "biased", "none")
BASE = ["model", "mode", "language"]

# The tables of the papers: name -> grouping columns (after model, mode, language).
TABLES: dict[str, list[str]] = {
    "by_contact": ["scale", "contact"],  # 001 Table 3; 000 Tables 1-4
    "by_group": ["axis", "group"],  # 000 Tables 5-8
    "by_scenario": ["axis", "scenario"],  # 000 Tables 9-12
    "by_axis_scenario": ["axis", "scenario", "contact"],  # 001 Figure 3 (per contact)
    "by_principle": ["principle", "contact"],
    "by_axis_contact": ["axis", "contact"],
}


def decision_table(outcomes: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """n, counts, % and Wilson 95% intervals of unbiased / biased / none per group."""
    cols = [c for c in BASE + by if c in outcomes.columns]
    return rate_table(outcomes, cols, "decision", DECISIONS)


def all_tables(outcomes: pd.DataFrame) -> dict[str, pd.DataFrame]:
    return {name: decision_table(outcomes, by) for name, by in TABLES.items()}


def reasons_table(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Why answers could not be scored (refusal, hedge, both options, no answer), with counts."""
    none = outcomes[outcomes["decision"] == "none"]
    if none.empty:
        return pd.DataFrame(columns=[*BASE, "reason", "count"])
    return none.groupby([*BASE, "reason"], dropna=False).size().reset_index(name="count")


def direction_table(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Share of prompt sets whose answer moved toward the contact framing, per model × scale × contact."""
    rows = outcomes[outcomes["contact"] != "none"]
    if rows.empty:
        return pd.DataFrame()
    return rate_table(rows, [*BASE, "scale", "contact"], "moved", ("toward", "same", "away", "undetermined"))


def contact_tests(outcomes: pd.DataFrame, correction: str = "bh") -> pd.DataFrame:
    """Paired tests of the contact effect on the same prompt sets.

    Per model × mode × language × scale: exact McNemar for positive vs none and negative vs none
    (effect: difference in biased proportion, with CI), and Cochran's Q over the three framings.
    Prompt sets where any framing got no scorable answer are left out of that test (n says how
    many remain). Benjamini-Hochberg (or the chosen correction) across every test reported.
    """
    results: list[dict[str, Any]] = []
    keys = [*BASE, "scale"]
    for group_key, group in outcomes.groupby(keys, sort=True):
        wide = group.pivot_table(
            index=["set_id", "sample_index"], columns="contact", values="biased", aggfunc="first"
        )
        labels = dict(zip(keys, group_key, strict=True))
        for other in ("positive", "negative"):
            if "none" not in wide or other not in wide:
                continue
            res = mcnemar_paired(wide["none"], wide[other])
            results.append({**labels, "comparison": f"{other} vs none", **res.as_dict()})
        if all(c in wide for c in ("none", "positive", "negative")):
            res = cochran_q(wide[["none", "positive", "negative"]])
            results.append({**labels, "comparison": "none / positive / negative", **res.as_dict()})
    table = pd.DataFrame(results)
    if not table.empty:
        table["p_adj"] = adjust(table["p"].astype(float).fillna(np.nan).to_numpy(), correction)
        table["correction"] = correction
    return table


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """JSON-ready rows (NaN -> None)."""
    clean = frame.astype(object).where(frame.notna(), None)
    return [{str(k): v for k, v in r.items()} for r in clean.to_dict(orient="records")]
