"""The score of a human reading audit: accuracy with Wilson intervals, Cohen's kappa, the confusion table, and
whether reading errors depend on the group asked about (a reading error correlated with the group is a bias of
the instrument).

Each answer (its key) counts once: rows repeating it with the same label are one answer, an answer labelled
two ways is a conflict, listed and left out. Accuracy is the share of answers whose reader label equals the
human's (a rating: the same number). Intervals:
Wilson 95% (statsmodels ``proportion_confint``). Kappa: statsmodels ``cohens_kappa`` with its asymptotic 95% CI,
on the label classes (contact: affirmative, negative, refusal, unreadable; samaritan: the exact ratings,
refusal, unreadable). Groups: Fisher's exact test with two groups, else Pearson's chi-square test of independence
(scipy), on the groups x (read right, read wrong) table of each probe; with expected counts under 5 its p-value
comes from a seeded permutation test (SciPy >= 1.15; an older SciPy gives the asymptotic one and says so).

The sample gives each probe x language x reader-label stratum an equal share, so its plain accuracy (the
*sample accuracy*) over-represents the rare labels (unreadable, refusal), where the reader errs most. The
*study-level* accuracy weights each stratum's accuracy by its share of the study's answers (``stratum_size``,
:func:`biasatlas.reading_audit.check_labels`): sum_h W_h p_h, with the stratified variance
sum_h W_h^2 p_h (1 - p_h) / n_h (1 - n_h / N_h) (finite-population corrected) and a Wilson 95% interval on
the effective sample size p (1 - p) / variance (Korn and Graubard 1998; n itself where the variance is 0).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from biasatlas.readers.agreement import kappa

if TYPE_CHECKING:
    import pandas as pd

ALPHA = 0.05
#: resamples of the permutation chi-square test where expected counts are small
PERMUTATIONS = 9999


def rate(correct: int, n: int) -> dict[str, Any]:
    """n, correct, accuracy in % and its Wilson 95% interval (as proportions)."""
    from statsmodels.stats.proportion import proportion_confint

    if n == 0:
        return {"n": 0, "correct": 0, "accuracy_pct": None, "ci": None}
    low, high = proportion_confint(correct, n, alpha=ALPHA, method="wilson")
    return {"n": n, "correct": correct, "accuracy_pct": round(100 * correct / n, 1),
            "ci": [round(float(low), 4), round(float(high), 4)]}


def study_level(frame: pd.DataFrame) -> dict[str, Any] | None:
    """The accuracy of ``frame`` (columns probe, language, reader_class, correct, stratum_size) weighted by the
    study's strata sizes, with its interval; None without sizes."""
    from statsmodels.stats.proportion import proportion_confint

    if frame.empty or "stratum_size" not in frame.columns or frame["stratum_size"].isna().any():
        return None
    strata = frame.groupby(["probe", "language", "reader_class"], sort=True).agg(
        size=("stratum_size", "first"), n=("correct", "size"), right=("correct", "sum"))
    size = strata["size"].astype(float).clip(lower=strata["n"])  # a stratum holds at least what was drawn from it
    weight = size / size.sum()
    p_h = strata["right"] / strata["n"]
    estimate = float((weight * p_h).sum())
    fpc = 1 - strata["n"] / size
    variance = float((weight**2 * p_h * (1 - p_h) / strata["n"] * fpc).sum())
    n = int(strata["n"].sum())
    n_eff = estimate * (1 - estimate) / variance if variance > 0 else float(n)
    low, high = proportion_confint(estimate * n_eff, n_eff, alpha=ALPHA, method="wilson")
    return {"accuracy_pct": round(100 * estimate, 1), "ci": [round(float(low), 4), round(float(high), 4)],
            "n_effective": n_eff, "answers": int(size.sum()), "strata": len(strata),
            "method": "strata weighted by their study sizes; stratified variance (finite-population corrected), "
                      "Wilson 95% CI on the effective n"}


def _figures(part: pd.DataFrame) -> dict[str, Any]:
    """The sample accuracy of ``part`` and its study-level estimate."""
    return {**rate(int(part["correct"].sum()), len(part)), "study_level": study_level(part)}


