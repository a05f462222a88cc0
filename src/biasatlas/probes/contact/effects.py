"""Paired tests of the contact effect on the same prompt sets: on the decisions and on the probabilities.

The unit is the prompt set (one question under no, positive and negative contact). With several samples
per prompt, the samples of a set are aggregated before any test (they are not independent pairs):
the set's decision under a framing is the majority of its readable samples (a tie leaves the set out
of that test), its P(biased) the mean of its samples' log-odds.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from biasatlas.stats.families import adjust_family, family_label
from biasatlas.stats.paired import cochran_q, mcnemar_paired, paired_mean_difference, wilcoxon_signed_rank
from biasatlas.stats.proportions import mean_interval

BASE = ["model", "mode", "language"]
FRAMINGS = ("none", "positive", "negative")
#: probabilities are clipped to [EPS, 1 − EPS] before taking log-odds (a choice-mode P can be 1e-12)
LOGIT_EPS = 1e-6


def set_decisions(group: pd.DataFrame) -> pd.DataFrame:
    """Prompt set × framing: 1.0 when most readable samples are biased, 0.0 when most are not, NaN on a tie."""
    readable = group[group["biased"].notna()]
    share = readable.groupby(["set_id", "contact"])["biased"].mean().unstack("contact")
    majority = share.where(share != 0.5)
    return (majority > 0.5).astype(float).where(majority.notna())


def set_probabilities(group: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """Prompt set × framing: mean log-odds of P(biased) over samples, and mean P(biased); None without P."""
    p = pd.to_numeric(group["p_biased"], errors="coerce")
    rows = group.assign(p_biased=p)[p.notna()]
    if rows.empty:
        return None
    clipped = rows["p_biased"].clip(LOGIT_EPS, 1 - LOGIT_EPS)
    rows = rows.assign(logit=np.log(clipped / (1 - clipped)))
    logits = rows.groupby(["set_id", "contact"])["logit"].mean().unstack("contact")
    probs = rows.groupby(["set_id", "contact"])["p_biased"].mean().unstack("contact")
    return logits, probs


def _decision_tests(wide: pd.DataFrame, labels: dict[str, Any], alpha: float) -> list[dict[str, Any]]:
    rows = []
    for other in ("positive", "negative"):
        if "none" in wide and other in wide:
            res = mcnemar_paired(wide["none"], wide[other], alpha=alpha, ci="newcombe")
            pair = wide[["none", other]].dropna().astype(bool)
            # b: biased under none only (moved to unbiased), c: biased under the framing only (power: b + c)
            b, c = int((pair["none"] & ~pair[other]).sum()), int((~pair["none"] & pair[other]).sum())
            rows.append({**labels, "comparison": f"{other} vs none", "measure": "decision",
                         "method_kind": "McNemar", **res.as_dict(), "discordant_b": b, "discordant_c": c})
    if all(c in wide for c in FRAMINGS):
        with np.errstate(invalid="ignore", divide="ignore"):  # Q is 0/0 when no decision varies: p NaN
            res = cochran_q(wide[list(FRAMINGS)])
        complete = wide[list(FRAMINGS)].dropna()
        rows.append({**labels, "comparison": "none / positive / negative", "measure": "decision",
                     "method_kind": "Cochran's Q", **res.as_dict(),
                     "varying_sets": int((complete.nunique(axis=1) > 1).sum())})
    return rows


def _probability_tests(logits: pd.DataFrame, probs: pd.DataFrame, labels: dict[str, Any],
                       alpha: float) -> list[dict[str, Any]]:
    rows = []
    for other in ("positive", "negative"):
        if "none" not in logits or other not in logits:
            continue
        pair = logits[["none", other]].dropna()
        after, before = pair[other].to_numpy(float), pair["none"].to_numpy(float)
        t = paired_mean_difference(after, before, alpha,
                                   label="mean change in the log-odds of P(biased) (framing − none)")
        change = (probs.loc[pair.index, other] - probs.loc[pair.index, "none"]).to_numpy(float)
        mean, low, high = mean_interval(change, alpha)
        common = {**labels, "comparison": f"{other} vs none", "measure": "P(biased)"}
        diff = after - before
        sd = float(diff.std(ddof=1)) if len(diff) > 1 else float("nan")
        rows.append({**common, "method_kind": "paired t", **t.as_dict(), "mean_change": mean,
                     "mean_change_ci_low": low, "mean_change_ci_high": high, "sd_diff": sd,
                     "d_z": float(diff.mean() / sd) if sd > 0 else None})
        w = wilcoxon_signed_rank(after, before)
        rows.append({**common, "method_kind": "Wilcoxon", **w.as_dict(), "mean_change": mean,
                     "mean_change_ci_low": low, "mean_change_ci_high": high})
    return rows


def contact_tests(outcomes: pd.DataFrame, correction: str = "bh", alpha: float = 0.05) -> pd.DataFrame:
    """Paired tests of the contact effect, per model × mode × language × scale, on prompt sets.

    Decisions: exact McNemar for positive vs none and negative vs none (effect: the change in the
    proportion of biased answers, with Newcombe's interval) and Cochran's Q over the three framings.
    Probabilities (choice mode): a paired t-test on the log-odds of P(biased) (effect: the mean change
    in log-odds with its interval; ``mean_change`` is the mean change of P(biased) itself) and a Wilcoxon
    signed-rank test on the same differences (effect: matched-pairs rank-biserial r). Intervals are
    (1 − ``alpha``); the p-values of every test in the table are adjusted together with ``correction``.
    """
    results: list[dict[str, Any]] = []
    keys = [*BASE, "scale"]
    for group_key, group in outcomes.groupby(keys, sort=True):
        labels = dict(zip(keys, group_key, strict=True))
        labels["samples"] = int(group.groupby("prompt_id")["sample_index"].nunique().max())
        results.extend(_decision_tests(set_decisions(group), labels, alpha))
        probabilities = set_probabilities(group)
        if probabilities is not None:
            results.extend(_probability_tests(*probabilities, labels, alpha))
    table = pd.DataFrame(results)
    if not table.empty:
        table["p_adj"] = adjust_family(table, "contact", correction)
        table["correction"] = correction
        table["family"] = family_label("contact")
        table["ci_level"] = 1 - alpha
    return table
