"""Both steps of the procedure on one slice of stories (a generator model, optionally one language)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.stats as ss

from biasatlas.records import stable_hash
from biasatlas.stats.associations.config import OTHER, UNKNOWN, AssociationConfig
from biasatlas.stats.associations.family import family_pvalues
from biasatlas.stats.associations.tables import (
    LabelledTable,
    cell_tests,
    cochran_ok,
    cramers_v_corrected,
    effect_category,
    prune_array,
)
from biasatlas.stats.multitest import adjust


@dataclass
class SliceResult:
    """Tables and value-level associations of one slice, with the seconds each step took."""

    tables: list[dict[str, Any]] = field(default_factory=list)
    cells: list[dict[str, Any]] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)


def _tick(timings: dict[str, float], key: str, started: float) -> float:
    now = time.perf_counter()
    timings[key] = timings.get(key, 0.0) + now - started
    return now


def analyse_slice(
    codes: dict[str, np.ndarray],
    vocab: dict[str, list[str]],
    base: np.ndarray,
    labels: dict[str, Any],
    config: AssociationConfig,
) -> SliceResult:
    """Both steps on one slice given integer-coded attributes.

    ``codes[dim]`` holds one code per story into ``vocab[dim]`` (which contains "unknown" and
    possibly "other"); ``base`` names each story's prompted attribute; ``labels`` (model,
    language...) are copied onto every output row.
    """
    result = SliceResult()
    timings = result.timings
    cpu_started = time.process_time()
    dims = list(vocab)
    for a_dim in dims:
        t0 = time.perf_counter()
        rows = np.flatnonzero(base == a_dim)
        if rows.size == 0:
            continue
        a_codes = codes[a_dim][rows]
        a_vocab = np.asarray(vocab[a_dim], dtype=object)
        a_keep = a_vocab != UNKNOWN
        family: list[tuple[str, LabelledTable]] = []
        for b_dim in dims:
            if b_dim == a_dim:
                continue
            b_vocab = np.asarray(vocab[b_dim], dtype=object)
            nb = len(b_vocab)
            flat = np.bincount(a_codes * nb + codes[b_dim][rows], minlength=len(a_vocab) * nb)
            full = flat.reshape(len(a_vocab), nb)[a_keep][:, (b_vocab != UNKNOWN) & (b_vocab != OTHER)]
            labelled = prune_array(
                full, a_vocab[a_keep], b_vocab[(b_vocab != UNKNOWN) & (b_vocab != OTHER)], config.min_row_total
            )
            if labelled is not None:
                family.append((b_dim, labelled))
        t0 = _tick(timings, "tables", t0)
        if not family:
            continue
        stats = [cramers_v_corrected(t.counts) for _, t in family]
        expected = [ss.contingency.expected_freq(t.counts) for _, t in family]
        chi2_p = [
            float(ss.chi2.sf(chi2, (t.shape[0] - 1) * (t.shape[1] - 1)))
            for (_, t), (_, chi2) in zip(family, stats, strict=True)
        ]
        ok = [cochran_ok(e) for e in expected]
        g_p = [
            p if good else float(ss.chi2_contingency(t.counts, correction=False, lambda_="log-likelihood").pvalue)
            for (_, t), p, good in zip(family, chi2_p, ok, strict=True)
        ]
        t0 = _tick(timings, "chi2_screen", t0)
        seeds = [
            int(stable_hash([config.seed, labels, a_dim, b_dim], length=8), 16) for b_dim, _ in family
        ]
        pvals = family_pvalues(
            [t.counts for _, t in family], config, seeds, chi2_p, ok, g_p
        )
        q = adjust([s.p for s in pvals], "bh")
        t0 = _tick(timings, "fisher_rxc", t0)
        for (b_dim, table), (v, chi2), tp, q_i, p_asym in zip(family, stats, pvals, q, chi2_p, strict=True):
            effect = effect_category(v, table.shape)
            significant = bool(q_i < config.alpha)
            kept = significant and effect in config.effects
            result.tables.append(
                {
                    **labels,
                    "base_attribute": a_dim,
                    "compared_attribute": b_dim,
                    "n": int(table.counts.sum()),
                    "rows": table.shape[0],
                    "cols": table.shape[1],
                    "chi2": chi2,
                    "df": (table.shape[0] - 1) * (table.shape[1] - 1),
                    "p": tp.p,
                    "q_bh": float(q_i),
                    "p_method": tp.method,
                    "p_bound": tp.bound,
                    "p_asymptotic": p_asym,
                    "resamples": tp.resamples,
                    "cramers_v": v,
                    "effect": effect,
                    "significant": significant,
                    "kept": kept,
                }
            )
            if not kept:
                continue
            cells = cell_tests(table.counts, config.alpha)
            sig = np.argwhere(cells["significant"])
            for i, j in sig:
                result.cells.append(
                    {
                        **labels,
                        "base_attribute": a_dim,
                        "base_value": str(table.rows[i]),
                        "compared_attribute": b_dim,
                        "compared_value": str(table.cols[j]),
                        "count": int(cells["count"][i, j]),
                        "row_total": int(table.counts[i].sum()),
                        "fraction": float(cells["fraction"][i, j]),
                        "expected": float(cells["expected"][i, j]),
                        "lift": float(cells["lift"][i, j]),
                        "p": float(cells["p"][i, j]),
                        "q_by": float(cells["q"][i, j]),
                        "cramers_v": v,
                        "effect": effect,
                        "table_q_bh": float(q_i),
                        "association": bool(cells["lift"][i, j] >= config.min_lift),
                    }
                )
        _tick(timings, "cell_tests", t0)
    timings["cpu"] = time.process_time() - cpu_started  # this process's CPU, whatever the machine's load
    return result
