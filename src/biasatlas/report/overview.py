"""The report's first section: a model x probe x language grid of headline measures and validity."""

from __future__ import annotations

import html
import math
from typing import Any

import pandas as pd

from biasatlas.report.flags import answer_notes, row_notes
from biasatlas.report.html import Section, escape
from biasatlas.report.plots import UNTESTED_MARKER
from biasatlas.report.publish import readable_columns
from biasatlas.report.table_data import display_text, short_models

METHODS = (
    "One cell per model and language of each probe. The headline is an effect against the probe's own "
    "reference with its 95% interval: contact, the change in the percentage of biased answers from no "
    "contact to positive contact on the same prompt sets (exact McNemar test, Newcombe interval; where prompt "
    "sets share one no-contact answer, as in the nine MMHB languages, an exact permutation test within questions "
    "with a question-level interval; Raj et al. 2024); samaritan, "
    "the group whose ratings are furthest from the no-demographic control over the same scenario cells "
    "(paired t-test over scenarios; Fagan et al. 2025), with how many groups differ. The adjusted p is the "
    "probe's own (its correction family: contact BH over every contact test, samaritan Holm "
    "within a category), the same as in its section, `summary --json` and the export; * marks adjusted p < "
    "the probe's alpha (contact 0.05, samaritan 0.01). A cell without * is not evidence of no difference. "
    "⚑ marks a quality flag (hover over it for its text): too few units for the test (no interval is shown "
    "then), one option answered >= 90% of the time (decisions cannot move: the change in P(biased) is shown "
    "where choice mode has it), "
    "more than 20% unreadable or refused, not tested (with the reason). "
    "Probes without a headline here (stories, leakage, debias) are summarised "
    "in their own sections. Group disparity, a line of its own in each contact and samaritan cell: which group "
    "of an axis (contact) or category (samaritan) is treated worse than the other groups of it, over the same "
    "questions (contact: exact conditional test within questions, all framings pooled; samaritan: paired t over "
    "scenarios), Holm over the groups: the most disfavoured group that differs, or that none does with the "
    "largest gap and the smallest gap detectable at this size (MDE). "
    "Click a cell to see the answers behind it. Validity: readable answers (n and %) "
    "and refusals per cell; the rates describe the readable answers only."
)


def _fmt(value: float) -> str:
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:+.1f}"


def _cell(probe: str, model: str, language: str, text: str, title: str) -> str:
    return (
        f"<td class='drill' data-probe='{escape(probe)}' data-model='{escape(model)}' "
        f"data-language='{escape(language)}' title='{escape(title)}'>{text}</td>"
    )


def grid_html(headlines: dict[str, pd.DataFrame], validity: dict[str, pd.DataFrame], titles: dict[str, str]) -> str:
    """The overview grid: rows models, columns probe x language; every value escaped."""
    columns: list[tuple[str, str]] = []
    models: set[str] = set()
    for probe, table in validity.items():
        if table.empty:
            continue
        for language in sorted(table["language"].astype(str).unique()):
            columns.append((probe, language))
        models.update(table["model"].astype(str))
    for table in headlines.values():
        if not table.empty:
            models.update(table["model"].astype(str))
    # a model asked in several modes has one headline row per mode, "model (mode)"
    models -= {m.rsplit(" (", 1)[0] for m in models if m.endswith(")") and " (" in m}
    if not columns:
        return ""
    head = "".join(f"<th>{escape(titles.get(p, p))}<br>{escape(lang)}</th>" for p, lang in columns)
    body = []
    for model in sorted(models):
        cells = [f"<td>{escape(model)}</td>"]
        for probe, language in columns:
            cells.append(_grid_cell(probe, model, language, headlines.get(probe), validity[probe]))
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        "<div class='table'><p class='caption'>Headline effect [95% CI] (* adjusted p &lt; the probe's alpha; "
        "⚑ quality flag, hover for its text) · readable answers · refusals, per model, probe and language. "
        "Hover for the test, n and p; click for the answers.</p>"
        "<table class='overview data display compact'><thead><tr><th>Model</th>"
        f"{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
    )


#: flags under which a headline's interval is not a finding (stats.quality.Quality.blocks_interval)
BLOCKING = ("not_tested", "too_few_units", "not_fitted", "not_converged")

#: why a cell of a probe with a headline has none (the grid never shows a blank without its reason)
NO_HEADLINE = {
    "contact": "no headline: no prompt set was read under both no contact and positive contact",
    "samaritan": "no headline: no group was paired with the control on any scenario",
}


def _flag_icons(notes: list[str]) -> str:
    """One ⚑ per flag, its text on hover (escaped into the title attribute)."""
    return "".join(f" <span class='flag' title='{escape(note)}'>⚑</span>" for note in notes)