def group_test(frame: pd.DataFrame) -> dict[str, Any]:
    """Does the reading error rate differ between the groups of ``frame`` (columns ``group``, ``correct``)?"""
    import numpy as np
    from scipy import stats

    counts = frame.groupby("group")["correct"].agg(["size", "sum"])
    groups = [{"group": str(g), "n": int(r["size"]), "errors": int(r["size"] - r["sum"]),
               "error_pct": round(100 * (1 - r["sum"] / r["size"]), 1)} for g, r in counts.iterrows()]
    out: dict[str, Any] = {"groups": groups, "test": None, "p_value": None, "differs": None}
    errors = sum(g["errors"] for g in groups)
    if len(groups) < 2 or errors in (0, len(frame)):
        out["note"] = "no test: one group only" if len(groups) < 2 else "no test: every answer read alike"
        return out
    table = np.array([[g["n"] - g["errors"], g["errors"]] for g in groups])
    if len(groups) == 2:
        _, p = stats.fisher_exact(table)
        out.update(test="Fisher's exact test (two-sided)", p_value=float(p))
    else:
        chi2, p, dof, expected = stats.chi2_contingency(table, correction=False)
        out.update(test="Pearson's chi-square test of independence", statistic=round(float(chi2), 3), dof=int(dof),
                   p_value=float(p))
        if (expected < 5).any():  # small cells: the chi-square law is a poor guide, a permutation p-value is not
            try:
                method = stats.PermutationMethod(n_resamples=PERMUTATIONS, rng=np.random.default_rng(0))
                permuted = stats.chi2_contingency(table, correction=False, method=method)
                out.update(test="Pearson's chi-square test of independence, permutation p-value "
                           f"({PERMUTATIONS:,} resamples, seed 0)", p_value=float(permuted.pvalue))
            except TypeError:  # SciPy < 1.15 has no method argument
                out["note"] = "expected counts under 5: the chi-square p-value is approximate"
    out["differs"] = bool(out["p_value"] < ALPHA)
    return out


def one_per_answer(checked: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, Any]]:
    """One row per answer (``probe``, ``answer_key``), and what the labels file held beyond that.

    Rows repeating an answer with the same human label count once (a row copied, or the answer drawn under
    several sample ids); an answer labelled two ways is a conflict: listed, and left out of every figure (no
    rule can tell which label the human meant). Rows without ``answer_key`` are each an answer of their own.
    """
    rows = len(checked)
    if "answer_key" not in checked.columns or checked.empty:
        return checked, {"rows": rows, "answers": rows, "repeated_rows": 0, "conflicts": []}
    ident = ["probe", "answer_key"]
    # column-wise: the distinct labels per answer counted at once; only the conflicts are walked row by row
    labels = checked.drop_duplicates([*ident, "human_label"]).groupby(ident, sort=True).size()
    conflicting = labels[labels > 1]
    clash = checked.set_index(ident).index.isin(conflicting.index)
    given: dict[tuple[str, str], set[str]] = {}
    ids: dict[tuple[str, str], set[str]] = {}
    part = checked[clash]
    sample_ids = part["sample_id"] if "sample_id" in part else [None] * len(part)
    for probe, key, label, sample_id in zip(part["probe"], part["answer_key"], part["human_label"], sample_ids,
                                            strict=True):
        given.setdefault((str(probe), str(key)), set()).add(label)
        if sample_id is not None:
            ids.setdefault((str(probe), str(key)), set()).add(str(sample_id))
    conflicts = [{"probe": probe, "answer_key": key, "labels": sorted(given[probe, key]),
                  "sample_ids": sorted(ids.get((probe, key), set()), key=lambda i: (len(i), i))}
                 for probe, key in sorted(given)]
    kept = checked[~clash].drop_duplicates(ident, keep="first")
    return kept, {"rows": rows, "answers": len(labels), "repeated_rows": int((~clash).sum()) - len(kept),
                  "conflicts": conflicts}


def score(checked: pd.DataFrame) -> dict[str, Any]:
    """The audit's figures from :func:`biasatlas.reading_audit.check_labels`'s rows, each answer counted once
    (:func:`one_per_answer`; what the file held beyond that is ``labels_file``)."""
    frame, held = one_per_answer(checked)
    frame = frame.copy()
    frame["correct"] = frame["reader_label"] == frame["human_label"]
    result: dict[str, Any] = {"overall": _figures(frame), "probes": {},
                              "by_probe_language": [], "labels_file": held}
    for (probe, language), part in frame.groupby(["probe", "language"], sort=True):
        result["by_probe_language"].append({"probe": probe, "language": language, **_figures(part)})
    for probe, part in frame.groupby("probe", sort=True):
        use = ("reader_class", "human_class") if probe == "contact" else ("reader_label", "human_label")
        confusion = part.groupby(["reader_class", "human_class"]).size()
        result["probes"][probe] = {
            **_figures(part),
            "by_reader_label": [{"reader_label": str(k), **rate(int(p["correct"].sum()), len(p))}
                                for k, p in part.groupby("reader_class", sort=True)],
            "by_reader": [{"reader": str(k), **rate(int(p["correct"].sum()), len(p))}
                          for k, p in part.groupby("reader", sort=True)],
            "kappa": {**kappa([str(v) for v in part[use[0]]], [str(v) for v in part[use[1]]]),
                      "statistic": "Cohen's kappa, asymptotic 95% CI (statsmodels cohens_kappa)"},
            "confusion": [{"reader": str(key[0]), "human": str(key[1]), "n": int(n)}  # type: ignore[index]
                          for key, n in confusion.items()],
            "groups": group_test(part),
        }
    return result
