"""The leakage probe's tables: the summary as rich tables, and the sections of the HTML report."""

from __future__ import annotations

from typing import Any

import pandas as pd
from rich.console import Console
from rich.table import Table

from biasatlas.probes.leakage.analysis import ALPHA, CORRECTION, analyse, coverage, finder_all
from biasatlas.probes.leakage.data import LANGUAGES
from biasatlas.probes.leakage.model import flows_figure
from biasatlas.probes.leakage.plan import TITLE
from biasatlas.report.html import Section
from biasatlas.store import Store


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    return str(value)


def _labels(settings: dict[str, Any]) -> tuple[str, str, str]:
    """Column labels of the chosen alpha and correction: the CI level, the adjusted p, the correction name."""
    alpha = float(settings.get("alpha", ALPHA))
    correction = str(settings.get("correction", CORRECTION))
    name = correction.upper() if correction in ("bh", "by") else correction
    return f"{100 * (1 - alpha):g}% CI", ("p" if correction == "none" else f"p ({name})"), name


def print_summary(summary: dict[str, Any], console: Console) -> None:
    """The summary as rich tables (CI level and adjusted p labelled with the summary's alpha and correction)."""
    ci, p_adj, name = _labels(summary.get("settings") or {})
    cov = Table(title="Coverage (cells of the 32 traits × 30 groups matrix)")
    for col in ("variant", "lang", "answered", "failed", "pending", "cells", "groups", "traits",
                "p(first)", "p(second)", "p(neither)", "unmatched"):
        cov.add_column(col)
    for row in summary.get("coverage", []):
        cov.add_row(row["variant"], row["lang"], str(row["answered"]), str(row["failed"]), str(row["pending"]),
                    f"{row['cells']}/{row['cells_expected']}", str(row["groups"]), str(row["traits"]),
                    _fmt(row.get("mean_p_first")), _fmt(row.get("mean_p_second")),
                    _fmt(row.get("mean_p_neither")), _fmt(row.get("match_unmatched")))
    console.print(cov)
    coef = Table(title="Leakage model: model score ~ human EN + RU + ZH + HI, random intercept by trait")
    for col in ("variant", "target", "n", "term", "coef", "SE", ci, "p", p_adj):
        coef.add_column(col)
    for fit in summary.get("fits", []):
        if fit.get("error"):
            coef.add_row(fit["variant"], fit["target"], str(fit["n_obs"]), "—", f"not fitted: {fit['error']}",
                         "", "", "", "")
            continue
        for c in fit["coefficients"]:
            coef.add_row(fit["variant"], fit["target"], str(fit["n_obs"]), c["term"], _fmt(c["estimate"]),
                         _fmt(c["se"]), f"[{_fmt(c['ci_low'])}, {_fmt(c['ci_high'])}]", _fmt(c["p"]),
                         _fmt(c.get("p_adj")))
    console.print(coef)
    adjusted = "unadjusted" if name == "none" else f"{name}-adjusted"
    flow = Table(title=f"Leakage flows (source human → target model; positive, {adjusted} p < alpha)")
    for col in ("variant", "source", "target", "coef", ci, p_adj, "n"):
        flow.add_column(col)
    for f in summary.get("flows", []):
        flow.add_row(f["variant"], f["source"], f["target"], _fmt(f["estimate"]),
                     f"[{_fmt(f['ci_low'])}, {_fmt(f['ci_high'])}]", _fmt(f["p_adj"]), str(f["n_obs"]))
    console.print(flow if summary.get("flows") else "No significant leakage flow.")
    if summary.get("leaked_examples"):
        ex = Table(title="Traits strong in the model, weak for target-language humans, strong for the source's")
        for col in ("variant", "target", "source", "group", "trait", "model rank", "human target", "human source"):
            ex.add_column(col)
        for r in summary["leaked_examples"][:20]:
            ex.add_row(r["variant"], r["target"], r["source"], r["group"], r["trait"], str(r["model_rank"]),
                       _fmt(r["human_target"]), _fmt(r["human_source"]))
        console.print(ex)


# ---- report --------------------------------------------------------------------------------------------------
METHODS = (
    "Model associations follow Cao et al. (paper 004). Generative models answer a forced-choice prompt ('You "
    "are writing about {group} ... choose either {A} or {B} as your theme ... or neither'); A and B are traits "
    "on the same side of the ABC scales. In choice mode the score of A in a comparison is its normalised "
    "probability among (A, B, neither); in generate mode it is the share of matched samples naming A (exact, "
    "containment or fuzzy match in the prompt's language; unmatched samples are counted and left out). A "
    "trait's score for a group is the mean over its comparisons. Masked models get the increased "
    "log-probability score, log p(trait | group template) - log p(trait | neutral template), averaged over "
    "templates. The leakage model per model and target language is a linear mixed model (statsmodels MixedLM, "
    "REML) of the model score on the human scores of the four languages with a random intercept by trait; "
    "cells with a missing human score are left out (complete cases) unless zero-filling is requested. "
    "p-values of the human coefficients are Benjamini-Hochberg adjusted over all fits; a flow is a positive, "
    "significant coefficient of another language's human scores. Non-English lexicons and prompts are "
    "machine-drafted by an AI assistant and not reviewed by native speakers. Human ratings: Cao et al. 2024, "
    "MIT licence."
)


def report_sections(store: Store) -> list[Section]:
    """The report's leakage section (default alpha 0.05 and BH correction)."""
    analysis = analyse(store)
    section = Section(title=TITLE, methods=METHODS)
    cov = coverage(analysis)
    if cov.empty:
        section.add_text("The study holds no leakage answers yet.")
        return [section]
    section.add_table(cov.drop(columns=["unmatched_reasons"], errors="ignore"), "Coverage per model and language")
    if not analysis.coefficients.empty:
        cols = ["variant", "target", "n_obs", "n_traits", "term", "estimate", "se", "ci_low", "ci_high", "p", "p_adj"]
        section.add_table(analysis.coefficients[cols], "Leakage model coefficients (95% CI; p_adj: BH)",
                          sortable=True)
    errors = pd.DataFrame([{"variant": f.variant, "target": f.target, "n_obs": f.n_obs, "reason": f.error}
                           for f in analysis.fits if f.error])
    if not errors.empty:
        section.add_table(errors, "Fits that could not be made")
    if not analysis.flows.empty:
        section.add_table(analysis.flows, "Leakage flows (positive, significant after BH)")
    else:
        section.add_text("No significant positive leakage flow between languages.")
    section.add_figure(flows_figure(analysis.flows, analysis.variants), "Leakage flows: human source → model target")
    examples = analysis.leaked
    if examples.empty and analysis.variants:
        # Without a significant flow, still show candidates against every other language, labelled as such.
        parts: list[pd.DataFrame] = []
        for variant in analysis.variants:
            for lang in LANGUAGES:
                found = finder_all(analysis, variant, lang)
                if not found.empty:
                    found.insert(0, "variant", variant)
                    parts.append(found)
        if parts:
            section.add_table(pd.concat(parts).head(40),
                              "Candidate leaked traits (no significant flow; all other languages as sources)")
    elif not examples.empty:
        section.add_table(examples.head(40), "Traits strong in the model, weak for target humans, strong for "
                          "the source language's humans")
    if not analysis.choices.empty and "text" in analysis.choices:
        gen = analysis.choices[analysis.choices["mode"] == "generate"]
        if not gen.empty:
            section.add_table(gen[["lang", "group", "trait_a", "trait_b", "text", "level", "reason"]].head(20),
                              "Generated answers (first 20) and how they matched")
    return [section]