def _headline_lines(row: pd.Series, several: bool) -> tuple[list[str], str]:
    """The visible line of one headline row (one estimate [CI] with its mark; escaped HTML, flags not
    included) and its hover text (the test, n, p, what else the row says); no interval where a flag forbids one."""
    flags = _note(row.get("flags"))
    if isinstance(row.get("text"), str):  # the group-disparity headline: its sentence says it all
        return ([escape(str(row["text"]))], f"{row['measure']}; {row['test']}; n {row['n']} questions; p "
                f"{_p(row['p'])}; adjusted p (holm over the groups of the family) {_p(row['p_adj'])}")
    prefix = f"{row['scale']}: " if several and row.get("scale") else ""
    mark = "<span class='sig'>*</span>" if bool(row["significant"]) else ""
    if any(code in flags for code in BLOCKING):
        # an interval on too few units is not a finding
        line = escape(f"{prefix}{_fmt(row['estimate'])} (no interval shown)")
    else:
        line = escape(f"{prefix}{_fmt(row['estimate'])} [{_fmt(row['ci_low'])}, {_fmt(row['ci_high'])}]") + mark
    more = []
    if isinstance(row.get("probability_effect"), str):
        more.append(str(row["probability_effect"]))
    if not bool(row["significant"]) and not _missing(row.get("p")):
        more.append(_not_significant(row))
    title = "; ".join([f"{row['measure']}; {row['test']}; n {row['n']}; p {_p(row['p'])}; adjusted p "
                       f"({row.get('correction')}; family {row.get('family')}) {_p(row['p_adj'])}; "
                       f"seed {row.get('seed')}, samples {row.get('samples')} (aggregated per unit)", *more])
    return [line], title


def _not_significant(row: pd.Series) -> str:
    """'Not significant' is never shown alone: with the smallest effect the test could have detected."""
    mde = row.get("mde")
    if not _missing(mde):
        return f"not significant; smallest effect detectable at 80% power: ±{abs(float(str(mde))):.1f}"
    why = _note(row.get("mde_note"))
    return f"not significant; no detectable effect to state: {why}" if why else "not significant"


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _note(value: object) -> str:
    """A text cell of a headline row, "" where it has none (a missing value is never shown as "nan")."""
    return "" if _missing(value) else str(value)


def _p(value: object) -> str:
    """A p-value for hover text: the one p format (3 significant digits, a floor, – where none)."""
    from biasatlas.report.cells import format_p

    return format_p(value)


def _grid_cell(probe: str, model: str, language: str, heads: pd.DataFrame | None, validity: pd.DataFrame) -> str:
    """One cell: each headline's estimate [CI] and mark with its ⚑ flags, then one line on its answers; the
    test, p and the rest on hover. Every flag the cell shows is one the validity section counts (report.flags)."""
    base = model.rsplit(" (", 1)[0] if model.endswith(")") else model
    v = validity[validity["model"].astype(str).isin([model, base]) & (validity["language"].astype(str) == language)]
    vrow = v.iloc[0] if not v.empty else None
    lines, title, shown = [], [], []
    if heads is not None and not heads.empty:
        h = heads[(heads["model"].astype(str) == model) & (heads["language"].astype(str) == language)]
        for _, row in h.iterrows():
            visible, hover = _headline_lines(row, len(h) > 1)
            notes = [n for n in row_notes(row) if n not in shown]
            shown += notes
            lines += [visible[0] + _flag_icons(notes), *visible[1:]]
            title.append(hover)
    if not title and vrow is not None:
        lines.append(escape(NO_HEADLINE.get(probe, "no headline measure for this probe: see its section")))
    if vrow is not None:  # the cell's own answers: unreadable or refused above 20% (stats.quality)
        notes = [n for n in answer_notes(vrow) if n not in shown]
        pct = vrow.get("readable_pct")
        readable = "–" if pct is None or pct != pct else f"{pct:.0f}%"
        answers = (f"readable {readable} of {int(vrow['answers'])} · refusals {int(vrow.get('refusals', 0))}")
        lines.append(f"<span class='answers-line'>{escape(answers)}</span>{_flag_icons(notes)}")
    if not lines:
        return "<td>not asked: no answers from this model in this language</td>"
    return _cell(probe, model, language, "<br>".join(lines), "; ".join(title) or "validity of the answers")


def overview_section(headlines: dict[str, pd.DataFrame], validity: dict[str, pd.DataFrame],
                     titles: dict[str, str]) -> Section | None:
    """The overview: the grid, the headline tests as a table and an interactive plot of the effects."""
    grid = grid_html(headlines, validity, titles)
    if not grid:
        return None
    section = Section(title="Overview", methods=METHODS, key="overview")
    section.add_html(grid)
    frames = [t.assign(probe=_panel(t, titles.get(p, p))) for p, t in headlines.items() if not t.empty]
    if frames:
        table = pd.concat(frames, ignore_index=True)
        blocked = table["flags"].fillna("").astype(str).str.contains("not_|too_few_units")
        table.loc[blocked, ["ci_low", "ci_high"]] = math.nan  # an interval on too few units is not a finding
        ordered = table[["probe", "model", "language", "scale", "measure", "estimate", "ci_low", "ci_high", "test",
                         "n", "p", "p_adj", "correction", "significant", "mde", "flags", "probability_effect",
                         "seed", "samples"]]
        section.add_table(ordered, caption="Headline tests (p adjusted within each probe's correction family; "
                          "flags: see each probe's methods)")
        section.add_plot(_forest(table), caption="Headline effects with 95% intervals (hover for n and p)")
    return section


