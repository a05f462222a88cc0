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
    """Integer question codes of the sets in ``index``, in the order of the questions' labels (as text)."""
    labels = units.reindex(index).astype(str).to_numpy()
    return np.unique(labels, return_inverse=True)[1]


def _renumber(codes: np.ndarray) -> np.ndarray:
    """Codes of a subset of sets renumbered 0..k−1 in the same order (:func:`_units_of` of the subset)."""
    return np.unique(codes, return_inverse=True)[1]


def _decision_tests(wide: pd.DataFrame, units: pd.Series, labels: dict[str, Any],
                    alpha: float) -> list[dict[str, Any]]:
    rows = []
    # once per table: each set's question code, and each framing's decisions as an array (NaN: none)
    codes = _units_of(wide.index, units)
    column = {name: wide[name].to_numpy(float) for name in FRAMINGS if name in wide}
    for other in ("positive", "negative"):
        if "none" in column and other in column:
            ok = ~(np.isnan(column["none"]) | np.isnan(column[other]))
            x, y = column["none"][ok].astype(bool), column[other][ok].astype(bool)
            # b: biased under none only (moved to unbiased), c: biased under the framing only (power: b + c)
            b, c = int((x & ~y).sum()), int((~x & y).sum())
            pair_codes = _renumber(codes[ok])
            common = {**labels, "comparison": f"{other} vs none", "measure": "decision", "method_kind": "McNemar",
                      "discordant_b": b, "discordant_c": c}
            if len(np.unique(pair_codes)) == len(pair_codes):  # a question per set: McNemar's exact test
                res = mcnemar_paired(pd.Series(column["none"]), pd.Series(column[other]), alpha=alpha,
                                     ci="newcombe")
                rows.append({**common, **res.as_dict(), "units": len(pair_codes), "n_unit": UNIT_SETS,
                             "ci_method": "Newcombe method 10 (paired proportions)"})
                continue
            shared = shared_reference_test(x.astype(int), y.astype(int), pair_codes, alpha)
            rows.append({**common, "method": f"exact permutation test within questions (McNemar's c − b over "
                         f"{shared.n_sets} sets of {shared.n_units} questions; discordant: {b} → unbiased, "
                         f"{c} → biased)", "n": shared.n_sets, "statistic": shared.statistic, "p": shared.p,
                         "effect": shared.effect, "effect_name": "risk difference (after − before)",
                         "ci_low": shared.ci_low, "ci_high": shared.ci_high, "p_adj": None,
                         "units": shared.n_units, "varying_units": shared.varying_units, "min_p": shared.min_p,
                         "n_unit": UNIT_QUESTIONS,
                         "ci_method": "Wald, question-level cluster-robust variance"})
    if len(column) == len(FRAMINGS):
        table = np.column_stack([column[name] for name in FRAMINGS])
        ok = ~np.isnan(table).any(axis=1)
        complete = table[ok].astype(int)
        complete_codes = _renumber(codes[ok])
        n_units = len(np.unique(complete_codes))
        if n_units == len(complete_codes):
            q = cochran_exact(complete)
        else:
            q = shared_cochran(complete[:, 0], complete[:, 1], complete[:, 2], complete_codes)
        eta = q.statistic / (2 * len(complete)) if len(complete) and np.isfinite(q.statistic) else None
        rows.append({**labels, "comparison": "none / positive / negative", "measure": "decision",
                     "method_kind": "Cochran's Q", "method": q.method, "n": len(complete),
                     "statistic": None if not np.isfinite(q.statistic) else q.statistic,
                     "p": None if not np.isfinite(q.p) else q.p, "effect": eta, "effect_name": "eta² (Q / n(k−1))",
                     "ci_low": None, "ci_high": None, "p_adj": None, "varying_sets": q.varying,
                     "min_p": None if not np.isfinite(q.min_p) else q.min_p, "units": n_units,
                     "n_unit": UNIT_SETS if n_units == len(complete_codes) else UNIT_QUESTIONS})
    return rows


def _per_question(values: dict[str, np.ndarray], codes: np.ndarray) -> dict[str, np.ndarray]:
    """Set-level values averaged over the sets of each question (one value per question, questions in order)."""
    means = pd.DataFrame(values).groupby(codes).mean()
    return {name: means[name].to_numpy(float) for name in values}


