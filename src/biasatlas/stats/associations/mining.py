"""The whole analysis: every slice of the profiles, pooled into associations; Jaccard of association sets."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from biasatlas.stats.associations.config import UNKNOWN, AssociationConfig
from biasatlas.stats.associations.slices import SliceResult, analyse_slice


@dataclass
class AssociationResult:
    """Every table tested, every significant cell, the associations kept, and step timings."""

    tables: pd.DataFrame
    cells: pd.DataFrame
    associations: pd.DataFrame
    timings: dict[str, float]
    config: AssociationConfig
    n_stories: int
    slices: int
    #: one row per slice (model, language...) where an association holds, its own count/fraction/lift
    per_slice: pd.DataFrame = field(default_factory=pd.DataFrame)


def encode_profiles(profiles: pd.DataFrame, dims: Sequence[str]) -> tuple[dict[str, np.ndarray], dict[str, list[str]]]:
    """Integer codes per dimension (missing -> "unknown"), with "unknown" always in the vocabulary."""
    codes: dict[str, np.ndarray] = {}
    vocab: dict[str, list[str]] = {}
    for dim in dims:
        column = profiles[dim].fillna(UNKNOWN).astype(str)
        values = sorted(set(column.unique()) | {UNKNOWN})
        cat = pd.Categorical(column, categories=values)
        codes[dim] = cat.codes.astype(np.int64)
        vocab[dim] = values
    return codes, vocab


def _run_slice(args: tuple[Any, ...]) -> SliceResult:
    codes, vocab, base, labels, config = args
    return analyse_slice(codes, vocab, base, labels, config)


def mine_associations(
    profiles: pd.DataFrame,
    dims: Sequence[str],
    *,
    by: Sequence[str] = ("model",),
    config: AssociationConfig | None = None,
    progress: Callable[[int, int], None] | None = None,
    separate: Sequence[str] = (),
) -> AssociationResult:
    """Run both steps on every slice of ``profiles`` (one row per story).

    ``profiles`` needs the columns in ``by``, ``base_attribute`` (the prompted dimension) and one
    column per dimension in ``dims`` holding value keys ("unknown" or NaN when not extracted).
    ``separate`` (columns of ``by``) are never pooled: an association is one row per their values
    (e.g. the prompt template of imported stories).
    """
    config = config or AssociationConfig()
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    missing = [c for c in [*by, "base_attribute", *dims] if c not in profiles.columns]
    if missing:
        raise ValueError(f"profiles lack the columns {missing}")
    codes, vocab = encode_profiles(profiles, dims)
    base_all = profiles["base_attribute"].astype(str).to_numpy()
    jobs = []
    groups = (
        profiles.groupby(list(by), sort=True, observed=True).indices if by else {(): np.arange(len(profiles))}
    )
    for key, idx in groups.items():
        key_t = key if isinstance(key, tuple) else (key,)
        labels = dict(zip(by, (str(k) for k in key_t), strict=True))
        jobs.append(({d: c[idx] for d, c in codes.items()}, vocab, base_all[idx], labels, config))
    timings["encode"] = time.perf_counter() - t0
    results: list[SliceResult] = []
    if config.workers > 1 and len(jobs) > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=config.workers) as pool:
            for done, res in enumerate(pool.map(_run_slice, jobs, chunksize=1), start=1):
                results.append(res)
                if progress:
                    progress(done, len(jobs))
    else:
        for done, job in enumerate(jobs, start=1):
            results.append(_run_slice(job))
            if progress:
                progress(done, len(jobs))
    for res in results:  # CPU seconds summed over workers
        for k, v in res.timings.items():
            timings[k] = timings.get(k, 0.0) + v
    timings["slices_wall"] = time.perf_counter() - t0 - timings["encode"]
    tables = pd.DataFrame([t for r in results for t in r.tables])
    cells = pd.DataFrame([c for r in results for c in r.cells])
    t1 = time.perf_counter()
    associations = pool_associations(cells, by, separate)
    timings["pool"] = time.perf_counter() - t1
    held = cells[cells["association"]].reset_index(drop=True) if not cells.empty else cells
    return AssociationResult(tables, cells, associations, timings, config, len(profiles), len(jobs), held)


ASSOCIATION_KEY = ["base_attribute", "base_value", "compared_attribute", "compared_value"]


def pool_associations(cells: pd.DataFrame, by: Sequence[str], separate: Sequence[str] = ()) -> pd.DataFrame:
    """One row per association A=a → B=b that holds (BY-significant, lift ≥ min) in some slice.

    As the paper's published list: ``count`` summed and ``fraction``/``lift`` averaged over the
    slices where it holds (``fraction_max``/``lift_max`` beside them); ``p``, ``q``, Cramér's V and
    the effect are those of its strongest occurrence (lowest q); the slices, models and languages
    where it holds are listed. ``per_slice`` of the result keeps every slice's own row.
    """
    keys = [*separate, *ASSOCIATION_KEY]
    if cells.empty:
        return pd.DataFrame(columns=[*keys, "slices", "models", "languages"])
    held = cells[cells["association"]]
    if held.empty:
        return pd.DataFrame(columns=[*keys, "slices", "models", "languages"])
    rows = []
    for key, group in held.groupby(keys, sort=True):
        best = group.sort_values(["q_by", "lift"], ascending=[True, False]).iloc[0]
        row: dict[str, Any] = dict(zip(keys, key, strict=True))
        row.update(
            count=int(group["count"].sum()),
            fraction=float(group["fraction"].mean()),
            lift=float(group["lift"].mean()),
            fraction_max=float(group["fraction"].max()),
            lift_max=float(group["lift"].max()),
            p=float(best["p"]),
            q=float(best["q_by"]),
            cramers_v=float(best["cramers_v"]),
            effect=str(best["effect"]),
            slices=len(group),
        )
        for col, name in (("model", "models"), ("language", "languages")):
            if col in group.columns:
                row[name] = sorted(group[col].unique().tolist())
        rows.append(row)
    out = pd.DataFrame(rows)
    return out.sort_values(["slices", "lift"], ascending=[False, False]).reset_index(drop=True)


def jaccard_matrix(sets: dict[str, set[tuple[str, ...]]]) -> pd.DataFrame:
    """Jaccard similarity |X ∩ Y| / |X ∪ Y| of association sets (e.g. one set per language)."""
    names = sorted(sets)
    values = np.ones((len(names), len(names)))
    for i, x in enumerate(names):
        for j, y in enumerate(names):
            union = sets[x] | sets[y]
            values[i, j] = len(sets[x] & sets[y]) / len(union) if union else np.nan
    return pd.DataFrame(values, index=names, columns=names)
