"""Samaritan output: rich tables for `biasatlas summary`, HTML sections and figures for the report."""

from __future__ import annotations

from typing import Any

import pandas as pd
from rich.table import Table

from biasatlas.probes.samaritan.analysis import UNREADABLE_WARNING
from biasatlas.probes.samaritan.data import NAME, TITLE
from biasatlas.probes.samaritan.paper_figures import significance_figure
from biasatlas.probes.samaritan.plan import DECODING_NOTE
from biasatlas.probes.samaritan.read import load_outcomes
from biasatlas.probes.samaritan.summary import analyse, analysis_settings, blocked, verdict_text
from biasatlas.report.cells import format_p
from biasatlas.report.compare import estimate_cell, p_cell, side_by_side
from biasatlas.report.html import Section
from biasatlas.report.plots import lay_out
from biasatlas.store import Store


def _f(value: Any, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _p(value: Any) -> str:
    return format_p(value)


def _unit_label(row: dict[str, Any]) -> str:
    return f"{row['model']} · {row['language']} · T={row['temperature']:g} · {row['max_tokens']} tokens"


def _yes(value: Any) -> str:
    return {True: "yes", False: "no"}.get(value, "–")


def rule_lines(settings: dict[str, Any]) -> list[str]:
    """The tests, both significance rules, the equivalence margin and the decoding, one line each."""
    return [
        f"{settings.get('test')}; CI {int(100 * settings.get('ci_level', 0.95))}% of the mean difference",
        f"paper rule: {settings.get('paper_rule')}",
        f"corrected: {settings.get('corrected_rule')}",
        f"equivalence margin ±{settings.get('equivalence_margin', 0):g} rating points: {settings.get('equivalence')}",
        f"decoding: {settings.get('decoding')}",
    ]


def print_summary(summary: dict[str, Any], console: Any) -> None:
    """Rules, then one table per model unit and category, default personas, repeatability, warnings."""
    settings = summary.get("settings", {})
    groups = summary.get("groups", [])
    for line in summary.get("warnings", []):
        console.print(f"[yellow]warning:[/] {line}")
    if not groups:
        console.print(f"No analysable Samaritan answers yet ({summary.get('n_rows', 0)} rows stored).")
        return
    for line in rule_lines(settings):
        console.print(line)
    controls: dict[str, dict[str, Any]] = {_unit_label(c): c for c in summary.get("controls", [])}
    frame = pd.DataFrame(groups)
    correction = settings.get("correction")
    for (unit, category), cell in frame.groupby([frame.apply(_unit_label, axis=1), "category"], sort=False):
        control = controls.get(str(unit), {})
        table = Table(
            title=f"{unit} · {category} · control rating {_f(control.get('rating'))} "
            f"(n = {control.get('n_scenarios', 0)} scenarios, brittleness {_f(control.get('brittleness'))})",
            title_justify="left",
        )
        for col in ("group", "rating", "bias [95% CI]", "p", "paper rule", f"p adj ({correction})", "sig",
                    "TOST p adj", "verdict", "⚑ flags", "d_z", "Wilcoxon p", "brittle", "n", "cells unpaired",
                    "unreadable"):
            table.add_column(col, justify="left" if col in ("group", "verdict") else "right",
                             no_wrap=col == "group")
        for row in cell.to_dict(orient="records"):
            flags = row.get("flags") if isinstance(row.get("flags"), str) else None
            no_finding = blocked(flags)  # too few scenarios or no test: no verdict, no "yes", no interval
            table.add_row(
                str(row["group"]),
                _f(row["rating"]),
                f"{_f(row['bias'])} (no interval shown)" if no_finding else
                f"{_f(row['bias'])} [{_f(row['ci_low'])}, {_f(row['ci_high'])}]",
                _p(row["p"]),
                "⚑" if no_finding else _yes(row.get("significant_paper")),
                _p(row["p_adj"]),
                "⚑" if no_finding else _yes(row.get("significant")),
                _p(row.get("tost_p_adj")),
                verdict_text({**{str(k): v for k, v in row.items()}, "flags": flags}),
                f"⚑ {flags}" if flags else "",
                _f(row["d_z"]),
                _p(row["wilcoxon_p"]),
                _f(row.get("brittleness")),
                str(row["n"]),
                str(row.get("n_cells_unpaired", 0)),
                f"{row.get('n_unparseable', 0)}/{row.get('n_answered', 0)}",
            )
        console.print(table)
        for row in cell.to_dict(orient="records"):
            if isinstance(row.get("flag_notes"), str):
                console.print(f"⚑ {row['group']}: {row['flag_notes']}", markup=False)
    for persona in summary.get("default_persona", []):
        parts = [f"{', '.join(persona['default_groups']) or 'none'} (equivalent to the control)"]
        for key, label in (("differing_groups", "differ"), ("undetermined_groups", "undetermined"),
                           ("untested_groups", "untested (fewer than 2 paired scenarios)"),
                           ("flagged_groups", "⚑ not a finding (flagged: see the table's flags)")):
            if persona.get(key):
                parts.append(f"{label}: {', '.join(persona[key])}")
        parts.append(f"paper's rule (not significant): {', '.join(persona.get('paper_reading', [])) or 'none'}")
        console.print(f"default persona · {_unit_label(persona)} · {persona['category']}: " + "; ".join(parts))
    repeat = summary.get("repeatability", [])
    if repeat:
        table = Table(title="Repeatability: sample 0 vs sample 1", title_justify="left")
        for col in ("unit", "category", "group", "run 0", "run 1", "difference", "p adj", "n"):
            table.add_column(col)
        for row in repeat:
            table.add_row(_unit_label(row), row["category"], row["group"], _f(row["rating_a"]),
                          _f(row["rating_b"]), _f(row["difference"]), _p(row["p_adj"]), str(row["n"]))
        console.print(table)
    bad = [r for r in summary.get("unparseable", []) if r["n_unparseable"]]
    if bad:
        total = sum(r["n_unparseable"] for r in bad)
        answered = sum(r["n_answered"] for r in summary["unparseable"])
        reasons: dict[str, int] = {}
        for r in bad:
            for k, v in r["reasons"].items():
                reasons[k] = reasons.get(k, 0) + v
        console.print(f"unparseable ratings: {total} of {answered} answers ({reasons}); kept, not dropped")
    from biasatlas.probes.samaritan.report_languages import print_across_languages
    from biasatlas.report.reading_failures import print_failures

    print_across_languages(summary, console)
    print_failures(summary, "samaritan", console)


# ---- figures ----------------------------------------------------------------------------------
def forest_figure(groups: pd.DataFrame) -> Any:
    """Bias with its 95% CI per group, one panel per model unit, significant groups filled."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    units = list(dict.fromkeys(groups.apply(_unit_label, axis=1)))
    fig, axes = plt.subplots(1, len(units), figsize=(6 * len(units), 0.35 * len(groups) / len(units) + 1.5),
                             squeeze=False)
    labels = groups.apply(_unit_label, axis=1)
    for ax, unit in zip(axes[0], units, strict=True):
        cell = groups[labels == unit].reset_index(drop=True)
        y = range(len(cell))
        lows = (cell["bias"] - cell["ci_low"]).clip(lower=0).fillna(0)
        highs = (cell["ci_high"] - cell["bias"]).clip(lower=0).fillna(0)
        ax.errorbar(cell["bias"], list(y), xerr=[lows, highs], fmt="none", ecolor="grey")
        flags = cell["flags"] if "flags" in cell.columns else pd.Series([None] * len(cell))
        # a flagged test (too few scenarios, not tested) is drawn hollow: never a filled "significant" dot
        sig = cell["significant"].map(lambda v: v is True) & ~flags.map(blocked)
        ax.scatter(cell["bias"][sig], [i for i in y if sig[i]], color="black", zorder=3, label="significant")
        ax.scatter(cell["bias"][~sig], [i for i in y if not sig[i]], facecolor="white", edgecolor="black",
                   zorder=3, label="not significant")
        ax.set_yticks(list(y), [f"{c}: {g}" for c, g in zip(cell["category"], cell["group"], strict=True)])
        ax.axvline(0, color="grey", lw=0.8)
        ax.set_xlabel("bias score (rating − control) with 95% CI")
        ax.set_title(unit, fontsize=9)
        ax.legend(fontsize=7, loc="best")
    lay_out(fig)
    return fig


def forest_plot(groups: pd.DataFrame) -> Any:
    """``forest_figure`` interactive: bias [95% CI] per group, one panel per model unit, hover with n and p."""
    from biasatlas.report.plots import interval_figure, untested_group

    tested = groups["significant"].map({True: "significant (adjusted)", False: "not significant"}).fillna("not tested")
    if "flags" in groups.columns:  # a flagged test is drawn like an untested one, its flags in the legend and hover
        tested = tested.where(~groups["flags"].map(blocked), "not a finding (⚑ " + groups["flags"].astype(str) + ")")
    shown = groups.assign(unit=groups.apply(_unit_label, axis=1), tested=tested)
    untested = shown["tested"].map(untested_group)
    shown.loc[untested, ["ci_low", "ci_high"]] = float("nan")  # an interval that is not a finding is not drawn
    return interval_figure(shown, category=["category", "group"], group="tested", panel="unit", estimate="bias",
                           low="ci_low", high="ci_high", n="n" if "n" in shown.columns else None,
                           p="p" if "p" in shown.columns else None, horizontal=True,
                           colors={"significant (adjusted)": "#111111", "not significant": "#999999",
                                   "not tested": "#cccccc"},
                           x_title="Bias score (rating points, group − control, 95% CI)", y_title="Category · group")


def significance_plot(figure_rows: pd.DataFrame) -> Any:
    """``significance_figure`` interactive: one panel per category, hover with the group's numbers."""
    import html

    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    categories = list(dict.fromkeys(figure_rows["category"]))
    fig = make_subplots(rows=1, cols=len(categories), subplot_titles=[html.escape(str(c)) for c in categories])
    for col, category in enumerate(categories, 1):
        cell = figure_rows[figure_rows["category"] == category]
        names = [html.escape(str(g)) for g in cell["group"]]
        hover = [f"<b>{g}</b><br>mean bias: {b:.3g} rating points<br>share significant: {s:.0%}<br>"
                 f"n units: {n}" for g, b, s, n in zip(names, cell["mean_bias"], cell["share_significant"],
                                                      cell["n_units"], strict=True)]
        fig.add_trace(go.Scatter(x=cell["mean_bias"].tolist(), y=cell["share_significant"].tolist(), text=names,
                                 mode="markers+text", textposition="top center", hovertext=hover,
                                 hoverinfo="text", showlegend=False), row=1, col=col)
    fig.update_xaxes(title_text="Bias score (rating points, group − control), mean over units")
    fig.update_yaxes(range=[-0.05, 1.05])
    fig.update_yaxes(title_text="Share of units significantly different (0–1)", row=1, col=1)
    fig.update_layout(template="plotly_white", height=420, margin={"l": 10, "r": 10, "t": 50, "b": 10})
    return fig


# ---- HTML -------------------------------------------------------------------------------------
GROUP_COLUMNS = {
    "model": "model", "language": "language", "temperature": "T", "max_tokens": "tokens", "category": "category",
    "group": "group",
    "rating": "rating", "control_rating": "control", "bias": "bias", "ci_low": "CI low", "ci_high": "CI high",
    "p": "p (t; sign test without spread)", "test": "difference test",
    "significant_paper": "paper rule (p < 0.01)", "p_adj": "p adj (category)",
    "significant": "significant (adj)", "tost_p_adj": "TOST p adj", "verdict": "verdict", "d_z": "Cohen's dz",
    "wilcoxon_p": "p (Wilcoxon)", "wilcoxon_p_adj": "p adj (Wilcoxon)", "brittleness": "brittleness",
    "n": "n scenarios", "n_cells": "paired phrasing cells", "n_cells_unpaired": "unpaired phrasing cells",
    "n_scenarios_incomplete": "scenarios left out (a phrasing unread)",
    "brittleness_incomplete": "rephrasing sets left out of brittleness",
    "n_unparseable": "unparseable", "n_answered": "answers", "flags": "⚑ flags", "flag_notes": "⚑ why",
}


def with_flags(tables: dict[str, pd.DataFrame], settings: dict[str, Any]) -> dict[str, pd.DataFrame]:
    """``groups`` with each group's ``flags`` and ``flag_notes`` and ``default_persona`` without the flagged
    groups in its verdict lists, as `summary` has them (the statistics rows decide the flags once)."""
    from biasatlas.probes.samaritan.summary import records
    from biasatlas.probes.samaritan.summary import with_flags as annotate
    from biasatlas.tidy.rows import samaritan_rows

    groups, persona = tables["groups"], tables["default_persona"]
    if groups.empty:
        return tables
    summary: dict[str, Any] = {"settings": settings, "groups": records(groups), "default_persona": records(persona)}
    summary["statistics"] = samaritan_rows(summary)
    annotate(summary)
    shown = groups.assign(flags=[g["flags"] for g in summary["groups"]],
                          flag_notes=[g["flag_notes"] for g in summary["groups"]])
    shown["verdict"] = [verdict_text(g) for g in summary["groups"]]
    from biasatlas.probes.samaritan.summary import findings_frequency

    return {**tables, "groups": shown, "significance_frequency": findings_frequency(shown),
            "default_persona": pd.DataFrame(summary["default_persona"]) if not persona.empty else persona}


def _flagged_p(p: Any, alpha: float, flags: Any) -> str:
    """The adjusted p with * below alpha, its flags beside it; no * where the flags forbid a finding."""
    text = p_cell(p, alpha) if not blocked(flags) else _p(p)
    return f"{text} ⚑ {flags}" if isinstance(flags, str) and flags else text


def wide_groups(groups: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """Each group's rating and bias with models side by side: rating, bias [95% CI] (n), adjusted p (*) and
    its flags (no interval and no * where they forbid a finding)."""
    flags = groups["flags"] if "flags" in groups.columns else pd.Series([None] * len(groups), index=groups.index)
    shown = groups.assign(
        bias=[estimate_cell(b, None if blocked(f) else lo, None if blocked(f) else hi, n, signed=True)
              for b, lo, hi, n, f in zip(groups["bias"], groups["ci_low"], groups["ci_high"], groups["n"], flags,
                                         strict=True)],
        rating=groups["rating"],
        p_adj=[_flagged_p(p, alpha, f) for p, f in zip(groups["p_adj"], flags, strict=True)],
    )
    rows = ["language", "temperature", "max_tokens", "category", "group"]
    return side_by_side(shown, rows, {"rating": "Rating", "bias": "Bias [95% CI] (n scenarios)",
                                      "p_adj": "adjusted p ⚑ flags"})


def _examples(frame: pd.DataFrame, limit: int = 12) -> pd.DataFrame:
    bad = frame[(frame["status"] == "answered") & frame["rating"].isna()]
    if bad.empty:
        return bad
    sample = bad.groupby("parse_reason", group_keys=False).head(3).head(limit)
    return sample[["model", "category", "group", "scenario", "rephrasing", "parse_reason", "text"]]


def report_sections(store: Store) -> list[Section]:
    """Tables (ratings, bias, tests, brittleness, default persona, repeatability, unparseable) and
    the paper's Figure 1."""
    settings = analysis_settings(store)
    frame = load_outcomes(store)
    section = Section(title=TITLE)
    if frame.empty:
        section.add_text("No Samaritan answers are stored in this study.")
        return [section]
    tables = with_flags(analyse(frame, settings["alpha"], settings["correction"], settings["equivalence_margin"]),
                        settings)
    bad = tables["unparseable"].copy()
    if not bad.empty and "unreadable_warning" in bad.columns:
        # one line and a Flag column, not a warning line per model × group (issue 28)
        flagged = int(bad["unreadable_warning"].astype(bool).sum())
        if flagged:
            section.add_text(f"{flagged} of {len(bad)} group cells have more than {100 * UNREADABLE_WARNING:.0f}% "
                             "of their answers unreadable: their numbers describe the readable answers only "
                             "(the Flag column of 'Answers per group' below).")
        bad.insert(0, "flag", bad["unreadable_warning"].map(
            lambda v: f"over {100 * UNREADABLE_WARNING:.0f}% unreadable" if v else ""))
        bad = bad.drop(columns=["unreadable_warning"])
    groups = tables["groups"]
    if groups.empty:
        section.add_text(f"{len(frame)} Samaritan rows are stored, but none can be analysed yet "
                         "(no parseable group/control pair).")
    else:
        section.add_table(wide_groups(groups, settings["alpha"]), caption="Helpfulness rating (Fagan et al., 2025, "
                          "eq. 1) per "
                          "group and bias score vs the control with models side by side: bias [95% CI] (n "
                          f"scenarios), {settings['correction']}-adjusted p within one category (* below alpha = "
                          f"{settings['alpha']}).", drill=NAME)
        shown = groups[[c for c in GROUP_COLUMNS if c in groups.columns]].rename(columns=GROUP_COLUMNS)
        section.add_table(shown, caption="Every statistic per model and group: helpfulness rating and bias score "
                          "vs the control over the scenario × rephrasing cells readable for both; paired t-test "
                          "over scenarios. Paper rule: p < 0.01 uncorrected. Corrected: "
                          f"{settings['correction']}-adjusted within one category, significant at alpha = "
                          f"{settings['alpha']}. Verdict from TOST with margin ± "
                          f"{settings['equivalence_margin']:g} rating points.", drill=NAME)
        if not tables["significance_frequency"].empty:
            section.add_figure(significance_figure(tables["significance_frequency"]),
                               plot=significance_plot(tables["significance_frequency"]),
                               caption="Like Fagan et al., 2025, Figure 1: bias score against how often the group "
                               "differs significantly from the control (share of model × language units).")
        else:
            section.add_text("No group has the two paired scenarios a test needs: no significance figure.")
        section.add_figure(forest_figure(groups), caption="Bias score with 95% CI per group and model.",
                           plot=forest_plot(groups))
    section.add_table(tables["controls"], caption="Control (a person with no demographic information).",
                      drill=NAME)
    if not tables["default_persona"].empty:
        persona = tables["default_persona"].copy()
        for col in ("default_groups", "differing_groups", "undetermined_groups", "untested_groups",
                    "flagged_groups", "paper_reading"):
            if col in persona.columns:
                persona[col] = persona[col].map(", ".join)
        section.add_table(persona, caption="Default persona: groups shown equivalent to the control (TOST, "
                          f"margin ± {settings['equivalence_margin']:g} points), per model and category; "
                          "undetermined groups are neither equivalent nor significantly different; flagged "
                          "groups (too few scenarios, not tested) are not a finding either way. "
                          "Paper reading: the paper's rule (not significant at 0.01), for comparison.", drill=NAME)
    section.add_table(tables["phrasings"], caption="Rating and bias per phrasing (descriptive).", drill=NAME)
    if not tables["repeatability"].empty:
        section.add_table(tables["repeatability"], caption="Repeatability: sample 0 vs sample 1 of the same "
                          "prompts (different sampling seeds), paired t-test over scenarios.")
    bad["reasons"] = bad["reasons"].map(lambda d: ", ".join(f"{k}: {v}" for k, v in d.items()))
    section.add_table(bad, caption="Answers per group: parsed, unparseable (kept, with reasons), pending, "
                      "failed.", drill=NAME)
    examples = _examples(frame)
    if not examples.empty:
        section.add_table(examples, caption="Examples of unparseable answers (model text, escaped).")
    section.methods = (
        "Each of 103 scenarios is asked in 4 rephrasings with the control ('a person') and with every "
        "phrasing of every group (Fagan et al., 2025, Table 4); the model gives the probability (1-100) that the "
        "person "
        "helps. Ratings are read from the text (percentages, 'N/100', ranges as midpoints, number words; "
        "the scale's own numbers ignored). Rating per group = mean over scenarios of the mean over "
        "rephrasings (phrasings and samples pooled per cell); group and control are compared over the "
        "scenario × rephrasing cells readable for both. Bias = group rating − control rating; paired "
        "t-test over scenario means with 95% CI of the mean difference and Cohen's d_z, Wilcoxon "
        "signed-rank alongside. Shown under the paper's rule (alpha 0.01, uncorrected) and "
        f"{settings['correction']}-adjusted within one category of one model (alpha = {settings['alpha']}). "
        "A group is the default persona only when a TOST shows it within ± "
        f"{settings['equivalence_margin']:g} rating points of the control. Brittleness = SD over the 4 "
        "rephrasings of a scenario (per phrasing and sample), averaged over scenarios. Repeatability "
        "compares sample 0 with sample 1. Unparseable answers are counted per group and never silently "
        "dropped; a group above 20% unreadable is flagged. " + DECODING_NOTE + "."
    )
    from biasatlas.probes.samaritan.paper_tables import add_to_section as as_in_fagan
    from biasatlas.probes.samaritan.report_languages import section as across_languages

    as_in_fagan(section, frame)
    from biasatlas.report.reading_failures import section as reading_failures

    across = across_languages(frame, settings["alpha"])
    failures = reading_failures(frame, "samaritan", "Samaritan probe")
    return [s for s in (section, across, failures) if s is not None]
