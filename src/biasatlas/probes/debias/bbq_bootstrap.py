"""BBQ between settings: a paired bootstrap of every two models asked the same items (paper 001, Table 6).

Table 6 compares BBQ accuracy of the base model with the model of each setting and "performs pairwise bootstrap
evaluations for statistical significance" without giving the procedure. Ours, for every two models (the base
model and each setting's adapter) on the BBQ items both answered:

- the items are resampled with replacement, the same draw for both models (paired), ``RESAMPLES`` times, by
  ``scipy.stats.bootstrap(..., paired=True)`` with a seeded numpy Generator (one child seed per pair);
- the statistics: accuracy over every context (Table 6's measure), and BBQ's two bias scores s_DIS and s_AMB
  (defined as in :mod:`.bbq`); the estimate is the difference, second model − first;
- the interval is the percentile interval (95%); the two-sided p is the percentile interval inverted,
  p = 2 · min(#(d* <= 0) + 1, #(d* >= 0) + 1) / (B + 1), capped at 1 (the smallest level at which the
  equal-tailed interval leaves out 0; two models that never differ get p = 1);
- Holm's correction over the pairs, per statistic (each statistic is one family of tests).
"""

from __future__ import annotations

import inspect
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

RESAMPLES = 2000
CONFIDENCE = 0.95
CORRECTION = "holm"
STATISTICS = ("accuracy", "bias_disambig", "bias_ambig")
WHAT = {"accuracy": "accuracy over every context (Table 6)", "bias_disambig": "bias score s_DIS (disambiguated)",
        "bias_ambig": "bias score s_AMB (ambiguous)"}
#: resampled cells held at once (resamples x items): full BBQ (58k items) stays near 40 MB an array
CELLS = 5_000_000


