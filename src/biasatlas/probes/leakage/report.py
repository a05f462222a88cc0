"""The leakage probe's tables: the summary as rich tables, and the sections of the HTML report."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
from rich.console import Console
from rich.table import Table

from biasatlas.probes.leakage.analysis import ALPHA, CORRECTION, analyse, coverage, finder_all
from biasatlas.probes.leakage.data import LANGUAGES
from biasatlas.probes.leakage.design import study_design, table3_wide
from biasatlas.probes.leakage.figure import flows_figure, flows_plot
from biasatlas.probes.leakage.paper_report import TITLE as CAO_TITLE
from biasatlas.probes.leakage.paper_report import section as paper_section
from biasatlas.probes.leakage.plan import NAME, TITLE
from biasatlas.probes.leakage.summary import dropped_fits, notes
from biasatlas.report.cells import format_p
from biasatlas.report.compare import estimate_cell, p_cell, side_by_side
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
    for variant, text in (summary.get("measures") or {}).items():
        console.print(f"[bold]{variant}[/]: {text}", soft_wrap=True)
    coef = Table(title="Leakage model: model score ~ human EN + RU + ZH + HI, random intercept by trait")
    for col in ("variant", "target", "n", "optimizer", "term", "coef", "SE", ci, "p", p_adj):
        coef.add_column(col)
    for fit in summary.get("fits", []):
        optimizer = fit.get("optimizer") or "–"
        if fit.get("error") or fit.get("dropped"):
            why = f"not fitted: {fit['error']}" if fit.get("error") else f"left out of the flows: {fit['dropped']}"
            coef.add_row(fit["variant"], fit["target"], str(fit["n_obs"]), optimizer, "—", why, "", "", "", "")
            continue
        for c in fit["coefficients"]:
            coef.add_row(fit["variant"], fit["target"], str(fit["n_obs"]), optimizer, c["term"], _fmt(c["estimate"]),
                         _fmt(c["se"]), f"[{_fmt(c['ci_low'])}, {_fmt(c['ci_high'])}]", format_p(c["p"]),
                         format_p(c.get("p_adj")))
    console.print(coef)
    adjusted = "unadjusted" if name == "none" else f"{name}-adjusted"
    flow = Table(title=f"Leakage flows (source human → target model; positive, {adjusted} p < alpha)")
    for col in ("variant", "source", "target", "coef", ci, p_adj, "n"):
        flow.add_column(col)
    for f in summary.get("flows", []):
        flow.add_row(f["variant"], f["source"], f["target"], _fmt(f["estimate"]),
                     f"[{_fmt(f['ci_low'])}, {_fmt(f['ci_high'])}]", _fmt(f["p_adj"]), str(f["n_obs"]))
    console.print(flow if summary.get("flows") else "No significant leakage flow.")
    if summary.get("table3"):
        t3 = Table(title="Table 3 (Cao et al.): the monolingual control's coefficient (beta of Eq. 1), "
                   "estimate [95% CI] (p)")
        wide = table3_wide(pd.DataFrame(summary["table3"]))
        for col in wide.columns:
            t3.add_column(str(col))
        for row in wide.itertuples(index=False):
            t3.add_row(*[str(v) for v in row])
        console.print(t3)
    if summary.get("dropped_fits"):
        left = Table(title="Fits left out of the flows, and why (with statsmodels' warnings)")
        for col in ("variant", "target", "n", "stage", "reason", "warnings"):
            left.add_column(col)
        for d in summary["dropped_fits"]:
            left.add_row(d["variant"], d["target"], str(d["n_obs"]), d["stage"], str(d["reason"]),
                         "\n".join(d["warnings"]) or "–")
        console.print(left)
    warned = [f for f in summary.get("fits", []) if f.get("warnings") and not f.get("error") and not f.get("dropped")]
    for fit in warned:
        console.print(f"warnings of the {fit['variant']} → {fit['target']} fit: {'; '.join(fit['warnings'])}",
                      soft_wrap=True)
    if summary.get("leaked_examples"):
        ex = Table(title="Traits strong in the model, weak for target-language humans, strong for the source's")
        for col in ("variant", "target", "source", "group", "trait", "model rank", "human target", "human source"):
            ex.add_column(col)
        for r in summary["leaked_examples"][:20]:
            ex.add_row(r["variant"], r["target"], r["source"], r["group"], r["trait"], str(r["model_rank"]),
                       _fmt(r["human_target"]), _fmt(r["human_source"]))
        console.print(ex)
    for note in summary.get("notes", []):
        console.print(f"[bold]Note:[/] {note}", soft_wrap=True)


# ---- report --------------------------------------------------------------------------------------------------
METHODS = (
    "Model associations follow Cao et al. (2024). Generative models answer a forced-choice prompt ('You "
    "are writing about {group} ... choose either {A} or {B} as your theme ... or neither'); A and B are traits "
    "on the same side of the ABC scales. In choice mode the score of A in a comparison is its normalised "
    "probability among (A, B, neither); in generate mode it is the share of matched samples naming A (exact, "
    "containment or fuzzy match in the prompt's language; unmatched samples are counted and left out). A "
    "trait's score for a group is the mean over its comparisons. Masked and span-filling models get the "
    "increased log-probability score (ILPS), log p(trait | group template) - log p(trait | neutral template), "
    "averaged over templates; for a masked model each log p is a pseudo-log-likelihood (PLL-ILPS, variants "
    "'[ilps-pll]'), not the sensitivity test (SeT) the paper used for mBERT. The leakage model per model and "
    "target language is a linear mixed model (statsmodels MixedLM, REML) of the model score on the human "
    "scores of the four languages with a random intercept by trait; cells with a missing human score are left "
    "out (complete cases) unless --zero-fill (the paper's code) or --keep-nonshared (non-shared groups' design "
    "gaps set to 0 with missing indicators) is requested. A fit needs 20 complete cells per fixed effect and "
    "5 traits with at least 5 cells each; optimizers are tried in turn (BFGS → L-BFGS → CG, Powell, Nelder-Mead) "
    "and the one that converged is named; fits none converges on, or singular ones, are shown but left out. "
    "Without a monolingual model (--mono) a human coefficient also holds what any monolingual model learns. "
    "The p-values of each model's cross-language human coefficients (source != target) are adjusted together "
    "(Benjamini-Hochberg); a flow is a positive, significant one. Non-English lexicons and prompts are "
    "machine-drafted by an AI assistant and not reviewed by native speakers. Human ratings: Cao et al. 2024, "
    "MIT licence."
)


def answers_models(variants: Sequence[str]) -> dict[str, str]:
    """Each variant ('model [method/mode]') as the answers table names its model: 'model (mode)' where a
    model answered in several modes (as ``report.table_data.model_label`` does), else the model."""
    parts = {v: (v.rsplit(" [", 1)[0], v.rsplit("/", 1)[-1].rstrip("]") if "/" in v else "choice")
             for v in variants if " [" in v}
    modes: dict[str, set[str]] = {}
    for model, mode in parts.values():
        modes.setdefault(model, set()).add(mode)
    return {v: (f"{m} ({mode})" if len(modes[m]) > 1 else m) for v, (m, mode) in parts.items()}


def wide_coefficients(coefficients: pd.DataFrame, alpha: float = ALPHA) -> pd.DataFrame:
    """The leakage model's coefficients with model variants side by side: estimate [95% CI], n, adjusted p."""
    shown = coefficients.assign(
        estimate=[estimate_cell(e, lo, hi, digits=3, signed=True) for e, lo, hi in
                  zip(coefficients["estimate"], coefficients["ci_low"], coefficients["ci_high"], strict=True)],
        p_adj=coefficients["p_adj"].map(lambda p: p_cell(p, alpha)),
        usable=coefficients["usable"].map({True: "yes", False: "no"}),
    ).rename(columns={"target": "language", "variant": "model"})
    return side_by_side(shown, ["language", "term"], {"estimate": "Estimate [95% CI]", "n_obs": "n",
                                                      "p_adj": "adjusted p", "usable": "Usable"})


