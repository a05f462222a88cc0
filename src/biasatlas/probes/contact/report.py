"""The contact probe's report section: tables with n and intervals, a bar chart, a heatmap."""

from __future__ import annotations

from typing import Any

import pandas as pd

from biasatlas.probes.contact import analysis as ca
from biasatlas.probes.contact.data import NAME
from biasatlas.probes.contact.read import outcomes
from biasatlas.probes.contact.report_figures import (  # the static figures (SVG, PDF), named here as before
    MAX_PANELS,
    bar_by_contact,
    heatmap_axis_scenario,
    heatmap_grids,
    probability_by_contact,
)
from biasatlas.report.compare import estimate_cell, side_by_side
from biasatlas.report.html import Section
from biasatlas.report.publish import column_label
from biasatlas.report.table_data import model_label

METHODS = (
    "Each prompt set asks the same question under no contact, positive contact and negative contact "
    "framing (Raj et al., 2024; Ikae et al., 2025 for German and Icelandic). An answer that engages with the group "
    "is unbiased, one that refuses is biased (paper 001, Table 2: reversed for negative actions such as "
    "'avoid'); unparseable answers (refusal, hedge, both options, no answer) are 'none'. In choice mode the "
    "answer is the option with the larger normalised log-probability; in generate mode the text is parsed. "
    "Percentages carry n and Wilson 95% intervals. Pooled over positive and negative actions a yes-sayer "
    "scores 50% biased, so the tables split by action and report acquiescence (the share of affirmative "
    "answers). Adherence to the contact hypothesis is paper 001's (Table 3): the percentage of biased answers "
    "lower under positive and higher under negative contact than under no contact, per scale, axis and group, "
    "with each change versus no contact paired on prompt sets (Newcombe 95% interval). Framing agreement is our "
    "per-prompt measure, not the paper's: a framed answer agrees when it is unbiased under positive contact or "
    "biased under negative contact; it does not compare with no contact. In choice mode the mean P(biased "
    "option) per cell, and its change "
    "toward the framing (moved: at least 0.05), carry t 95% intervals. The contact effect is tested on prompt "
    "sets (samples of a set aggregated first): exact McNemar tests (positive vs none, negative vs none; effect: "
    "the change in the proportion biased with Newcombe's interval) and Cochran's Q on the decisions; in choice "
    "mode a paired t-test on the log-odds of P(biased) and a Wilcoxon signed-rank test; p-values are adjusted "
    "across all tests (Benjamini-Hochberg). Every deviation from the papers: 'Methods in full' below."
)


#: the summary's default level: the report shows the summary's tables
ALPHA = 0.05

ADHERENCE_CAPTION = ("Contact-hypothesis adherence (paper 001 Table 3): % biased [Wilson 95% CI] (n) lower under "
                     "positive and higher under negative contact than under none; change vs none in percentage "
                     "points [Newcombe 95% CI, paired on prompt sets]")


def adherence_display(table: pd.DataFrame) -> pd.DataFrame:
    """One row per cell: n sets, % biased per framing, the two paired changes and the verdicts."""
    keys = [c for c in ("model", "mode", "language", "scale", "axis", "group") if c in table.columns]
    out = table[[*keys, "n_sets"]].copy()
    for framing in ("none", "positive", "negative"):
        out[f"% biased, {framing} contact"] = [
            estimate_cell(p, lo, hi, n) for p, lo, hi, n in zip(
                table[f"biased_{framing}_pct"], table[f"biased_{framing}_ci_low"], table[f"biased_{framing}_ci_high"],
                table[f"n_{framing}"], strict=True)]
    for framing in ("positive", "negative"):
        out[f"change, {framing} − none (points)"] = [
            estimate_cell(c, lo, hi, signed=True) for c, lo, hi in zip(
                table[f"change_{framing}"], table[f"change_{framing}_ci_low"], table[f"change_{framing}_ci_high"],
                strict=True)]
    out["adheres (paper 001)"] = table["adheres"].map({True: "yes", False: "no"}).fillna("–")
    out["adheres, both CIs exclude 0"] = table["adheres_ci"].map({True: "yes", False: "no"}).fillna("–")
    return _by_model(out)


def _levels(table: pd.DataFrame) -> list[str]:
    """The outcome levels of a rate table: those with a %, a Wilson interval and a count."""
    return [c[:-4] for c in table.columns if c.endswith("_pct")
            and {f"{c[:-4]}_ci_low", f"{c[:-4]}_ci_high", f"{c[:-4]}_count"} <= set(table.columns)]