def _mean(values: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The mean of ``values`` where ``mask`` holds and the value is known (NaN: no such value), and the count."""
    use = mask & ~np.isnan(values)
    count = use.sum(axis=-1)
    total = np.where(use, values, 0.0).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan), count


def values(correct: np.ndarray, biased: np.ndarray, ambig: np.ndarray) -> np.ndarray:
    """The three statistics (accuracy, s_DIS, s_AMB) along the last axis, as :func:`.bbq.scores` defines them.

    ``correct``, ``biased``: 1.0 / 0.0 per item, NaN where not defined (UNKNOWN answered, no target);
    ``ambig``: 1.0 for an ambiguous context. Leading axes are resamples (vectorized for scipy)."""
    every = np.ones_like(ambig, dtype=bool)
    is_ambig = ambig > 0.5
    accuracy, _ = _mean(correct, every)
    ratio_dis, _ = _mean(biased, ~is_ambig)
    accuracy_amb, _ = _mean(correct, is_ambig)
    ratio_amb, counted = _mean(biased, is_ambig)
    # every ambiguous answer UNKNOWN (accuracy 1): no stereotyped answer at all, so s_AMB is 0 (as bbq.scores)
    s_amb = np.where((counted == 0) & (accuracy_amb == 1.0), 0.0, (1.0 - accuracy_amb) * (2.0 * ratio_amb - 1.0))
    return np.stack([accuracy, 2.0 * ratio_dis - 1.0, s_amb])


def _difference(correct_a: np.ndarray, biased_a: np.ndarray, correct_b: np.ndarray, biased_b: np.ndarray,
                ambig: np.ndarray, axis: int = -1) -> np.ndarray:
    """Second − first model, every statistic: the statistic scipy resamples (paired: one draw for all five)."""
    return values(correct_b, biased_b, ambig) - values(correct_a, biased_a, ambig)


def _p_two_sided(distribution: np.ndarray) -> float:
    """The percentile interval inverted: the smallest level whose equal-tailed interval leaves out 0."""
    finite = distribution[np.isfinite(distribution)]
    if finite.size == 0:
        return float("nan")
    below = (np.sum(finite <= 0) + 1) / (finite.size + 1)
    above = (np.sum(finite >= 0) + 1) / (finite.size + 1)
    return float(min(1.0, 2.0 * min(below, above)))


def paired_bootstrap(first: dict[str, np.ndarray], second: dict[str, np.ndarray], ambig: np.ndarray,
                     resamples: int = RESAMPLES, rng: np.random.Generator | None = None) -> list[dict[str, Any]]:
    """The paired bootstrap of two models on the same items (``first``/``second``: ``correct`` and ``biased``
    arrays in the items' order); one dict per statistic: both values, the difference, its interval, p."""
    from scipy import stats

    rng = rng if rng is not None else np.random.default_rng(0)
    data = (first["correct"], first["biased"], second["correct"], second["biased"], ambig)
    observed = _difference(*data)
    base, other = values(first["correct"], first["biased"], ambig), values(second["correct"], second["biased"], ambig)
    n = len(ambig)
    out = [{"statistic": name, "first_value": _num(base[i]), "second_value": _num(other[i]),
            "difference": _num(observed[i]),
            "ci_low": None, "ci_high": None, "p": None, "n": n} for i, name in enumerate(STATISTICS)]
    if n < 2:
        for row in out:
            row["note"] = "fewer than 2 items answered by both: no bootstrap"
        return out
    # scipy < 1.15 names the generator random_state
    seeded = {"rng": rng} if "rng" in inspect.signature(stats.bootstrap).parameters else {"random_state": rng}
    # a statistic undefined in some resamples (no disambiguated item drawn) makes scipy's interval NaN and warn:
    # the interval is then taken over the resamples where it is defined (resamples_defined says how many)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        result = stats.bootstrap(data, _difference, paired=True, vectorized=True, n_resamples=resamples,
                                 batch=max(1, CELLS // n), method="percentile", confidence_level=CONFIDENCE,
                                 **seeded)
    for i, row in enumerate(out):
        if row["difference"] is None:
            row["note"] = "not defined on these items (e.g. no disambiguated context, or every answer UNKNOWN)"
            continue
        distribution = np.asarray(result.bootstrap_distribution[i], dtype=float)
        low, high = result.confidence_interval.low[i], result.confidence_interval.high[i]
        if not (np.isfinite(low) and np.isfinite(high)):  # a few resamples left it undefined: the others' interval
            low, high = np.nanpercentile(distribution, [50 * (1 - CONFIDENCE), 100 - 50 * (1 - CONFIDENCE)])
        row.update(ci_low=float(low), ci_high=float(high), p=_p_two_sided(distribution),
                   resamples_defined=int(np.isfinite(distribution).sum()))
    return out


def _num(value: Any) -> float | None:
    return None if value is None or not np.isfinite(value) else float(value)


def _items(scored: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per model: one row per answered BBQ item (prompt and sample), its correct, biased and ambiguous flags."""
    keys = ["prompt_id", "sample_index"]
    frame = scored.drop_duplicates(["model", *keys]).copy()
    frame["ambig"] = (frame["context_condition"] == "ambig").astype(float)
    frame["correct"] = frame["correct"].astype(float)
    frame["biased_answer"] = frame["biased_answer"].astype(float)
    return {str(m): g.set_index(keys)[["correct", "biased_answer", "ambig"]] for m, g in frame.groupby("model")}


def pairwise(scored: pd.DataFrame, labels: dict[str, str], resamples: int = RESAMPLES, seed: int = 0,
             correction: str = CORRECTION) -> list[dict[str, Any]]:
    """Every two models of ``labels`` (model id -> its setting's name, in the order to compare) that answered
    BBQ items in common: one row per pair and statistic, p adjusted over the pairs of each statistic."""
    from biasatlas.stats.multitest import adjust

    items = _items(scored) if not scored.empty else {}
    models = [m for m in labels if m in items]
    pairs = [(a, b) for i, a in enumerate(models) for b in models[i + 1:]]
    children = np.random.SeedSequence(seed).spawn(len(pairs))
    rows: list[dict[str, Any]] = []
    for (a, b), child in zip(pairs, children, strict=True):
        common = items[a].index.intersection(items[b].index)
        left, right = items[a].loc[common], items[b].loc[common]
        found = paired_bootstrap({"correct": left["correct"].to_numpy(), "biased": left["biased_answer"].to_numpy()},
                                 {"correct": right["correct"].to_numpy(), "biased": right["biased_answer"].to_numpy()},
                                 left["ambig"].to_numpy(), resamples, np.random.default_rng(child))
        for row in found:
            rows.append({"first": labels[a], "second": labels[b], "first_model": a, "second_model": b,
                         "what": WHAT[row["statistic"]], **row, "resamples": resamples, "seed": seed,
                         "method": f"paired bootstrap of items (percentile {CONFIDENCE:.0%} interval, "
                                   f"{resamples} resamples)"})
    for name in STATISTICS:  # one family per statistic: its pairs corrected together
        family = [r for r in rows if r["statistic"] == name]
        adjusted = adjust(np.array([np.nan if r["p"] is None else r["p"] for r in family], dtype=float), correction)
        for r, p_adj in zip(family, adjusted, strict=True):
            r.update(p_adj=None if np.isnan(p_adj) else float(p_adj), correction=correction)
    return rows


def study_pairwise(store: Any, resamples: int = RESAMPLES, seed: int = 0) -> dict[str, Any] | None:
    """The pairwise bootstrap of every BBQ model of the study's debiasing comparisons (base first, then each
    setting's adapter in the order first run); None with fewer than two models."""
    from biasatlas.probes.debias import bbq as bbq
    from biasatlas.probes.debias import evaluate as evaluate
    from biasatlas.probes.debias.quality import PROBE

    comps = [c for c in evaluate.comparisons(store, probe=PROBE) if c["part"] == bbq.TASK]
    labels: dict[str, str] = {}
    for comp in comps:  # bases first: the paper's "No FT" row leads
        labels.setdefault(str(comp["before_model"]), f"{comp['before_model']} (no fine-tuning)")
    for comp in comps:
        labels.setdefault(str(comp["after_model"]), str(comp["setting"]))
    if len(labels) < 2:
        return None
    runs = sorted({r for c in comps for r in (c["before_run"], c["after_run"])})
    frame = store.frame(probe=PROBE, run_ids=runs)
    frame = frame[frame["task"] == bbq.TASK] if "task" in frame else frame.iloc[0:0]
    scored = bbq.score_rows(frame)
    rows = pairwise(scored, labels, resamples, seed)
    return {"models": labels, "resamples": resamples, "seed": seed, "confidence": CONFIDENCE,
            "correction": CORRECTION, "family": "the pairs of one statistic", "rows": rows}
