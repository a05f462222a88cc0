"""The leakage probe's analysis of a study: coverage, association matrices, leakage fits, flows, examples."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from biasatlas.probes.leakage.data import LANGUAGES, LeakageDataError, group_ids, trait_ids
from biasatlas.probes.leakage.design import PAPER_ALPHA, PAPER_CORRECTION, Design, study_controls
from biasatlas.probes.leakage.finder import find_leaked
from biasatlas.probes.leakage.human import load_human
from biasatlas.probes.leakage.model import (
    MIN_CELLS_PER_TRAIT,
    LeakageFit,
    coefficient_table,
    correct_per_variant,
    fit_leakage,
    flows,
)
from biasatlas.probes.leakage.scores import association_cells, matrix, measure, theme_choices, variant_label
from biasatlas.store import Store

PROBE = "leakage"
ALPHA = 0.05  # the level of a leakage flow
CORRECTION = "bh"  # p-values of one model's cross-language human coefficients (source != target), adjusted together
CELLS_PER_MATRIX = len(trait_ids()) * len(group_ids())


@dataclass
class Analysis:
    frame: pd.DataFrame
    choices: pd.DataFrame
    cells: pd.DataFrame
    human: dict[str, pd.DataFrame]
    fits: list[LeakageFit] = field(default_factory=list)
    coefficients: pd.DataFrame = field(default_factory=pd.DataFrame)
    flows: pd.DataFrame = field(default_factory=pd.DataFrame)
    leaked: pd.DataFrame = field(default_factory=pd.DataFrame)
    settings: dict[str, Any] = field(default_factory=dict)
    controls: list[str] = field(default_factory=list)  # variants run as a language's monolingual control

    @property
    def variants(self) -> list[str]:
        return sorted(self.cells["variant"].unique()) if not self.cells.empty else []

    @property
    def subjects(self) -> list[str]:
        """The variants whose leakage is fitted: every one but the monolingual controls."""
        return [v for v in self.variants if v not in self.controls]


def read_matrix(path: str | Path) -> pd.DataFrame:
    """A model association matrix saved in the human tables' layout (traits × groups; 999 = missing)."""
    path = Path(path)
    if not path.exists():
        raise LeakageDataError(f"matrix file not found: {path}")
    frame = pd.read_csv(path)
    frame = frame.set_index(frame.columns[0])
    unknown = [t for t in frame.index if t not in trait_ids()] + [g for g in frame.columns if g not in group_ids()]
    if unknown:
        raise LeakageDataError(f"{path}: unknown traits or groups {unknown}")
    values = frame.apply(pd.to_numeric, errors="coerce")
    return values.where(values != 999).reindex(index=list(trait_ids()), columns=list(group_ids())).astype(float)