def _rate_label(level: str) -> str:
    return f"{column_label(level)} % [95% CI] (count)"


def _display(table: pd.DataFrame) -> pd.DataFrame:
    """Compact columns: n, then 'pct [low, high] (count)' per outcome level."""
    levels = _levels(table)
    parts = {f"{level}_{s}" for level in levels for s in ("pct", "ci_low", "ci_high", "count")}
    out = table[[c for c in table.columns if c not in parts]].copy()
    for level in levels:
        out[_rate_label(level)] = [
            estimate_cell(p, lo, hi, c)
            for p, lo, hi, c in zip(table[f"{level}_pct"], table[f"{level}_ci_low"],
                                    table[f"{level}_ci_high"], table[f"{level}_count"], strict=True)
        ]
    return _by_model(out)


def _by_model(table: pd.DataFrame) -> pd.DataFrame:
    """The model as the answers table names it ('model (mode)' where a model ran in several modes)."""
    return table.assign(model=model_label(table)) if "mode" in table.columns else table


def wide_rates(table: pd.DataFrame, values: tuple[str, ...] = ("n",)) -> pd.DataFrame:
    """A rate table with models side by side: its cells as rows, per model n and each level's %."""
    shown = _display(table)
    rates = [_rate_label(level) for level in _levels(table)]
    columns = [c for c in values if c in shown.columns] + rates
    rows = [c for c in shown.columns if c not in columns and c != "model"]
    return side_by_side(shown, rows, {c: column_label(c) for c in columns})


def with_flags(tests: pd.DataFrame, out: pd.DataFrame, alpha: float = 0.05,
               quality: list[dict[str, Any]] | None = None) -> pd.DataFrame:
    """``tests`` with each row's ``flags`` and ``flag_notes``, as the statistics rows decide them (the same
    rows as `summary --json` and the export: :func:`biasatlas.tidy.rows.contact_rows`); ``quality``: the
    summary's ``answer_quality`` rows where the caller has them (else computed from ``out``)."""
    from biasatlas.probes.contact.summary import answer_quality, test_flags
    from biasatlas.tidy.rows import contact_rows

    summary: dict[str, Any] = {"tests": ca.records(tests), "analysis": {"alpha": alpha},
                               "answer_quality": quality if quality is not None else ca.records(answer_quality(out))}
    summary["statistics"] = contact_rows(summary)
    found = test_flags(summary)
    return tests.assign(flags=pd.Series([f for f, _ in found], index=tests.index, dtype=object),
                        flag_notes=pd.Series([n for _, n in found], index=tests.index, dtype=object))