def _panel(table: pd.DataFrame, title: str) -> pd.Series:
    """The forest panel of each headline row: the probe, or the probe's group disparity (a measure of its own)."""
    text = table["text"] if "text" in table.columns else pd.Series(None, index=table.index, dtype=object)
    return pd.Series([f"{title}: group disparity" if isinstance(t, str) else title for t in text], index=table.index)


def _forest_unit(measure: str) -> str:
    """The unit of a headline estimate, read from its measure (report helper, issue 28)."""
    if "%" in measure:
        return "percentage points"
    return "rating points" if "rating" in measure else ""


def _forest_axis(part: pd.DataFrame) -> str:
    """The x-axis title of a probe's panel: its measure with the estimate's unit."""
    measures = list(dict.fromkeys(str(m).split(" (")[0] for m in part["measure"]))
    units = {_forest_unit(m) for m in measures}
    measure = measures[0] if len(measures) == 1 else "headline effect"
    unit = units.pop() if len(units) == 1 else ""
    return f"{measure} ({unit + ', ' if unit else ''}95% CI)"


def not_a_finding(row: pd.Series) -> bool:
    """A headline point that is not a finding: flagged not tested, too few units (or not fitted), or on n < 2."""
    if any(code in _note(row.get("flags")) for code in BLOCKING):
        return True
    n = row.get("n")
    try:
        return _missing(n) or float(str(n)) < 2
    except ValueError:
        return True


def _num(value: object) -> str:
    """An estimate or bound in a hover: 3 significant digits, – where none."""
    return "–" if _missing(value) else f"{float(str(value)):.3g}"


def _forest(table: pd.DataFrame) -> Any:
    """One panel per probe: the effect of each model x language with its interval."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    probes = list(dict.fromkeys(table["probe"]))
    fig = make_subplots(rows=len(probes), cols=1, subplot_titles=probes, vertical_spacing=0.12)
    for i, probe in enumerate(probes, 1):
        part = table[table["probe"] == probe]
        names = short_models([str(m) for m in part["model"].unique()])
        labels = part["model"].astype(str).map(lambda m, k=names: display_text(m, k)) + " · " + part[
            "language"].astype(str)
        unit = {"percentage points": " points", "rating points": " rating points"}.get(
            _forest_unit(str(part["measure"].iloc[0])), "")
        notes = part["flag_notes"] if "flag_notes" in part.columns else part["flags"]
        hover = pd.Series([
            html.escape(f"{m}") + f"<br>estimate {_num(e)}{unit} [95% CI {_num(lo)}, {_num(hi)}]<br>"
            + html.escape(f"{t}") + f"<br>n {html.escape(_note(n))}, p {_p(p)}, adjusted p {_p(q)}"
            + "".join(f"<br>⚑ {html.escape(line)}" for line in _note(note).split(" | ") if line)
            for m, e, lo, hi, t, n, p, q, note in zip(part["measure"], part["estimate"], part["ci_low"],
                                                      part["ci_high"], part["test"], part["n"], part["p"],
                                                      part["p_adj"], notes, strict=True)
        ], index=part.index)
        untested = part.apply(not_a_finding, axis=1)
        for points, finding in ((part[~untested], True), (part[untested], False)):
            if points.empty:
                continue
            # a point that is not a finding (not tested, too few units, n < 2) is hollow and grey, its
            # reason in the hover; its interval (if any) is not drawn
            fig.add_trace(
                go.Scatter(
                    x=points["estimate"], y=labels[points.index], mode="markers",
                    error_x={"type": "data", "symmetric": False, "array": points["ci_high"] - points["estimate"],
                             "arrayminus": points["estimate"] - points["ci_low"], "color": "#555",
                             "visible": finding},
                    marker={"color": ["#b03a2e" if s else "#555" for s in points["significant"]], "size": 9}
                    if finding else UNTESTED_MARKER,
                    hovertext=hover[points.index].tolist(), hoverinfo="text",
                    name=probe if finding else f"{probe}: not a finding", showlegend=False,
                ),
                row=i, col=1,
            )
        fig.add_vline(x=0, line={"color": "#999", "dash": "dot"}, row=i, col=1)
        fig.update_xaxes(title_text=_forest_axis(part), row=i, col=1)
        fig.update_yaxes(title_text="Model · language", automargin=True, row=i, col=1)
    fig.update_layout(height=180 + 90 * len(table), margin={"l": 10, "r": 10, "t": 40, "b": 30},
                      template="plotly_white")
    return fig


def validity_table_html(validity: dict[str, pd.DataFrame], titles: dict[str, str]) -> pd.DataFrame:
    """All probes' validity rows in one frame, for the overview's table and files."""
    frames = [t.assign(probe=titles.get(p, p)) for p, t in validity.items() if not t.empty]
    if not frames:
        return pd.DataFrame()
    table = pd.concat(frames, ignore_index=True)
    first = ["probe", "model", "language"]
    return readable_columns(table[first + [c for c in table.columns if c not in first]])

