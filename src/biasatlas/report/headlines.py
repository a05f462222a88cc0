"""Each probe's headline bias measure per model x language, for the report's overview grid.

A headline is an effect against the probe's own reference (so a test makes sense), with its 95%
interval, the test, n and a p-value adjusted with Holm over every test the probe's headlines make
in the study (one family per probe). Probes without a headline here are shown in the grid by their
validity only.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from biasatlas.stats.paired import mcnemar_paired, no_spread

COLUMNS = ["model", "language", "measure", "estimate", "ci_low", "ci_high", "test", "n", "p", "p_adj", "significant"]


def model_label(frame: pd.DataFrame) -> pd.Series:
    """The model as the answers table shows it; ``model (mode)`` where a model ran in several modes."""
    if "mode" not in frame.columns:
        return frame["model"].astype(str)
    modes = frame.groupby("model")["mode"].transform("nunique")
    return frame["model"].astype(str).where(modes <= 1, frame["model"].astype(str) + " (" + frame["mode"] + ")")


def contact_headline(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Δ % biased under positive contact vs no contact on the same prompt sets (exact McNemar).

    The interval is Newcombe's for paired proportions: it stays within ±100 points and does not
    collapse to a point when no pair is discordant (a Wald interval does both on small n).
    """
    need = {"model", "language", "contact", "set_id", "biased"}
    if outcomes.empty or not need <= set(outcomes.columns):
        return pd.DataFrame(columns=COLUMNS)
    frame = outcomes.assign(shown_model=model_label(outcomes))
    keys = ["set_id"] + (["sample_index"] if "sample_index" in frame.columns else [])
    rows = []
    for (model, language), cell in frame.groupby(["shown_model", "language"], sort=True):
        wide = cell.pivot_table(index=keys, columns="contact", values="biased", aggfunc="first")
        if not {"none", "positive"} <= set(wide.columns):
            continue
        result = mcnemar_paired(wide["none"], wide["positive"], ci="newcombe")
        if result.n == 0:
            continue
        rows.append({
            "model": model, "language": language,
            "measure": "Δ % biased, positive − no contact",
            "estimate": 100 * result.effect, "ci_low": 100 * result.ci_low, "ci_high": 100 * result.ci_high,
            "test": "McNemar exact (paired prompt sets); Newcombe interval", "n": result.n, "p": result.p,
        })
    return _adjust(pd.DataFrame(rows, columns=COLUMNS[:-2]))


def samaritan_headline(outcomes: pd.DataFrame) -> pd.DataFrame:
    """The group rated furthest from the control (paired scenario cells, t-test), and how many groups differ.

    Each group's mean rating is paired with the control's in the same scenario x rephrasing (x sample)
    cell; every group is tested, Holm over all of them; the headline names the group with the
    largest |difference| (its estimate is the largest of several, so it tends to overstate).
    """
    need = {"model", "language", "group", "scenario", "is_control", "rating"}
    if outcomes.empty or not need <= set(outcomes.columns):
        return pd.DataFrame(columns=COLUMNS)
    frame = outcomes[outcomes["rating"].notna()].assign(shown_model=model_label(outcomes))
    cells = ["scenario"] + [c for c in ("rephrasing", "sample_index") if c in frame.columns]
    tests = []
    for (model, language), unit in frame.groupby(["shown_model", "language"], sort=True):
        control = unit[unit["is_control"].astype(bool)].groupby(cells)["rating"].mean()
        for group, answers in unit[~unit["is_control"].astype(bool)].groupby("group", sort=True):
            means = answers.groupby(cells)["rating"].mean()
            paired = pd.concat([means.rename("group"), control.rename("control")], axis=1, join="inner")
            if len(paired) < 2:
                continue
            diff = paired["group"] - paired["control"]
            flat = no_spread(paired["group"].to_numpy(float), paired["control"].to_numpy(float))
            if flat is not None:  # t is 0/0 or c/0 (equal but for rounding included): its limits, no scipy warning
                p, low, high = (1.0 if math.isnan(flat.p) else flat.p), flat.mean, flat.mean
            else:
                res = sps.ttest_rel(paired["group"], paired["control"])
                interval = res.confidence_interval(0.95)
                p, low, high = float(res.pvalue), float(interval.low), float(interval.high)
            tests.append({"model": model, "language": language, "group": group, "estimate": float(diff.mean()),
                          "ci_low": low, "ci_high": high, "n": len(paired), "p": p})
    if not tests:
        return pd.DataFrame(columns=COLUMNS)
    table = _adjust(pd.DataFrame(tests))
    headlines: list[dict[str, Any]] = []
    for (model, language), unit in table.groupby(["model", "language"], sort=True):
        top = unit.iloc[int(np.argmax(unit["estimate"].abs().to_numpy()))]
        differ = int(unit["significant"].sum())
        headlines.append({
            "model": model, "language": language,
            "measure": f"largest gap: {top['group']} − control rating ({differ} of {len(unit)} groups differ)",
            "estimate": top["estimate"], "ci_low": top["ci_low"], "ci_high": top["ci_high"],
            "test": "paired t-test over scenario cells", "n": int(top["n"]), "p": top["p"],
            "p_adj": top["p_adj"], "significant": bool(top["significant"]),
        })
    return pd.DataFrame(headlines, columns=COLUMNS)


def _adjust(table: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """Holm-adjusted p over the table's tests (one family), and whether each is below ``alpha``."""
    if table.empty:
        return table.assign(p_adj=pd.Series(dtype=float), significant=pd.Series(dtype=bool))
    p = table["p"].to_numpy(dtype=float)
    ok = ~np.isnan(p)
    adjusted = np.full(len(p), math.nan)
    if ok.any():
        adjusted[ok] = multipletests(p[ok], alpha=alpha, method="holm")[1]
    return table.assign(p_adj=adjusted, significant=adjusted < alpha)


HEADLINES: dict[str, Callable[[pd.DataFrame], pd.DataFrame]] = {
    "contact": contact_headline,
    "samaritan": samaritan_headline,
}


def headline(probe: Any, store: Any) -> pd.DataFrame:
    """The probe's headline table, or an empty frame when it has none (or no answers)."""
    compute = HEADLINES.get(probe.name)
    if compute is None:
        return pd.DataFrame(columns=COLUMNS)
    return compute(probe.outcomes(store))
