"""Interactive report figures (Plotly): estimates with intervals, and heatmaps, one panel per model.

Every figure has axis titles with units, and a hover that gives the estimate, its interval, n and (where a
test stands behind it) p. Study text in hovers and labels is escaped: Plotly reads a few HTML tags in text.
The static SVG/PDF copies in ``report_files/`` stay matplotlib drawings made by the probes.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

# the static (matplotlib) figures' fonts: named here too, where the probes import them
from biasatlas.report.figure_fonts import BASE_FONT as BASE_FONT
from biasatlas.report.figure_fonts import FALLBACK_FONTS as FALLBACK_FONTS
from biasatlas.report.figure_fonts import figure_fonts as figure_fonts
from biasatlas.report.figure_fonts import lay_out as lay_out
from biasatlas.report.figure_fonts import use_figure_fonts as use_figure_fonts

#: contact framings in their colours, as in the static figures
CONTACT_COLORS = {"none": "#999999", "positive": "#3a923a", "negative": "#c0392b"}


def _text(value: Any) -> str:
    from biasatlas.report.cells import MISSING, cell_text

    shown = cell_text(value)
    return html.escape(MISSING if shown is None else shown)


def _num(value: Any, digits: int = 3) -> str:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return "–"
    return "–" if math.isnan(number) else f"{number:.{digits}g}"


#: a point that is not a finding (not tested, flagged too few units, n < 2): hollow and grey, never a solid dot
UNTESTED_MARKER = {"symbol": "circle-open", "color": "#999999", "size": 9, "line": {"width": 2}}
UNTESTED_PREFIXES = ("not tested", "not a finding")


def untested_group(name: Any) -> bool:
    """True for a group of points that are not findings (its name says so: "not tested", "not a finding …")."""
    return str(name).startswith(UNTESTED_PREFIXES)


def hover_lines(estimate: Any, low: Any, high: Any, n: Any = None, p: Any = None, *, unit: str = "",
                extra: Sequence[str] = (), p_label: str = "p") -> str:
    """The hover of one point: estimate with unit, its 95% interval, n and p where known."""
    lines = [f"estimate: {_num(estimate, 4)}{unit}", f"95% CI: [{_num(low, 4)}, {_num(high, 4)}]{unit}"]
    if n is not None:
        lines.append(f"n: {_text(n)}")
    if p is not None:
        from biasatlas.report.cells import format_p

        lines.append(f"{html.escape(p_label)}: {html.escape(format_p(p))}")
    return "<br>".join([*extra, *lines])


def drill_points(rows: pd.DataFrame, drill: Mapping[str, str] | None) -> list[str] | None:
    """Each point's answers filter as JSON text (``{"Model": …, "Language": …}``), for a click in the page.

    ``drill`` maps a column of ``rows`` to the answers table's column it filters; the values are shown as
    the answers table shows them, so the filter matches exactly. None without ``drill``.
    """
    if not drill:
        return None
    from biasatlas.report.cells import cell_text

    present = {column: label for column, label in drill.items() if column in rows.columns}
    return [json.dumps({label: cell_text(r[column]) for column, label in present.items()
                        if cell_text(r[column]) is not None}, ensure_ascii=False)
            for _, r in rows.iterrows()]


def _panels(frame: pd.DataFrame, panel: str | None) -> list[tuple[str, pd.DataFrame]]:
    if panel is None or panel not in frame.columns:
        return [("", frame)]
    return [(str(key), part) for key, part in frame.groupby(panel, sort=True)]


#: panels side by side in one row of a figure; more wrap to further rows (plotly refuses a spacing wider than
#: 1 / (columns - 1): one column per model broke the report at 14 models)
PANEL_COLUMNS = 4


def panel_grid(panels: int) -> tuple[int, int, dict[str, float]]:
    """(rows, columns, spacing keywords) for ``panels`` panels: at most ``PANEL_COLUMNS`` a row."""
    cols = max(1, min(panels, PANEL_COLUMNS))
    rows = max(1, math.ceil(panels / cols))
    spacing = {"horizontal_spacing": min(0.06, 0.5 / (cols - 1)) if cols > 1 else 0.02,
               "vertical_spacing": min(0.3 / rows, 0.5 / (rows - 1)) if rows > 1 else 0.1}
    return rows, cols, spacing


def interval_figure(
    frame: pd.DataFrame, *, category: str | Sequence[str], estimate: str, low: str, high: str,
    x_title: str, y_title: str, group: str | None = None, panel: str | None = None, n: str | None = None,
    p: str | None = None, kind: str = "bar", unit: str = "", colors: dict[str, str] | None = None,
    y_range: tuple[float, float] | None = None, horizontal: bool = False, p_label: str = "p",
    bounds: tuple[float, float] | None = None, drill: Mapping[str, str] | None = None,
) -> Any:
    """Bars (or points, dodged per group) of ``estimate`` with asymmetric 95% error bars, grouped by ``group``,
    one panel per ``panel`` value; ``category`` (one column or several, joined) is the axis of the bars.

    ``bounds``: the scale of a share or probability (``(0, 100)``, ``(0, 1)``; read from ``y_range`` or a
    title saying "probability" where not given): an interval that leaves it is drawn as Wilson's on the
    estimate and n (:func:`scale_interval`), and the axis starts where the scale does. A panel whose every
    estimate is 0 says so in words. Model ids show their short names. ``drill`` (a column -> the answers
    table's column) makes a click on a point filter the section's answers to it (:func:`drill_points`).
    """
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    from biasatlas.report.table_data import display_text, short_models

    keys = [category] if isinstance(category, str) else list(category)
    bounds = bounds or _bounds(y_range, x_title if horizontal else y_title)
    if bounds is not None:
        before = frame
        frame = scale_interval(frame, estimate, low, high, n, bounds)
        if not frame[[low, high]].equals(before[[low, high]]):  # the title says which interval is drawn
            note = " (an interval leaving the scale: Wilson's)"
            x_title, y_title = (x_title + note, y_title) if horizontal else (x_title, y_title + note)
    names = short_models([str(v) for k in [*keys, *([panel] if panel else [])] if k in frame.columns
                          for v in frame[k].unique()])
    panels = [(display_text(t, names), part) for t, part in _panels(frame, panel)]
    n_rows, n_cols, spacing = panel_grid(len(panels))
    fig = make_subplots(rows=n_rows, cols=n_cols, subplot_titles=[html.escape(t) for t, _ in panels],
                        shared_yaxes=True, **spacing)
    seen: set[str] = set()
    for index, (_, part) in enumerate(panels):
        row, col = divmod(index, n_cols)
        row += 1
        col += 1
        groups = list(part.groupby(group, sort=False)) if group else [("", part)]
        for name, rows in groups:
            records = rows.to_dict("records")  # rows as dicts: iterrows builds a Series per row (slow at 600 panels)
            labels = [" · ".join(display_text(_text(r[k]), names) for k in keys) for r in records]
            est = pd.to_numeric(rows[estimate], errors="coerce").to_numpy(float)
            plus = np.clip(pd.to_numeric(rows[high], errors="coerce").to_numpy(float) - est, 0, None)
            minus = np.clip(est - pd.to_numeric(rows[low], errors="coerce").to_numpy(float), 0, None)
            where = [f"{html.escape(str(group))}: {_text(name)}"] if group else []
            hover = [hover_lines(r[estimate], r[low], r[high], r[n] if n else None, r[p] if p else None,
                                 unit=unit, p_label=p_label, extra=[f"<b>{lab}</b>", *where])
                     for lab, r in zip(labels, records, strict=True)]
            error = {"type": "data", "symmetric": False, "array": plus.tolist(), "arrayminus": minus.tolist(),
                     "color": "#444"}
            color = (colors or {}).get(str(name))
            common = {"name": _text(name) if group else y_title, "hovertext": hover, "hoverinfo": "text",
                      "legendgroup": str(name), "showlegend": bool(group) and str(name) not in seen,
                      "customdata": drill_points(rows, drill)}
            marker = UNTESTED_MARKER if untested_group(name) else {"size": 9, "color": color}
            if horizontal:
                trace = go.Scatter(x=est.tolist(), y=labels, error_x=error, mode="markers", marker=marker, **common)
            elif kind == "bar":
                trace = go.Bar(x=labels, y=est.tolist(), error_y=error, marker={"color": color}, **common)
            else:
                trace = go.Scatter(x=labels, y=est.tolist(), error_y=error, mode="markers", marker=marker,
                                   **common)
            fig.add_trace(trace, row=row, col=col)
            seen.add(str(name))
        _say_all_zero(fig, part, estimate, unit, index, horizontal)
    # the x axis of every panel is titled; the y axis once, on the first panel (the panels sit side by side)
    fig.update_xaxes(title_text=x_title, automargin=True)
    fig.update_yaxes(automargin=True)
    for row in range(1, n_rows + 1):
        fig.update_yaxes(title_text=y_title, row=row, col=1)
    if y_range:
        (fig.update_xaxes if horizontal else fig.update_yaxes)(range=list(y_range))
    elif bounds is not None:  # the axis starts where the scale does (0 for a share), never at the data's minimum
        top = pd.to_numeric(frame[high], errors="coerce").max()
        top = bounds[1] if pd.isna(top) or top <= 0 else min(bounds[1], 1.1 * float(top))
        (fig.update_xaxes if horizontal else fig.update_yaxes)(range=[bounds[0], top])
    if horizontal:  # one shape per panel: add_vline looks at every axis of the figure for each (minutes at 600)
        fig.update_layout(shapes=[*fig.layout.shapes, *(
            {"type": "line", "x0": 0, "x1": 0, "xref": f"x{i + 1 if i else ''}", "y0": 0, "y1": 1,
             "yref": f"y{i + 1 if i else ''} domain", "line": {"color": "#999", "dash": "dot"}}
            for i in range(len(panels)))])
    rows_per_panel = max((len(part) for _, part in panels), default=1)
    height = (max(360, 28 * rows_per_panel + 160) if horizontal else 420) * n_rows
    # points of several groups at one category side by side (dodged), not drawn over each other
    fig.update_layout(barmode="group", scattermode="group", template="plotly_white", height=height,
                      legend_title_text=html.escape(group or ""), margin={"l": 10, "r": 10, "t": 50, "b": 10})
    return fig


def _bounds(y_range: tuple[float, float] | None, title: str) -> tuple[float, float] | None:
    """The scale of a share or probability axis: its ``y_range`` where it starts at 0, else (0, 1) for an
    axis titled a probability; None for any other measure."""
    if y_range is not None and y_range[0] == 0:
        return y_range
    return (0.0, 1.0) if "probability" in title.lower() or "p(" in title.lower() else None


def scale_interval(frame: pd.DataFrame, estimate: str, low: str, high: str, n: str | None,
                   bounds: tuple[float, float]) -> pd.DataFrame:
    """``frame`` whose intervals that leave ``bounds`` are Wilson's on the estimate and n (the tables' rule,
    :func:`biasatlas.stats.proportions.wilson_on_mean`); a row without n keeps its interval, cut at the bounds."""
    from biasatlas.stats.proportions import wilson_on_mean

    out = frame.copy()
    lo, hi = bounds
    est = pd.to_numeric(out[estimate], errors="coerce")
    low_v = pd.to_numeric(out[low], errors="coerce")
    high_v = pd.to_numeric(out[high], errors="coerce")
    outside = (low_v < lo) | (high_v > hi)
    if not outside.any():
        return out
    counts = (pd.to_numeric(out[n], errors="coerce") if n is not None and n in out.columns
              else pd.Series(math.nan, index=out.index))
    for i in outside[outside].index:
        count = float(counts[i])
        if math.isnan(count) or count <= 0 or pd.isna(est[i]):
            low_v[i], high_v[i] = max(lo, low_v[i]), min(hi, high_v[i])
            continue
        low_v[i], high_v[i] = wilson_on_mean(float(est[i]), count, bounds)
    out[low], out[high] = low_v, high_v
    return out


def _say_all_zero(fig: Any, part: pd.DataFrame, estimate: str, unit: str, index: int, horizontal: bool) -> None:
    """A panel whose every estimate is 0 would look empty: it says "all 0" in words."""
    values = pd.to_numeric(part[estimate], errors="coerce").dropna()
    if values.empty or (values != 0).any():
        return
    axis = "" if index == 0 else str(index + 1)
    fig.add_annotation(text=f"all 0{html.escape(unit)}: no {'point' if horizontal else 'bar'} to draw",
                       xref=f"x{axis} domain", yref=f"y{axis} domain", x=0.5, y=0.5, showarrow=False,
                       font={"size": 14, "color": "#555"})


def heatmap_figure(panels: Sequence[tuple[str, pd.DataFrame, pd.DataFrame | None]], *, x_title: str,
                   y_title: str, z_title: str, zmin: float, zmax: float, colorscale: str = "Reds",
                   digits: int = 3, row_px: int = 40) -> Any:
    """One heatmap per panel (title, values, counts or None) on one colour scale; hover: both keys, value, n.

    ``row_px``: the height of a row of cells in pixels (a matrix of hundreds of rows: less than the default).
    """
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    n_rows, n_cols, spacing = panel_grid(max(len(panels), 1))
    fig = make_subplots(rows=n_rows, cols=n_cols, subplot_titles=[html.escape(t) for t, _, _ in panels],
                        **spacing)
    for index, (_, grid, counts) in enumerate(panels):
        row, col = (i + 1 for i in divmod(index, n_cols))
        xs = [_text(c) for c in grid.columns]
        ys = [_text(i) for i in grid.index]
        values = grid.to_numpy(dtype=float)
        hover = [[f"{html.escape(y_title)}: {ys[i]}<br>{html.escape(x_title)}: {xs[j]}<br>{html.escape(z_title)}: "
                  f"{_num(values[i, j], digits + 1)}"
                  + (f"<br>n: {_num(counts.iloc[i, j], 6)}" if counts is not None else "")
                  for j in range(len(xs))] for i in range(len(ys))]
        text = [["" if math.isnan(v) else _num(v, digits) for v in row] for row in values]
        fig.add_trace(go.Heatmap(z=[[None if math.isnan(v) else v for v in row] for row in values], x=xs, y=ys,
                                 zmin=zmin, zmax=zmax, colorscale=colorscale, text=text, texttemplate="%{text}",
                                 hovertext=hover, hoverinfo="text", showscale=col == 1,
                                 colorbar={"title": {"text": html.escape(z_title)}}), row=row, col=col)
    fig.update_xaxes(title_text=html.escape(x_title), automargin=True)
    fig.update_yaxes(automargin=True)
    for row in range(1, n_rows + 1):
        fig.update_yaxes(title_text=html.escape(y_title), row=row, col=1)
    height = max(320, row_px * max((len(g) for _, g, _ in panels), default=1) + 180) * n_rows
    fig.update_layout(template="plotly_white", height=height, margin={"l": 10, "r": 10, "t": 50, "b": 10})
    return fig


#: groups drawn per family in the disparity forest (the largest gaps; the table beside it has every group)
FOREST_GROUPS = 25


def _notes(value: Any) -> list[str]:
    """A row's flag notes, one per flag; none where it has none (a missing value is never the text "nan")."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return []
    return [note for note in str(value).split(" | ") if note]


