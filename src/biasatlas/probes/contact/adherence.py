"""Adherence to the contact hypothesis as paper 001 defines it (Table 3), with paired intervals.

Paper 001, Table 3: "adherence to contact hypothesis ... as the percentage of prompts that have a biased
response being less when the prompt includes positive contact framing versus being more when the prompt
includes negative contact framing as compared to the baselines percentages of no contact framing".
A cell adheres when % biased (positive) < % biased (none) < % biased (negative). The percentages count
every answer (an unreadable one is not biased), as Table 3 does. The changes versus no contact are
paired on prompt sets, with Newcombe's method-10 interval for paired proportions.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from biasatlas.probes.contact.effects import question_units
from biasatlas.stats.clustered import shared_reference_test
from biasatlas.stats.paired import newcombe_paired_ci
from biasatlas.stats.proportions import wilson_interval

__all__ = ["ADHERENCE_LEVELS", "adherence_table"]

BASE = ["model", "mode", "language", "scale"]
FRAMINGS = ("none", "positive", "negative")
#: the groupings of the adherence tables: summary key -> columns after model, mode, language, scale
ADHERENCE_LEVELS: dict[str, list[str]] = {
    "adherence": [],  # paper 001 Table 3: model x scale
    "adherence_by_axis": ["axis"],
    "adherence_by_group": ["axis", "group"],
}


def _set_biased(cell: pd.DataFrame) -> pd.DataFrame:
    """Prompt set x framing: 1.0 when most of its samples are biased, 0.0 when most are not, NaN on a tie.

    An answer without a decision counts as not biased (Table 3's percentage of prompts with a biased answer).
    """
    biased = (cell["decision"] == "biased").astype(float)
    share = biased.groupby([cell["set_id"], cell["contact"]]).mean().unstack("contact")
    return (share > 0.5).astype(float).where(share.notna() & (share != 0.5))


def _change(wide: pd.DataFrame, framing: str, units: pd.Series | None = None) -> dict[str, Any]:
    """The paired change in % biased (framing − none, percentage points) with its Newcombe 95% interval; where
    prompt sets share their no-contact answer (``units``: set -> question), the question-level cluster-robust
    interval of :func:`biasatlas.stats.clustered.shared_reference_test` instead."""
    name = f"change_{framing}"
    if "none" not in wide or framing not in wide:
        return {name: None, f"{name}_ci_low": None, f"{name}_ci_high": None, f"n_pairs_{framing}": 0}
    pair = wide[["none", framing]].dropna().astype(bool)
    if units is not None and len(pair):
        codes = np.unique(units.reindex(pair.index).astype(str).to_numpy(), return_inverse=True)[1]
        if len(np.unique(codes)) < len(codes):
            res = shared_reference_test(pair["none"].to_numpy(int), pair[framing].to_numpy(int), codes)
            return {name: 100 * res.effect, f"{name}_ci_low": 100 * res.ci_low, f"{name}_ci_high": 100 * res.ci_high,
                    f"n_pairs_{framing}": len(pair)}
    after, before = pair[framing], pair["none"]
    counts = (int((after & before).sum()), int((after & ~before).sum()), int((~after & before).sum()),
              int((~after & ~before).sum()))
    n = sum(counts)
    low, high = newcombe_paired_ci(*counts)
    change = 100 * (counts[1] - counts[2]) / n if n else math.nan
    return {name: change, f"{name}_ci_low": 100 * low, f"{name}_ci_high": 100 * high, f"n_pairs_{framing}": n}


def _percentages(cell: pd.DataFrame) -> dict[str, Any]:
    """% biased per framing over every answer, with Wilson 95% intervals (paper 001 Table 3's numbers)."""
    row: dict[str, Any] = {}
    for framing in FRAMINGS:
        answers = cell[cell["contact"] == framing]
        if "key" in answers.columns:  # a no-contact answer shared by several prompt sets counts once
            answers = answers.drop_duplicates(subset="key")
        n, count = len(answers), int((answers["decision"] == "biased").sum())
        low, high = wilson_interval(count, n)
        row[f"n_{framing}"] = n
        row[f"biased_{framing}_pct"] = 100 * count / n if n else None
        row[f"biased_{framing}_ci_low"] = 100 * low if n else None
        row[f"biased_{framing}_ci_high"] = 100 * high if n else None
    return row


def _verdicts(row: dict[str, Any]) -> dict[str, Any]:
    """adheres: the paper's reading of the percentages; adheres_ci: both paired intervals exclude 0 that way."""
    none, positive, negative = (row.get(f"biased_{f}_pct") for f in FRAMINGS)
    if none is None or positive is None or negative is None:
        return {"adheres": None, "adheres_ci": None}
    bounds = (row.get("change_positive_ci_high"), row.get("change_negative_ci_low"))
    upper, lower = (math.nan if b is None else float(b) for b in bounds)
    return {"adheres": bool(positive < none < negative), "adheres_ci": bool(upper < 0 < lower)}


def adherence_table(outcomes: pd.DataFrame, by: list[str] | None = None) -> pd.DataFrame:
    """Paper 001 Table 3 adherence per model × mode × language × scale (× ``by``, e.g. axis or group).

    Columns: % biased under no / positive / negative contact over all answers (Wilson 95% intervals);
    the paired change of each framing versus no contact on prompt sets, in percentage points, with
    Newcombe's 95% interval (``n_pairs_*`` sets; a set's samples decide by majority, a tie is left out);
    ``adheres`` (positive < none < negative, the paper's reading) and ``adheres_ci`` (the positive
    change's interval below 0 and the negative change's above 0).
    """
    if outcomes.empty or "decision" not in outcomes:
        return pd.DataFrame()
    keys = [c for c in [*BASE, *(by or [])] if c in outcomes.columns]
    rows = []
    for key, cell in outcomes.groupby(keys, sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        row: dict[str, Any] = {**dict(zip(keys, key, strict=True)), "n_sets": int(cell["set_id"].nunique())}
        row.update(_percentages(cell))
        wide = _set_biased(cell)
        units = question_units(cell)
        row.update(_change(wide, "positive", units))
        row.update(_change(wide, "negative", units))
        row.update(_verdicts(row))
        rows.append(row)
    return pd.DataFrame(rows)