def _probability_tests(logits: pd.DataFrame, probs: pd.DataFrame, units: pd.Series, labels: dict[str, Any],
                       alpha: float) -> list[dict[str, Any]]:
    rows = []
    codes = _units_of(logits.index, units)
    probs = probs.reindex(logits.index)
    for other in ("positive", "negative"):
        if "none" not in logits or other not in logits:
            continue
        before, after = logits["none"].to_numpy(float), logits[other].to_numpy(float)
        ok = ~(np.isnan(before) | np.isnan(after))
        before, after = before[ok], after[ok]
        change = probs[other].to_numpy(float)[ok] - probs["none"].to_numpy(float)[ok]
        pair_codes = _renumber(codes[ok])
        n_unit = UNIT_SETS
        if len(np.unique(pair_codes)) < len(pair_codes):
            # one difference per question: the mean of its sets' framed values against its one answer
            change = _per_question({"d": change}, pair_codes)["d"]
            means = _per_question({"none": before, other: after}, pair_codes)
            before, after = means["none"], means[other]
            n_unit = UNIT_QUESTIONS.replace("exact permutation within questions", "one mean difference each")
        t = paired_mean_difference(after, before, alpha,
                                   label="mean change in the log-odds of P(biased) (framing − none)")
        mean, low, high = mean_interval(change, alpha)
        common = {**labels, "comparison": f"{other} vs none", "measure": "P(biased)", "units": len(after),
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
    for labels, decisions, probabilities, units in _cells(outcomes):
        results.extend(_decision_tests(decisions, units, labels, alpha))
        if probabilities is not None:
            results.extend(_probability_tests(*probabilities, units, labels, alpha))
    table = pd.DataFrame(results)
    if not table.empty:
        table["p_adj"] = adjust_family(table, "contact", correction)
        table["correction"] = correction
        table["family"] = family_label("contact")
        table["ci_level"] = 1 - alpha
    return table


CellTables = tuple[dict[str, Any], pd.DataFrame, "tuple[pd.DataFrame, pd.DataFrame] | None", pd.Series]


def _cells(outcomes: pd.DataFrame) -> list[CellTables]:
    """Per model × mode × language × scale (sorted): its labels, :func:`set_decisions`,
    :func:`set_probabilities` and :func:`question_units`, each computed for all cells at once (one groupby
    each, not one per cell: a thousand models ask for thousands of cells) and split by cell."""
    keys = [*BASE, "scale"]
    if outcomes.empty or not set(keys) <= set(outcomes.columns):
        return []
    grouped = outcomes.groupby(keys, sort=True)
    codes = grouped.ngroup()
    frame = outcomes.assign(_cell=codes)[codes >= 0]
    names = list(grouped.size().index)
    samples = frame.groupby(["_cell", "prompt_id"])["sample_index"].nunique().groupby(level=0).max()
    # decisions: a framing is a column of a cell where the cell has a readable answer under it
    readable = frame[frame["biased"].notna()]
    share = readable.groupby(["_cell", "set_id", "contact"])["biased"].mean().unstack("contact")
    majority = share.where(share != 0.5)
    decided = (majority > 0.5).astype(float).where(majority.notna())
    framings = readable.groupby("_cell")["contact"].unique()
    decisions = dict(_split(decided))
    probabilities = _cell_probabilities(frame)
    units = _cell_units(frame)
    out: list[CellTables] = []
    for code, name in enumerate(names):
        labels = dict(zip(keys, name if isinstance(name, tuple) else (name,), strict=True))
        labels["samples"] = int(samples[code])
        wide = decisions.get(code)
        if wide is None:
            wide = pd.DataFrame(index=pd.Index([], name="set_id"))
        else:
            wide = wide[[c for c in wide.columns if c in set(framings[code])]]
        out.append((labels, wide, probabilities.get(code), units[code]))
    return out


def _split(table: pd.DataFrame) -> Any:
    """(cell, the cell's rows indexed by set) of a table indexed by (cell, set)."""
    for code, part in table.groupby(level="_cell", sort=False):
        yield code, part.droplevel("_cell")


def _cell_probabilities(frame: pd.DataFrame) -> dict[int, tuple[pd.DataFrame, pd.DataFrame]]:
    """:func:`set_probabilities` of every cell (cells without a P(biased) left out)."""
    p = pd.to_numeric(frame["p_biased"], errors="coerce")
    rows = frame.assign(p_biased=p)[p.notna()]
    if rows.empty:
        return {}
    clipped = rows["p_biased"].clip(LOGIT_EPS, 1 - LOGIT_EPS)
    rows = rows.assign(logit=np.log(clipped / (1 - clipped)))
    by = rows.groupby(["_cell", "set_id", "contact"])
    logits = by["logit"].mean().unstack("contact")
    probs = by["p_biased"].mean().unstack("contact")
    framings = rows.groupby("_cell")["contact"].unique()
    out = {}
    for (code, logit), (_, prob) in zip(_split(logits), _split(probs), strict=True):
        shown = [c for c in logits.columns if c in set(framings[code])]
        out[int(code)] = (logit[shown], prob[shown])
    return out


def _cell_units(frame: pd.DataFrame) -> dict[int, pd.Series]:
    """:func:`question_units` of every cell: set -> the text of its no-contact prompt (else the set itself)."""
    sets = frame[["_cell", "set_id"]].drop_duplicates()
    none = frame[frame["contact"] == "none"]
    texts = ({int(code): part["messages_json"] for code, part in _split(
        none.groupby(["_cell", "set_id"])["messages_json"].first().to_frame())}
        if "messages_json" in none.columns and not none.empty else {})
    out = {}
    for key, part in sets.groupby("_cell", sort=False):
        code = int(key)  # type: ignore[arg-type]
        ids = part["set_id"].to_numpy()
        identity = pd.Series(ids, index=ids)
        text = texts.get(code)
        out[code] = identity if text is None else text.reindex(ids).fillna(identity)
    return out