def resolve_mono(spec: Mapping[str, str], cells: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """``{lang: CSV path or a variant/model of the study}`` -> monolingual model matrices."""
    out: dict[str, pd.DataFrame] = {}
    for lang, source in spec.items():
        if lang not in LANGUAGES:
            raise LeakageDataError(f"--mono {lang}=...: no such language (valid: {', '.join(LANGUAGES)})")
        if Path(source).exists():
            out[lang] = read_matrix(source)
            continue
        names = sorted(set(cells["variant"]) | set(cells["model"])) if not cells.empty else []
        hit = cells[(cells["variant"] == source) | (cells["model"] == source)] if not cells.empty else cells
        variants = sorted(hit["variant"].unique()) if not hit.empty else []
        if len(variants) != 1:
            raise LeakageDataError(
                f"--mono {lang}={source}: neither a file nor exactly one model of the study (have: {names})"
            )
        out[lang] = matrix(cells, variants[0], lang)
    return out


def coverage(analysis: Analysis) -> pd.DataFrame:
    """Per variant and language: measured cells, answered/failed/pending requests, match outcomes."""
    rows: list[dict[str, Any]] = []
    frame, cells, choices = analysis.frame, analysis.cells, analysis.choices
    if frame.empty:
        return pd.DataFrame()
    for (model, mode, method, lang), sub in frame.groupby(["model", "mode", "method", "language"]):
        variant = variant_label(str(model), str(method), str(mode))
        vcells = cells[(cells["variant"] == variant) & (cells["lang"] == lang)] if not cells.empty else cells
        row: dict[str, Any] = {
            "variant": variant, "measure": measure(variant), "lang": lang, "requests": len(sub),
            "answered": int((sub["status"] == "answered").sum()),
            "failed": int((sub["status"] == "failed").sum()),
            "pending": int((sub["status"] == "pending").sum()),
            "cells": len(vcells), "cells_expected": CELLS_PER_MATRIX,
            "groups": int(vcells["group"].nunique()) if len(vcells) else 0,
            "traits": int(vcells["trait"].nunique()) if len(vcells) else 0,
        }
        if method == "theme" and not choices.empty:
            ch = choices[(choices["model"] == model) & (choices["mode"] == mode) & (choices["lang"] == lang)]
            if mode == "generate":
                levels = ch["level"].value_counts()
                for level in ("exact", "contains", "fuzzy", "unmatched"):
                    row[f"match_{level}"] = int(levels.get(level, 0))
                row["unmatched_reasons"] = {
                    str(k): int(v) for k, v in ch.loc[ch["level"] == "unmatched", "reason"].value_counts().items()
                }
            # Position check: how much of the probability goes to the option shown first.
            first = np.where(ch["order"] == "ab", ch["p_a"], ch["p_b"])
            second = np.where(ch["order"] == "ab", ch["p_b"], ch["p_a"])
            row["mean_p_first"] = float(np.nanmean(first)) if len(ch) and np.isfinite(first).any() else None
            row["mean_p_second"] = float(np.nanmean(second)) if len(ch) and np.isfinite(second).any() else None
            has_neither = len(ch) and ch["p_neither"].notna().any()
            row["mean_p_neither"] = float(np.nanmean(ch["p_neither"])) if has_neither else None
        rows.append(row)
    return pd.DataFrame(rows)


def analyse(
    store: Store,
    *,
    human_dir: str | Path | None = None,
    zero_fill: bool = False,
    keep_nonshared: bool = False,
    mono: Mapping[str, str] | None = None,
    alpha: float | None = None,
    correction: str | None = None,
    design: Design = "ours",
    top_k: int = 5,
    weak: float = 10.0,
    strong: float = 20.0,
    min_cells: int | None = None,
    min_cells_per_trait: int = MIN_CELLS_PER_TRAIT,
) -> Analysis:
    """Everything the leakage report shows, computed from the study's stored answers.

    ``min_cells`` None: 20 complete cells per fixed effect of each fit. ``zero_fill`` and ``keep_nonshared``
    (fill only the non-shared groups' design gaps, with missing indicators) exclude each other.
    ``design`` "paper": every missing cell 0 (the paper's code), uncorrected p < 0.05 for a flow (unless
    ``correction`` is given), and each language's monolingual control from the study's ``--mono-for`` runs
    (unless ``mono`` names one); a control model is not itself fitted.
    """
    if zero_fill and keep_nonshared:
        raise LeakageDataError("--zero-fill and --keep-nonshared exclude each other: choose one way to fill")
    if design == "paper" and keep_nonshared:
        raise LeakageDataError("--design paper fills every missing cell with 0 (the paper's code): drop "
                               "--keep-nonshared")
    paper = design == "paper"
    zero_fill = zero_fill or paper
    alpha = (PAPER_ALPHA if paper else ALPHA) if alpha is None else alpha
    correction = (PAPER_CORRECTION if paper else CORRECTION) if correction is None else correction
    frame = store.frame(probe=PROBE)
    choices = theme_choices(frame) if not frame.empty else pd.DataFrame()
    cells = association_cells(frame, choices)
    human = load_human(human_dir)
    analysis = Analysis(frame=frame, choices=choices, cells=cells, human=human,
                        settings={"design": design,
                                  "human": str(human_dir or "bundled (Cao et al. 2024, MIT)"),
                                  "zero_fill": zero_fill, "keep_nonshared": keep_nonshared, "alpha": alpha,
                                  "correction": correction, "top_k": top_k, "weak": weak, "strong": strong,
                                  "mono": dict(mono or {}), "min_cells": min_cells,
                                  "min_cells_per_trait": min_cells_per_trait})
    controls = study_controls(store) if paper else {}
    spec = {**controls, **dict(mono or {})}
    analysis.settings["mono"] = spec
    mono_matrices = resolve_mono(spec, cells)
    # A language's control model measures that language's monolingual associations: not a subject of the fits.
    analysis.controls = sorted(set(controls.values()))
    for variant in analysis.subjects:
        for lang in LANGUAGES:
            model_matrix = matrix(cells, variant, lang)
            if model_matrix.notna().sum().sum() == 0:
                continue
            analysis.fits.append(
                fit_leakage(model_matrix, human, variant=variant, target=lang, mono=mono_matrices.get(lang),
                            zero_fill=zero_fill, keep_nonshared=keep_nonshared, alpha=alpha,
                            min_cells=min_cells, min_cells_per_trait=min_cells_per_trait)
            )
    correct_per_variant(analysis.fits, alpha=alpha, method=correction)
    analysis.coefficients = coefficient_table(analysis.fits)
    analysis.flows = flows(analysis.fits)
    leaked = []
    for variant in analysis.subjects:
        sub = analysis.flows[analysis.flows["variant"] == variant] if not analysis.flows.empty else analysis.flows
        for target, rows in (sub.groupby("target") if not sub.empty else []):
            found = find_leaked(matrix(cells, variant, str(target)), human, target=str(target),
                                sources=list(rows["source"]), top_k=top_k, weak=weak, strong=strong)
            if not found.empty:
                found.insert(0, "variant", variant)
                leaked.append(found)
    analysis.leaked = pd.concat(leaked, ignore_index=True) if leaked else pd.DataFrame()
    return analysis


def finder_all(analysis: Analysis, variant: str, target: str) -> pd.DataFrame:
    """The qualitative finder against every other language (not only significant flows)."""
    return find_leaked(matrix(analysis.cells, variant, target), analysis.human, target=target,
                       sources=[lang for lang in LANGUAGES if lang != target],
                       top_k=int(analysis.settings["top_k"]), weak=float(analysis.settings["weak"]),
                       strong=float(analysis.settings["strong"]))