def wide_tests(tests: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """The paired tests with models side by side: per model the effect [95% CI], n and adjusted p (*),
    with the row's quality flags beside the p (no * where a flag forbids a finding)."""
    from biasatlas.probes.contact.summary import p_adj_text

    shown = _by_model(tests).rename(columns={"method_kind": "test", "effect_name": "effect_measure"})
    flags = shown["flags"] if "flags" in shown.columns else pd.Series([None] * len(shown), index=shown.index)
    shown = shown.assign(
        effect=[estimate_cell(e, lo, hi, digits=3, signed=True)
                for e, lo, hi in zip(shown["effect"], shown["ci_low"], shown["ci_high"], strict=True)],
        p_adj=[p_adj_text(None if pd.isna(p) else float(p), alpha, None if pd.isna(f) else str(f))
               for p, f in zip(shown["p_adj"], flags, strict=True)],
    )
    rows = [c for c in ("mode", "language", "scale", "comparison", "measure", "test", "effect_measure")
            if c in shown.columns]
    return side_by_side(shown, rows, {"effect": "Effect [95% CI]", "n": "n", "p_adj": "adjusted p ⚑ flags"})


def _unit(table: pd.DataFrame) -> pd.Series:
    """A panel per model (and mode, where a model ran in several)."""
    return model_label(table) if "mode" in table.columns else table["model"].astype(str)


def _framings_in_order(table: pd.DataFrame) -> pd.DataFrame:
    """Rows in the order none, positive, negative (the bars' and the legend's order), a panel per model."""
    order = table["contact"].map({"none": 0, "positive": 1, "negative": 2}).fillna(3)
    return table.assign(unit=_unit(table), _order=order).sort_values("_order", kind="stable")


def bar_plot(table: pd.DataFrame) -> Any:
    """``bar_by_contact`` interactive: one panel per model, bars per language and scale, hover with n."""
    from biasatlas.report.plots import CONTACT_COLORS, interval_figure

    return interval_figure(_framings_in_order(table), category=["language", "scale"], group="contact",
                           panel="unit", estimate="biased_pct", low="biased_ci_low", high="biased_ci_high", n="n",
                           unit="%", colors=CONTACT_COLORS, y_range=(0, 100), x_title="Language · answer scale",
                           y_title="Biased answers (%, Wilson 95% CI)", drill=POINT_FILTER)


#: a click on a bar filters the answers by its model, language, scale and framing
POINT_FILTER = {"unit": "Model", "language": "Language", "scale": "Scale", "contact": "Contact"}


def probability_plot(table: pd.DataFrame) -> Any:
    """``probability_by_contact`` interactive."""
    from biasatlas.report.plots import CONTACT_COLORS, interval_figure

    return interval_figure(_framings_in_order(table), category=["language", "scale"], group="contact",
                           panel="unit", estimate="mean", low="ci_low", high="ci_high",
                           n="n" if "n" in table.columns else None, kind="point", colors=CONTACT_COLORS,
                           x_title="Language · answer scale",
                           y_title="Mean P(biased option) (probability, t 95% CI)", drill=POINT_FILTER)


def heatmap_plot(outcomes_frame: pd.DataFrame, grids: list[Any] | None = None) -> Any:
    """``heatmap_axis_scenario`` interactive: % biased by axis × scenario, n in the hover; beyond
    ``MAX_PANELS`` panels one matrix, a row per model · mode · language."""
    from biasatlas.report.plots import heatmap_figure

    panels = heatmap_grids(outcomes_frame) if grids is None else grids
    matrix = len(panels) == 1 and not panels[0][0]
    return heatmap_figure(panels, x_title="Axis · scenario" if matrix else "Scenario",
                          y_title="Model · mode · language" if matrix else "Identity axis",
                          z_title="Biased answers (%)", zmin=0, zmax=100, digits=2, row_px=18 if matrix else 40)


def _frame(summary: dict[str, Any], key: str, compute: Any) -> pd.DataFrame:
    """The summary's table ``key`` as a frame (its records give the same frame back); computed where the
    summary's is empty (an empty list keeps no columns)."""
    records = summary.get(key)
    return pd.DataFrame(records) if records else compute()


def sections(store: Any) -> list[Section]:
    """The probe's sections; their tables are the summary's (the report's headline computed it: not again)."""
    from biasatlas.probes.contact.summary import summarise
    from biasatlas.report.cache import probe_summary

    out = outcomes(store.frame(probe=NAME), store)
    section = Section("Contact-hypothesis probe", methods=METHODS)
    if out.empty:
        section.add_text("No scored answers yet.")
        return [section]
    summary = probe_summary(NAME, lambda: summarise(store))
    names = ("by_contact", "by_contact_action", "by_group", "by_scenario", "by_principle")
    tables = {name: _frame(summary, name, lambda name=name: ca.all_tables(out)[name]) for name in names}
    from biasatlas.probes.contact.disparity import FAMILY
    from biasatlas.probes.contact.disparity import METHODS as DISPARITY_METHODS
    from biasatlas.report.disparity_block import add_disparity
    from biasatlas.tidy.disparity import disparity_rows

    # which group of an axis is treated worse: first (the summary's rows, as disparity.add_to_section's)
    add_disparity(section, disparity_rows(NAME, summary.get("group_disparity") or [], ALPHA, FAMILY), "axis",
                  DISPARITY_METHODS, drill=NAME)
    section.add_figure(lambda: bar_by_contact(tables["by_contact"]), "Biased answers by contact framing",
                       plot=bar_plot(tables["by_contact"]), drill=NAME)
    section.add_table(wide_rates(tables["by_contact"]), "By contact framing, models side by side: % of answers "
                      "[Wilson 95% CI] (count) per decision (paper 001 Table 3)", drill=NAME)
    for key, by, where in (("adherence", [], ""), ("adherence_by_axis", ["axis"], " by axis"),
                           ("adherence_by_group", ["axis", "group"], " by group")):
        adherence = _frame(summary, key, lambda by=by: ca.adherence_table(out, by))
        if not adherence.empty:
            section.add_table(adherence_display(adherence), f"{ADHERENCE_CAPTION}{where}", drill=NAME)
    probabilities = _frame(summary, "p_biased", lambda: ca.probability_table(out, ["scale", "contact"]))
    if not probabilities.empty:
        section.add_figure(lambda: probability_by_contact(probabilities),
                           "Mean P(biased option) by contact framing (choice mode)",
                           plot=probability_plot(probabilities), drill=NAME)
    if out["action"].nunique() > 1:
        section.add_table(wide_rates(tables["by_contact_action"]), "By scale × contact × action (action "
                          "polarity), models side by side", drill=NAME)
    for title, table, extra in (
        ("Acquiescence: % affirmative answers (yes-saying)",
         _frame(summary, "acquiescence", lambda: ca.acquiescence_table(out)), ("n",)),
        ("Framing agreement (our per-prompt measure, not in paper 001): % of framed answers whose decision "
         "agrees with the framing, no comparison with no contact",
         _frame(summary, "framing_agreement", lambda: ca.framing_agreement_table(out)), ("n", "unscored")),
        ("Did the decision move toward the contact framing (vs no contact)?",
         _frame(summary, "direction", lambda: ca.direction_table(out)), ("n",)),
    ):
        if not table.empty:
            section.add_table(wide_rates(table, extra), f"{title}, models side by side", drill=NAME)
    for title, table in (
        ("Mean P(biased option) per cell, choice mode (t 95% CI over prompts; Wilson's where t leaves 0-1)",
         _frame(summary, "p_biased_by_action", lambda: ca.probability_table(out, ["scale", "contact", "action"]))),
        ("Change in P(unbiased) toward the framing vs no contact (t 95% CI over prompt sets)",
         _frame(summary, "direction_probability", lambda: ca.probability_direction_table(out))),
    ):
        if not table.empty:
            section.add_table(_by_model(table), title, drill=NAME)  # the CSV copy keeps every digit
    tests = _frame(summary, "tests", lambda: ca.contact_tests(out))
    if not tests.empty:
        tests = with_flags(tests, out, quality=summary.get("answer_quality"))
        section.add_table(wide_tests(tests),
                          "Paired tests of the contact effect on prompt sets, models side by side (decisions: "
                          "McNemar exact with Newcombe CI, Cochran's Q; P(biased): paired t on log-odds, "
                          "Wilcoxon; BH-adjusted, * adjusted p < 0.05; ⚑ quality flags, never a * on a row "
                          "flagged not_tested or too_few_units)", drill=NAME)
        # every digit: the page shows p in the one p format (report.cells.format_p), the CSV copy keeps them all
        section.add_table(_by_model(tests).rename(columns={"effect_name": "effect_measure"}),
                          "Every statistic of the paired tests (one row per model and test, with its quality "
                          "flags)", drill=NAME)
    grids = heatmap_grids(out)
    many = len(grids) == 1 and not grids[0][0]
    section.add_figure(lambda: heatmap_axis_scenario(out, grids), "Axis × scenario (Raj et al., 2024, Figure 3), "
                       + (f"one matrix, a row per model and language (more than {MAX_PANELS} panels)" if many
                          else "one panel per model and language"), plot=heatmap_plot(out, grids))
    section.add_table(_display(tables["by_group"]), "By group, per model and axis (ours; Ikae et al.'s Tables 5-8 "
                      "pool the models: below)", drill=NAME)
    section.add_table(_display(tables["by_scenario"]), "By scenario, per model and axis (ours; Ikae et al.'s "
                      "Tables 9-12 pool the models: below)", drill=NAME)
    from biasatlas.probes.contact.paper_tables import add_to_section as as_in_ikae

    as_in_ikae(section, out)  # Tables 1-12 in the paper's own layout
    section.add_table(_display(tables["by_principle"]), "By key principle × contact", drill=NAME)
    reasons = _frame(summary, "none_reasons", lambda: ca.reasons_table(out))
    if not reasons.empty:
        section.add_table(_by_model(reasons), "Unscored answers by reason", drill=NAME)
    examples = out.groupby("decision", group_keys=False).head(4)[
        ["model", "mode", "language", "contact", "group", "decision", "reason", "text"]
    ]
    section.add_table(_by_model(examples), "Example answers per decision (model text, escaped)")
    from biasatlas.probes.contact.report_languages import section as across_languages
    from biasatlas.report.reading_failures import section as reading_failures

    across = across_languages(out, ALPHA, block=summary.get("across_languages"))
    failures = reading_failures(out, NAME, "Contact-hypothesis probe")
    return [s for s in (section, across, failures) if s is not None]