def disparity_forest(rows: Sequence[dict[str, Any]], family: str = "axis", *, drill: bool = False) -> Any:
    """Each group's effect against the other groups of its family with its 95% interval, one panel per family
    (model · language · ``family``), groups ordered by effect; a point that is not a finding hollow and grey,
    one that differs (Holm) red. ``rows``: the group-disparity statistics rows of one measure and level.
    With ``drill`` a click on a point filters the answers to that model, language and group."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    frame = pd.DataFrame([r for r in rows if r.get("group") and r.get("estimate") is not None])
    if frame.empty:
        return None
    rating = bool((frame["measure"] == "rating").any())
    scale, unit = (1.0, "rating points") if rating else (100.0, "percentage points")
    keys = [k for k in ("model", "mode", "language", "temperature", family) if k in frame.columns
            and frame[k].notna().any()]
    if drill:
        from biasatlas.report.table_data import model_label

        frame = frame.assign(answers_model=model_label(frame))
    where = {"answers_model": "Model", "language": "Language", "group": "Group"} if drill else None
    panels = list(frame.groupby(keys, sort=True, dropna=False))
    titles = [html.escape(" · ".join(str(v) for v in (key if isinstance(key, tuple) else (key,)))) for key, _ in panels]
    sizes = [min(len(part), FOREST_GROUPS) for _, part in panels]
    fig = make_subplots(rows=len(panels), cols=1, subplot_titles=titles, vertical_spacing=0.3 / max(len(panels), 1),
                        row_heights=sizes)
    shapes: list[dict[str, Any]] = []
    axes: dict[str, Any] = {}
    for i, (_, part) in enumerate(panels, 1):
        part = part.reindex(part["estimate"].abs().sort_values(ascending=False).index[:FOREST_GROUPS])
        part = part.sort_values("estimate")
        blocked = part["flags"].fillna("").astype(str).str.contains("not_tested|too_few_units")
        for points, finding in ((part[~blocked], True), (part[blocked], False)):
            if points.empty:
                continue
            est = scale * points["estimate"].astype(float)
            hover = [hover_lines(scale * r["estimate"], scale * r["ci_low"] if r["ci_low"] is not None else None,
                                 scale * r["ci_high"] if r["ci_high"] is not None else None, r["n"], r["p_adj"],
                                 unit=f" {unit}", p_label="p adj (Holm)",
                                 extra=[f"<b>{_text(r['group'])}</b>", *[f"⚑ {_text(n)}" for n in
                                        _notes(r.get("flag_notes"))]])
                     for _, r in points.iterrows()]
            low = scale * pd.to_numeric(points["ci_low"], errors="coerce")
            high = scale * pd.to_numeric(points["ci_high"], errors="coerce")
            fig.add_trace(go.Scatter(
                x=est.tolist(), y=[_text(g) for g in points["group"]], mode="markers",
                error_x={"type": "data", "symmetric": False, "array": (high - est).clip(lower=0).tolist(),
                         "arrayminus": (est - low).clip(lower=0).tolist(), "color": "#555", "visible": finding},
                marker={"color": ["#b03a2e" if s else "#555" for s in points["significant"]], "size": 9}
                if finding else UNTESTED_MARKER, hovertext=hover, hoverinfo="text", showlegend=False,
                customdata=drill_points(points, where),
                name="group" if finding else "not a finding"), row=i, col=1)
        # the zero line and the axis titles of panel i set once below: add_vline and update_xaxes per row look
        # at every axis of the figure (600 panels: minutes)
        axis = "" if i == 1 else str(i)
        shapes.append({"type": "line", "x0": 0, "x1": 0, "xref": f"x{axis}", "y0": 0, "y1": 1,
                       "yref": f"y{axis} domain", "line": {"color": "#999", "dash": "dot"}})
        axes[f"xaxis{axis}"] = {"title": {"text": f"the group − the other groups ({unit}, 95% CI)"}}
        axes[f"yaxis{axis}"] = {"title": {"text": "group"}, "automargin": True}
    fig.update_layout(height=160 + 24 * sum(sizes) + 60 * len(panels), template="plotly_white",
                      margin={"l": 10, "r": 10, "t": 40, "b": 30}, shapes=shapes, **axes)
    return fig


def choice_bars(options: Sequence[tuple[str, pd.DataFrame]], *, category: str, stack: str, estimate: str,
                low: str, high: str, n: str, x_title: str, y_title: str, menu_title: str,
                extra: Sequence[str] = ()) -> Any:
    """Stacked bars of ``estimate`` per ``category``, one bar segment per ``stack`` value, for one of several
    ``options`` (label, frame) chosen in a dropdown (Plotly updatemenus); the first option is shown first.

    The hover gives the category, the stacked value, the estimate, its 95% interval, n and the ``extra``
    columns; labels and hovers are escaped here.
    """
    import plotly.graph_objects as go

    from biasatlas.report.table_data import display_text, short_models

    names = short_models([label for label, _ in options])
    fig = go.Figure()
    owner: list[int] = []
    for index, (_, frame) in enumerate(options):
        for value, rows in frame.groupby(stack, sort=False):
            hover = [hover_lines(r[estimate], r[low], r[high], r[n],
                                 extra=[f"<b>{_text(r[category])}</b>", f"{html.escape(stack)}: {_text(value)}",
                                        *(f"{html.escape(c)}: {_text(r[c])}" for c in extra)])
                     for _, r in rows.iterrows()]
            fig.add_trace(go.Bar(x=[_text(c) for c in rows[category]], y=pd.to_numeric(rows[estimate]).tolist(),
                                 name=_text(value), hovertext=hover, hoverinfo="text", visible=index == 0,
                                 legendgroup=str(value)))
            owner.append(index)
    buttons = [{"label": html.escape(display_text(label, names)), "method": "update",
                "args": [{"visible": [o == index for o in owner]}, {"title.text": html.escape(
                    display_text(label, names))}]} for index, (label, _) in enumerate(options)]
    first = html.escape(display_text(options[0][0], names)) if options else ""
    fig.update_layout(
        barmode="stack", template="plotly_white", height=520, title={"text": first},
        updatemenus=[{"buttons": buttons, "direction": "down", "x": 0, "xanchor": "left", "y": 1.18,
                      "yanchor": "top", "showactive": True}],
        annotations=[{"text": html.escape(menu_title), "x": 0, "xref": "paper", "y": 1.25, "yref": "paper",
                      "showarrow": False, "xanchor": "left"}],
        margin={"l": 10, "r": 10, "t": 110, "b": 10}, legend_title_text=html.escape(stack))
    fig.update_xaxes(title_text=html.escape(x_title), automargin=True, tickangle=-60)
    fig.update_yaxes(title_text=html.escape(y_title), range=[0, 1], automargin=True)
    return fig
