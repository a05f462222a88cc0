"""Paired tests of the contact effect on the same prompt sets: on the decisions and on the probabilities.

The unit is the *question*: a no-contact prompt and the framed prompts paired with it. In English and
German/Icelandic each prompt set has a no-contact question of its own (question = prompt set); in the nine
MMHB packs the no-contact question does not change with the contact principle, so several sets share one
no-contact text, which the study answers once. With shared questions the tests condition on that: the
decisions' tests are exact permutation tests within questions (:mod:`biasatlas.stats.clustered`; with one
set per question they are McNemar's and Cochran's exact tests), the probabilities' tests run on one
difference per question (the mean over its sets). With several samples per prompt, the samples of a set
are aggregated before any test (they are not independent pairs): the set's decision under a framing is the
majority of its readable samples (a tie leaves the set out of that test), its P(biased) the mean of its
samples' log-odds.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from biasatlas.stats.clustered import cochran_exact, shared_cochran, shared_reference_test
from biasatlas.stats.families import adjust_family, family_label
from biasatlas.stats.paired import mcnemar_paired, paired_mean_difference, wilcoxon_signed_rank
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


def question_units(group: pd.DataFrame) -> pd.Series:
    """Prompt set -> its question: the text of its no-contact prompt (sets with one text share one answer).

    Frames without the prompt text (hand-built ones) give every set its own question."""
    none = group[group["contact"] == "none"]
    sets = pd.Series(group["set_id"].unique())
    if "messages_json" not in none.columns or none.empty:
        return pd.Series(sets.to_numpy(), index=sets.to_numpy())
    text = none.groupby("set_id")["messages_json"].first()
    return text.reindex(sets.to_numpy()).fillna(pd.Series(sets.to_numpy(), index=sets.to_numpy()))


UNIT_SETS = "prompt sets (samples aggregated first) read under every framing compared"
UNIT_QUESTIONS = ("questions: a no-contact answer shared by several prompt sets counts once (samples aggregated "
                  "first; exact permutation within questions)")


def _units_of(index: pd.Index, units: pd.Series) -> np.ndarray:
    """Integer question codes of the sets in ``index``."""
    labels = units.reindex(index).astype(str).to_numpy()
    return np.unique(labels, return_inverse=True)[1]


def _decision_tests(wide: pd.DataFrame, units: pd.Series, labels: dict[str, Any],
                    alpha: float) -> list[dict[str, Any]]:
    rows = []
    for other in ("positive", "negative"):
        if "none" in wide and other in wide:
            pair = wide[["none", other]].dropna().astype(bool)
            # b: biased under none only (moved to unbiased), c: biased under the framing only (power: b + c)
            b, c = int((pair["none"] & ~pair[other]).sum()), int((~pair["none"] & pair[other]).sum())
            codes = _units_of(pair.index, units)
            common = {**labels, "comparison": f"{other} vs none", "measure": "decision", "method_kind": "McNemar",
                      "discordant_b": b, "discordant_c": c}
            if len(np.unique(codes)) == len(codes):  # a question per set: McNemar's exact test on the sets
                res = mcnemar_paired(wide["none"], wide[other], alpha=alpha, ci="newcombe")
                rows.append({**common, **res.as_dict(), "units": len(codes), "n_unit": UNIT_SETS,
                             "ci_method": "Newcombe method 10 (paired proportions)"})
                continue
            shared = shared_reference_test(pair["none"].to_numpy(int), pair[other].to_numpy(int), codes, alpha)
            rows.append({**common, "method": f"exact permutation test within questions (McNemar's c − b over "
                         f"{shared.n_sets} sets of {shared.n_units} questions; discordant: {b} → unbiased, "
                         f"{c} → biased)", "n": shared.n_sets, "statistic": shared.statistic, "p": shared.p,
                         "effect": shared.effect, "effect_name": "risk difference (after − before)",
                         "ci_low": shared.ci_low, "ci_high": shared.ci_high, "p_adj": None,
                         "units": shared.n_units, "varying_units": shared.varying_units, "min_p": shared.min_p,
                         "n_unit": UNIT_QUESTIONS,
                         "ci_method": "Wald, question-level cluster-robust variance"})
    if all(c in wide for c in FRAMINGS):
        complete = wide[list(FRAMINGS)].dropna().astype(int)
        codes = _units_of(complete.index, units)
        if len(np.unique(codes)) == len(codes):
            q = cochran_exact(complete.to_numpy())
        else:
            q = shared_cochran(complete["none"].to_numpy(), complete["positive"].to_numpy(),
                               complete["negative"].to_numpy(), codes)
        eta = q.statistic / (2 * len(complete)) if len(complete) and np.isfinite(q.statistic) else None
        rows.append({**labels, "comparison": "none / positive / negative", "measure": "decision",
                     "method_kind": "Cochran's Q", "method": q.method, "n": len(complete),
                     "statistic": None if not np.isfinite(q.statistic) else q.statistic,
                     "p": None if not np.isfinite(q.p) else q.p, "effect": eta, "effect_name": "eta² (Q / n(k−1))",
                     "ci_low": None, "ci_high": None, "p_adj": None, "varying_sets": q.varying,
                     "min_p": None if not np.isfinite(q.min_p) else q.min_p, "units": len(np.unique(codes)),
                     "n_unit": UNIT_SETS if len(np.unique(codes)) == len(codes) else UNIT_QUESTIONS})
    return rows


def _per_question(frame: pd.DataFrame, units: pd.Series) -> pd.DataFrame:
    """Set-level values averaged over the sets of each question (one row per question)."""
    return frame.groupby(units.reindex(frame.index).astype(str).to_numpy()).mean()


def _probability_tests(logits: pd.DataFrame, probs: pd.DataFrame, units: pd.Series, labels: dict[str, Any],
                       alpha: float) -> list[dict[str, Any]]:
    rows = []
    for other in ("positive", "negative"):
        if "none" not in logits or other not in logits:
            continue
        pair = logits[["none", other]].dropna()
        change_sets = probs.loc[pair.index, other] - probs.loc[pair.index, "none"]
        shared = len(np.unique(_units_of(pair.index, units))) < len(pair)
        n_unit = UNIT_SETS
        if shared:  # one difference per question: the mean of its sets' framed values against its one answer
            change_sets = _per_question(change_sets.to_frame("d"), units)["d"]
            pair = _per_question(pair, units)
            n_unit = UNIT_QUESTIONS.replace("exact permutation within questions", "one mean difference each")
        after, before = pair[other].to_numpy(float), pair["none"].to_numpy(float)
        t = paired_mean_difference(after, before, alpha,
                                   label="mean change in the log-odds of P(biased) (framing − none)")
        change = change_sets.to_numpy(float)
        mean, low, high = mean_interval(change, alpha)
        common = {**labels, "comparison": f"{other} vs none", "measure": "P(biased)", "units": len(pair),
                  "n_unit": n_unit}
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
        units = question_units(group)
        results.extend(_decision_tests(set_decisions(group), units, labels, alpha))
        probabilities = set_probabilities(group)
        if probabilities is not None:
            results.extend(_probability_tests(*probabilities, units, labels, alpha))
    table = pd.DataFrame(results)
    if not table.empty:
        table["p_adj"] = adjust_family(table, "contact", correction)
        table["correction"] = correction
        table["family"] = family_label("contact")
        table["ci_level"] = 1 - alpha
    return table
