"""The leakage probe's JSON-ready summary of a study (what `summary`, `leakage fit --json` and the API return)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from biasatlas.probes.leakage.analysis import ALPHA, CORRECTION, Analysis, analyse, coverage
from biasatlas.store import Store


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A frame as JSON-ready rows (NaN -> None)."""
    if frame is None or frame.empty:
        return []
    return [{str(k): (None if isinstance(v, float) and v != v else v) for k, v in row.items()}
            for row in frame.to_dict(orient="records")]


def summary_from(analysis: Analysis) -> dict[str, Any]:
    """The JSON-ready summary of an analysis."""
    top_traits = []
    if not analysis.cells.empty:
        means = analysis.cells.groupby(["variant", "lang", "trait"])["score"].mean().reset_index()
        for (variant, lang), sub in means.groupby(["variant", "lang"]):
            best = sub.sort_values("score", ascending=False).head(5)
            ranked = [{"trait": t, "mean_score": float(s)}
                      for t, s in zip(best["trait"], best["score"], strict=True)]
            top_traits.append({"variant": variant, "lang": lang, "traits": ranked})
    return {
        "settings": analysis.settings,
        "coverage": records(coverage(analysis)),
        "top_traits": top_traits,
        "fits": [f.as_dict() for f in analysis.fits],
        "flows": records(analysis.flows),
        "leaked_examples": records(analysis.leaked.head(50) if not analysis.leaked.empty else analysis.leaked),
    }


def summarise(store: Store, alpha: float | None = None, correction: str | None = None) -> dict[str, Any]:
    """Coverage, leakage fits (bundled human tables, complete cases), flows and leaked-trait examples.

    ``alpha`` (default 0.05) is the level of a flow, ``correction`` (default bh) the adjustment of the human
    coefficients' p-values over all fits.
    """
    return summary_from(analyse(store, alpha=ALPHA if alpha is None else alpha,
                                correction=CORRECTION if correction is None else correction))
