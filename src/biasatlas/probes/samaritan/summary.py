"""The Samaritan summary: every analysis table for a study, with its alpha and correction."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from biasatlas.probes.samaritan.analysis import (
    UNIT,
    compare_to_control,
    control_summary,
    default_persona,
    phrasing_table,
    repeatability,
    significance_frequency,
    unparseable,
)
from biasatlas.probes.samaritan.data import NAME
from biasatlas.probes.samaritan.read import load_outcomes
from biasatlas.store import Store

DEFAULT_ALPHA = 0.01
DEFAULT_CORRECTION = "holm"
TABLES = (
    "groups", "controls", "phrasings", "default_persona", "repeatability", "unparseable", "significance_frequency",
)


def analysis_settings(
    store: Store, alpha: float | None = None, correction: str | None = None
) -> dict[str, Any]:
    """alpha and correction: given, else those of the study's last Samaritan run, else defaults."""
    last = store.last_run(NAME) or {}
    config = last.get("config", {}) if isinstance(last, dict) else {}
    return {
        "alpha": float(alpha if alpha is not None else config.get("alpha", DEFAULT_ALPHA)),
        "correction": str(
            correction if correction is not None else config.get("correction", DEFAULT_CORRECTION)
        ),
        "ci_level": 0.95,
    }


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """JSON-ready rows: NaN -> None, numpy scalars -> Python."""
    rows = []
    for row in frame.to_dict(orient="records"):
        clean: dict[str, Any] = {}
        for key, value in row.items():
            if isinstance(value, float) and math.isnan(value):
                value = None
            elif hasattr(value, "item") and not isinstance(value, list | dict):
                value = value.item()
            clean[str(key)] = value
        rows.append(clean)
    return rows


def analyse(outcome_frame: pd.DataFrame, alpha: float, correction: str) -> dict[str, pd.DataFrame]:
    """Every table of the analysis, as frames (what summarise and the report are made of)."""
    comparison = compare_to_control(outcome_frame, alpha=alpha, correction=correction)
    bad = unparseable(outcome_frame)
    if not comparison.empty:
        keys = [*UNIT, "category", "group"]
        comparison = comparison.merge(
            bad[[*keys, "n_answered", "n_unparseable", "reasons"]], on=keys, how="left"
        )
    return {
        "groups": comparison,
        "controls": control_summary(outcome_frame),
        "phrasings": phrasing_table(outcome_frame),
        "default_persona": default_persona(comparison),
        "repeatability": repeatability(outcome_frame, alpha=alpha, correction=correction),
        "unparseable": bad,
        "significance_frequency": significance_frequency(comparison),
    }


def summarise(store: Store, alpha: float | None = None, correction: str | None = None) -> dict[str, Any]:
    """JSON-ready analysis: per model × language × decoding × category × group."""
    settings = analysis_settings(store, alpha, correction)
    frame = load_outcomes(store)
    tables = analyse(frame, settings["alpha"], settings["correction"]) if not frame.empty else {}
    summary: dict[str, Any] = {
        "settings": {
            **settings,
            "test": "paired t-test over scenarios (scenario means of group vs control), two-sided; "
            "Wilcoxon signed-rank alongside",
            "effect_size": "Cohen's d_z (mean paired difference / SD of differences)",
            "correction_family": "all groups of one model × language × decoding (temperature, max_tokens)",
        },
        "n_rows": len(frame),
    }
    for name in TABLES:
        table = tables.get(name, pd.DataFrame())
        summary[name] = _records(table) if not table.empty else []
    return summary
