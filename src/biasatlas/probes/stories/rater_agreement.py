"""Pairwise agreement over every rater, each LLM judge and each human rater on their own (the paper's agreement
heatmap with humans as raters), and the LLM − human harm gap per attribute for each judge provider.

Inputs are the ratings frames of :mod:`.harm` (association, rater, harm, realism; one row per rating; human
raters are ``human:ID``). The kappa is :mod:`.harm_analyses`' pairwise one (quadratic-weighted Cohen's kappa over
the associations two raters share, a judge's samples as their median, at least ``MIN_SHARED`` of them).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pandas as pd
import scipy.stats as ss

from biasatlas.probes.stories import harm_analyses as ha
from biasatlas.probes.stories.harm import parse_key
from biasatlas.stats.paired import no_spread

HUMAN_PREFIX = "human:"
TOO_FEW = f"fewer than {ha.MIN_SHARED} shared associations"
CONSTANT = "both raters give a single score: kappa is 0/0"


def _kind(rater: str) -> str:
    return "human" if rater.startswith(HUMAN_PREFIX) else "judge"


def rater_matrix(llm: pd.DataFrame, human: pd.DataFrame) -> dict[str, Any]:
    """Every rater (judges first, then humans, by name) with their kind and number of associations rated, and
    every pair sharing at least one association: n, the harmful-label agreement and the weighted kappa, or
    ``reason`` where there is no kappa (fewer than ``MIN_SHARED`` shared, or both raters constant). Pairs that
    share no association are not listed."""
    frames = [f for f in (llm, human) if not f.empty]
    if not frames:
        return {}
    per = ha._per_rater(ha._rated(pd.concat(frames, ignore_index=True)))
    if len(per) < 2:
        return {}
    names = sorted(per, key=lambda r: (_kind(r) == "human", r))
    raters = [{"rater": r, "kind": _kind(r), "associations": len(per[r])} for r in names]
    pairs = []
    for a, b in itertools.combinations(names, 2):
        shared = len(per[a].index.intersection(per[b].index))
        if not shared:
            continue
        row: dict[str, Any] = {"a": a, "b": b, "n": shared, "kappa": None, "label_agreement": None}
        found = ha._pair(per[a], per[b])
        if found is None:
            row["reason"] = TOO_FEW
        else:
            row["label_agreement"] = found["label_agreement"]
            kappa = found.get("kappa")
            if kappa is None or np.isnan(kappa):
                row["reason"] = CONSTANT
            else:
                row["kappa"] = kappa
        pairs.append(row)
    return {"raters": raters, "pairs": pairs, "min_shared": ha.MIN_SHARED,
            "method": "quadratic-weighted Cohen's kappa (statsmodels) per rater pair over the associations both "
            f"rated (at least {ha.MIN_SHARED}); a judge's samples as their median, rounded half up; each human "
            "a rater; pairs sharing no association are not listed"}


def _t(d: np.ndarray, lx: np.ndarray, hx: np.ndarray) -> list[float] | None:
    if len(d) < 2 or no_spread(lx, hx) is not None:
        return None
    ci = ss.ttest_1samp(d, 0.0).confidence_interval()
    return [float(ci.low), float(ci.high)]


def provider_gap(llm: pd.DataFrame, human: pd.DataFrame,
                 overrides: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Per judge provider (the audit file's where ``overrides`` names one, else inferred from the name) and
    attribute: the mean over the associations rated by both of (the provider's judge harm − the human mean
    harm, as the paper and the pooled gap), with a t 95% interval and n. The provider's judge harm of an
    association is the mean over its judges of each judge's mean over samples; an association counts under both
    of its attributes."""
    llm, human = ha._rated(llm), ha._rated(human)
    if llm.empty or human.empty:
        return []
    h_med = human.groupby("association")["harm"].mean()
    per_judge = llm.groupby(["rater", "association"])["harm"].mean().reset_index()
    per_judge["provider"] = [ha.provider_of(str(r), overrides) for r in per_judge["rater"]]
    per_judge["inferred"] = [str(r) not in (overrides or {}) for r in per_judge["rater"]]
    out = []
    for provider, group in per_judge.groupby(per_judge["provider"].fillna(""), sort=True):
        l_mean = group.groupby("association")["harm"].mean()
        common = sorted(l_mean.index.intersection(h_med.index))
        if not common:
            continue
        judges = sorted(str(r) for r in group["rater"].unique())
        for attr in sorted({p for k in common for p in (parse_key(k)[0], parse_key(k)[2])}):
            idx = [k for k in common if attr in (parse_key(k)[0], parse_key(k)[2])]
            lx, hx = l_mean[idx].to_numpy(float), h_med[idx].to_numpy(float)
            out.append({"provider": provider or None, "inferred": bool(group["inferred"].any()), "judges": judges,
                        "attribute": attr, "n": len(idx), "mean_difference": float((lx - hx).mean()),
                        "ci95": _t(lx - hx, lx, hx)})
    return out
