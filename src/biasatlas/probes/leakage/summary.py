"""The leakage probe's JSON-ready summary of a study (what `summary`, `leakage fit --json` and the API return)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from biasatlas.probes.leakage.analysis import Analysis, analyse, coverage
from biasatlas.probes.leakage.data import group_by_id
from biasatlas.probes.leakage.design import study_design, table3
from biasatlas.probes.leakage.groups import GROUP_NOTE
from biasatlas.probes.leakage.human_profiles import human_profiles_summary
from biasatlas.probes.leakage.scores import PLL_ILPS, measure
from biasatlas.store import Store

MONO_NOTE = (
    "No monolingual control: without --mono LANG=... (Eq. 1's LM_tgt term) a human coefficient also carries "
    "what any monolingual model of the target language learns, so a flow is not yet leakage (paper 004, "
    "section 3); give each target language a monolingual model's matrix to separate the two."
)
FAMILY_NOTE = (
    "Multiple testing: the adjusted p of a flow corrects over that model's cross-language human coefficients "
    "(source != target, usable fits only, up to 12); own-language, intercept, mono and indicator terms are not "
    "leakage tests and keep their unadjusted p."
)


PAPER_NOTE = (
    "Paper design (Cao et al. 2024): every missing human or control cell counts as 0, as the paper's code did, "
    "so the non-shared groups stay in every fit; a flow is a positive cross-language coefficient with an "
    "uncorrected p < 0.05 (no correction over the 12 tests of a model, as in the paper's Figure 2); Table 3 "
    "is the monolingual control's coefficient per model and target language."
)


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A frame as JSON-ready rows (NaN -> None)."""
    if frame is None or frame.empty:
        return []
    return [{str(k): (None if isinstance(v, float) and v != v else v) for k, v in row.items()}
            for row in frame.to_dict(orient="records")]


def dropped_fits(analysis: Analysis) -> list[dict[str, Any]]:
    """The fits left out of the flows: not made (too little data, singular design) or made but not converged
    or singular, each with why and statsmodels' warnings."""
    out = []
    for fit in analysis.fits:
        if fit.usable:
            continue
        out.append({"variant": fit.variant, "target": fit.target, "n_obs": fit.n_obs,
                    "stage": "not fitted" if fit.error else "fitted, left out",
                    "reason": fit.error or fit.dropped, "optimizers": "; ".join(fit.optimizers_tried) or None,
                    "warnings": list(fit.warnings)})
    return out


def notes(analysis: Analysis) -> list[str]:
    """What a reader must know to read the flows: measures, the monolingual control, groups left out."""
    out: list[str] = []
    variants = analysis.variants
    pll = [v for v in variants if v.endswith("[ilps-pll]")]
    if pll:
        out.append(f"{', '.join(pll)}: {PLL_ILPS}, not the sensitivity test (SeT) paper 004 used for mBERT; "
                   "coefficients are not comparable with the paper's mBERT figures.")
    if any(not f.mono for f in analysis.fits):
        out.append(MONO_NOTE)
    by_id = group_by_id()
    complete_case = [f for f in analysis.fits if not f.zero_fill and not f.keep_nonshared]
    left = sorted({g for f in complete_case for g in f.groups_left_out if by_id[g].category == "nonshared"})
    if left:
        measured = {g for v in variants for g in analysis.cells.loc[analysis.cells["variant"] == v, "group"]}
        nonshared = [g for g in measured if g in by_id and by_id[g].category == "nonshared"]
        out.append(
            f"Complete cases: the fits leave out {len(left)} of the {len(nonshared)} non-shared groups measured "
            f"({', '.join(left)}): their human scores are missing in languages that did not rate them (paper "
            "004, section 3.2). --keep-nonshared keeps them (those sources set to 0, with one missing-indicator "
            "term per source); --zero-fill is the paper code's rule."
        )
    if analysis.fits and analysis.settings.get("correction") != "none":
        out.append(FAMILY_NOTE)
    if analysis.fits:
        out.append(GROUP_NOTE)  # why no group is named as treated worse, as the other probes do
    if analysis.settings.get("design") == "paper":
        out.append(PAPER_NOTE)
        if analysis.controls:
            out.append(f"Monolingual controls (LM_tgt), not fitted themselves: {', '.join(analysis.controls)}.")
    return out


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
        "design": analysis.settings.get("design", "ours"),
        "settings": analysis.settings,
        "measures": {v: measure(v) for v in analysis.variants},
        "coverage": records(coverage(analysis)),
        "top_traits": top_traits,
        "fits": [f.as_dict() for f in analysis.fits],
        "dropped_fits": dropped_fits(analysis),
        "flows": records(analysis.flows),
        "table3": records(table3(analysis.fits)),
        "leaked_examples": records(analysis.leaked.head(50) if not analysis.leaked.empty else analysis.leaked),
        "human_profiles": human_profiles_summary(analysis.human),  # category check and Figure 1 (Cao et al.)
        "notes": notes(analysis),
    }


def summarise(store: Store, alpha: float | None = None, correction: str | None = None,
              design: str | None = None) -> dict[str, Any]:
    """Coverage, leakage fits (bundled human tables), flows, Table 3 and leaked-trait examples.

    ``design`` None: the study's (``run leakage --design``; ``ours`` by default: complete cases, BH; ``paper``:
    zero-filled cells, uncorrected p, the ``--mono-for`` controls). ``alpha`` (default 0.05) is the level of a
    flow, ``correction`` (default: the design's) the adjustment of each model's cross-language coefficients.
    """
    chosen = design or study_design(store)
    return summary_from(analyse(store, alpha=alpha, correction=correction,
                                design="paper" if chosen == "paper" else "ours"))