def report_sections(store: Store) -> list[Section]:
    """The report's leakage section, in the study's design (ours: alpha 0.05 and BH correction; paper: zero
    filled, uncorrected p < 0.05, monolingual controls, Table 3)."""
    analysis = analyse(store, design=study_design(store))
    paper = analysis.settings.get("design") == "paper"
    family = "none: the paper design" if paper else "BH over each model's cross-language terms"
    rule = "uncorrected p < 0.05" if analysis.settings.get("correction") == "none" else "BH-adjusted p < 0.05"
    section = Section(title=TITLE, methods=METHODS)
    cov = coverage(analysis)
    if cov.empty:
        section.add_text("The study holds no leakage answers yet.")
        return [section]
    models = answers_models(analysis.variants)
    section.add_table(cov.drop(columns=["unmatched_reasons"], errors="ignore"), "Coverage per model and language")
    if not analysis.coefficients.empty:
        section.add_table(wide_coefficients(analysis.coefficients),
                          "Leakage model coefficients, model variants side by side: estimate [95% CI], n cells, "
                          f"adjusted p ({family}, * below 0.05; usable: "
                          "converged, not singular). Language: the language the model answered in (the target).",
                          drill=NAME, drill_models=models)
        cols = ["variant", "target", "n_obs", "n_traits", "optimizer", "usable", "term", "estimate", "se", "ci_low",
                "ci_high", "p", "p_adj"]
        section.add_table(analysis.coefficients[cols], "Every statistic of the leakage model coefficients (one "
                          "row per model variant and term; adjusted p: " + family + ")")
    left_out = pd.DataFrame(dropped_fits(analysis))
    if not left_out.empty:
        left_out["warnings"] = ["; ".join(w) for w in left_out["warnings"]]
        section.add_table(left_out, "Fits left out of the flows (not fitted, or not converged / singular)")
    if not analysis.flows.empty:
        section.add_table(analysis.flows, f"Leakage flows (positive, {rule})")
    else:
        section.add_text("No significant positive leakage flow between languages.")
    if paper:
        section.add_text(f"Figure 2 and Table 3 of this fit: the section {CAO_TITLE} below.")
    else:
        section.add_figure(flows_figure(analysis.flows, analysis.subjects),
                           f"Leakage flows: human source → model target ({rule}), one panel per model variant",
                           plot=flows_plot(analysis.flows, analysis.subjects, corrected=True))
    examples = analysis.leaked
    if examples.empty and analysis.variants:
        # Without a significant flow, still show candidates against every other language, labelled as such.
        parts: list[pd.DataFrame] = []
        for variant in analysis.subjects:
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
    for note in notes(analysis):
        section.add_text(note)
    if not analysis.choices.empty and "text" in analysis.choices:
        gen = analysis.choices[analysis.choices["mode"] == "generate"]
        if not gen.empty:
            section.add_table(gen[["lang", "group", "trait_a", "trait_b", "text", "level", "reason"]].head(20),
                              "Generated answers (first 20) and how they matched")
    return [section, paper_section(store, analysis, analyse)]
