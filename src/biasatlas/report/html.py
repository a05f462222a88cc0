"""Self-contained HTML reports: escaped tables, figures, interactive plots and the answers behind them.

Everything from a study (names, model answers) is escaped here or by jinja's autoescaping; the only
scripts are the embedded libraries (Plotly, DataTables) and the report's own code, allowed by hash.
Data for the page (plot specs, answers) travels in ``<script type="application/json">`` blocks whose
``<``, ``>`` and ``&`` are escaped, so no answer can close the block.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
from jinja2 import Environment, PackageLoader
from markupsafe import Markup

from biasatlas import __version__
from biasatlas.report import assets
from biasatlas.report.cells import MISSING, cell_text, page_cells
from biasatlas.report.citations import cite_papers, link_citations
from biasatlas.report.compare import drill_spec
from biasatlas.report.latex import PART_ROWS
from biasatlas.report.publish import (
    FigureFile,
    TableFile,
    cut_words,
    file_name,
    lazy_figure,
    readable_columns,
    render_figure,
    slug,
    write_files,
)

#: the folder next to the report that holds every table (CSV, LaTeX) and figure (SVG, PDF)
FILES_DIR = "report_files"


@dataclass
class Section:
    """One part of a report. ``blocks`` are HTML fragments made by the methods below.

    ``key`` names the section's anchor (``#section-KEY``) and, for a probe, its answers table.
    """

    title: str
    blocks: list[str] = field(default_factory=list)
    methods: str = ""
    key: str = ""
    files: list[TableFile | FigureFile] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    has_plots: bool = False

    def add_text(self, text: str) -> None:
        self.blocks.append(f"<p>{prose(text)}</p>")

    def add_table(self, frame: pd.DataFrame, caption: str = "", *, sortable: bool = False,
                  publish: bool = True, drill: str = "", drill_models: Mapping[str, str] | None = None) -> None:
        """A table with readable column names; also a CSV and LaTeX file unless ``publish`` is False.

        Every table sorts and (when long) filters and pages in the page; ``sortable`` is kept for
        callers written before that. ``drill`` names the probe whose answers a click on a cell
        filters (by the cell's model and design columns; see ``compare.drill_spec``); ``drill_models``
        maps a model header to the model's name in the answers table where the two differ.
        """
        del sortable
        shown = _cite_columns(readable_columns(frame))
        self.blocks.append(table_html(shown, caption, drill=drill, drill_models=drill_models))
        if publish and not frame.empty:
            self.files.append(TableFile(shown, cite_papers(caption or self.title)))

    def add_figure(self, figure: Any, caption: str = "", *, plot: Any = None, drill: str = "") -> None:
        """A matplotlib figure as SVG and PDF files; in the page the interactive ``plot`` (Plotly) where given,
        else the SVG (as an image: it runs nothing).

        ``figure`` may be a function that makes the figure: with a ``plot`` it is then drawn only when the
        files are written (``write_report(publish=True)``), never for the page alone. ``drill``: see
        :meth:`add_plot`.
        """
        caption_file = cite_papers(caption or self.title)
        if plot is not None:
            self.files.append(lazy_figure(figure, caption_file) if callable(figure) and not _is_figure(figure)
                              else render_figure(figure, caption_file))
            self.add_plot(plot, caption, drill=drill)
            return
        files = render_figure(figure() if callable(figure) and not _is_figure(figure) else figure, caption_file)
        self.files.append(files)
        data = base64.b64encode(files.svg).decode("ascii")
        cap = f"<figcaption>{prose(caption)}</figcaption>" if caption else ""
        self.blocks.append(
            f"<figure><img alt='{escape(caption)}' src='data:image/svg+xml;base64,{data}'/>{cap}</figure>"
        )

    def add_plot(self, figure: Any, caption: str = "", *, drill: str = "") -> None:
        """An interactive Plotly figure (hover, zoom), drawn by the embedded plotly.js.

        ``drill`` names the probe whose answers a click on a point filters, by the point's ``customdata``
        (the JSON filter :func:`biasatlas.report.plots.drill_points` gives it).
        """
        import plotly.io as pio

        spec = json.loads(pio.to_json(figure, validate=False))
        block_id = f"plot-{_uid(self.key or self.title)}-{len(self.data)}"
        self.data[block_id] = {"data": spec.get("data", []), "layout": spec.get("layout", {})}
        self.has_plots = True
        cap = f"<figcaption>{prose(caption)}</figcaption>" if caption else ""
        target = f" data-drill-probe='{escape(drill)}'" if drill else ""
        self.blocks.append(f"<figure><div class='plot' data-figure='{block_id}'{target}></div>{cap}</figure>")

    def add_html(self, fragment: str) -> None:
        """HTML the caller built and escaped itself (e.g. the overview grid)."""
        self.blocks.append(fragment)

    def add_answers(self, frame: pd.DataFrame, caption: str = "") -> None:
        """The prompts and answers behind this section's figures, filterable; overview cells open it."""
        if frame.empty:
            return
        key = self.key or _uid(self.title)
        block_id = f"answers-data-{key}"
        shown = readable_columns(frame)
        rows = [[_cell(v) for v in row] for row in shown.itertuples(index=False, name=None)]
        self.data[block_id] = {"columns": [str(c) for c in shown.columns], "rows": rows}
        cap = escape(caption or f"The {len(frame):,} answers behind this section (filter each column, sort, page).")
        self.blocks.append(
            f"<div class='answers-box' id='answers-{escape(key)}'><p class='caption'>{cap}</p>"
            f"<p class='active-filter'><span class='what'></span> "
            f"<button type='button' class='reset' data-probe='{escape(key)}'>clear filters</button></p>"
            f"<div class='answers-scroll'><table class='answers display compact' data-probe='{escape(key)}' "
            f"data-rows='{block_id}'></table></div></div>"
        )


def _is_figure(value: Any) -> bool:
    """True for a matplotlib figure (callable objects that are figures are not factories)."""
    from matplotlib.figure import Figure

    return isinstance(value, Figure)


def _cell(value: Any) -> Any:
    """A JSON-ready answers cell: numbers stay numbers, the rest is text for people ('–' where missing)."""
    if hasattr(value, "item") and not isinstance(value, str):  # numpy scalars
        value = value.item()
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value == value:
        return value
    text = cell_text(value)
    return MISSING if text is None else clean(text)


def _uid(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:8]


def table_html(frame: pd.DataFrame, caption: str = "", *, drill: str = "",
               drill_models: Mapping[str, str] | None = None) -> str:
    """An HTML table whose every cell is escaped (model text can contain markup).

    With ``drill`` (a probe's answers key) the table carries what a click on a cell filters by.
    """
    frame = frame.rename(columns=lambda c: clean(str(c)))
    frame, constant = _constant_sentences(frame)
    if constant:  # one long sentence on every row is said once, under the caption (rows stay one line high)
        caption = (caption + " " if caption else "") + constant
    # every cell is our text (see report/cells.py); a line break travels as a private-use character that
    # becomes <br> after pandas escaped the cell (pandas would write a line break as the two characters \n)
    body = _table_markup(page_cells(frame))
    cap = f"<p class='caption'>{prose(caption)}</p>" if caption else ""
    if drill and not frame.empty:
        spec = escape(json.dumps({"probe": drill, **drill_spec(frame, drill_models)}, ensure_ascii=False))
        return f"<div class='table' data-drill='{spec}'>{cap}{body}</div>"
    return f"<div class='table'>{cap}{body}</div>"


def _table_markup(shown: pd.DataFrame) -> str:
    """pandas' ``to_html`` of a frame of text cells (escaped as pandas escapes them; a line break within a cell
    becomes ``<br>``), its header from pandas and its rows written here: pandas' writer took a fifth of a
    50-model report's time on the rows alone."""
    head = shown.head(0).to_html(index=False, escape=True, classes="data display compact", border=0)
    cells: dict[str, str] = {}  # a table repeats its cells (model ids, languages, labels): each is written once

    def cell(v: str) -> str:
        out = cells.get(v)
        if out is None:
            text = clean(v.replace(_BREAK, "")).replace("\t", " ").replace("\n", _BREAK)
            out = cells[v] = f"      <td>{html.escape(text, quote=False).replace(_BREAK, '<br>')}</td>\n"
        return out

    rows = "".join("    <tr>\n" + "".join(cell(v) for v in row) + "    </tr>\n"
                   for row in shown.itertuples(index=False, name=None))
    return head[:head.index("<tbody>")] + "<tbody>\n" + rows + "  </tbody>\n</table>"


#: a text column whose one value is longer than this is said once for the table, not on every row
LONG_CONSTANT = 60


def _constant_sentences(frame: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """``frame`` without its columns of one long text value (two rows or more), and a sentence naming them."""
    if len(frame) < 2 or isinstance(frame.columns, pd.MultiIndex):
        return frame, ""
    said, drop = [], []
    for column in frame.columns:
        values = {v for v in frame[column].tolist() if isinstance(v, str)}
        if len(values) == 1 and frame[column].notna().all() and len(next(iter(values))) > LONG_CONSTANT:
            said.append(f"{column} (every row): {values.pop()}")
            drop.append(column)
    if not drop:
        return frame, ""
    return frame.drop(columns=drop), " ".join(s if s.endswith(".") else s + "." for s in said)


#: stands for a line break inside a cell while pandas writes the table (see table_html)
_BREAK = "\ue000"

# NUL and other control characters (model text can hold them) are dropped; tab and newline stay.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def prose(text: str) -> str:
    """Text of ours for the page (captions, methods): escaped, paper numbers cited, citations linked."""
    return link_citations(escape(cite_papers(text)))


def _cite_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """Column headers with paper numbers as author–year citations ("adheres (Raj et al., 2024)")."""
    if isinstance(frame.columns, pd.MultiIndex):
        tuples = [(*c[:-1], cite_papers(str(c[-1]))) for c in frame.columns]
        return frame.set_axis(pd.MultiIndex.from_tuples(tuples), axis=1)
    return frame.set_axis([cite_papers(str(c)) for c in frame.columns], axis=1)


def clean(text: str) -> str:
    """Text without control characters."""
    return _CONTROL.sub("", text)


def escape(text: str) -> str:
    """Text made safe for HTML: control characters dropped, markup escaped (quotes included)."""
    return html.escape(clean(text), quote=True)


def json_block(value: Any) -> Markup:
    """JSON safe inside ``<script type="application/json">``: no ``<``, ``>``, ``&`` or line separators."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, default=str)
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                         ("\u2029", "\\u2029")):
        text = text.replace(raw, escaped)
    return Markup(text)


def _hash(script: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")


def write_report(
    study_dir: str | Path,
    sections: list[Section],
    title: str = "biasatlas report",
    out: Path | None = None,
    *,
    publish: bool = True,
    page_title: str | None = None,
) -> Path:
    """Render ``sections`` into ``out`` (default ``<study_dir>/report.html``) under the heading ``title``.

    The page's ``<title>`` is ``page_title`` (an audit's title), else ``title · study directory``.

    With ``publish`` every table and figure is also written to ``report_files/`` next to the report
    (``NN-MM-name.csv``/``.tex``/``.svg``/``.pdf``, NN the section, MM its order in the section).
    """
    env = Environment(loader=PackageLoader("biasatlas.report", "templates"), autoescape=True)
    env.filters["clean"] = clean
    app = env.get_template("report.js").render()
    plots = any(s.has_plots for s in sections)
    plotly = assets.plotly_js() if plots else ""
    hashes = [_hash(app)] + ([_hash(plotly)] if plots else [])
    out = Path(out) if out is not None else Path(study_dir) / "report.html"
    data = {k: json_block(v) for s in sections for k, v in s.data.items()}
    template = env.get_template("report.html.j2")
    # streamed into a file beside it, then put in its place: the rendered page (tens of MB at 50 models) is never
    # held whole, and a build that fails half-way leaves the last report as it was
    partial = out.with_name(f".{out.name}.partial")
    try:
        template.stream(
            title=title,
            page_title=page_title,
            sections=[_SafeSection(s) for s in sections],
            app=Markup(app),
            plotly=Markup(plotly),
            datatables=assets.datatables_module_b64(),
            datatables_css=Markup(assets.datatables_css()),
            data=data,
            script_hashes=Markup(" ".join(f"'{h}'" for h in hashes)),
            study=str(Path(study_dir).resolve().name),
            generated=datetime.now(UTC).isoformat(timespec="seconds"),
            version=__version__,
            libraries=assets.library_versions(),
            files_dir=FILES_DIR if publish else "",
        ).dump(str(partial), encoding="utf-8")
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    os.replace(partial, out)
    if publish:
        numbered, paper = [], []
        for si, section in enumerate(sections, 1):
            name = cut_words(slug(section.key or section.title, f"section-{si}"), 24)
            used: set[str] = set()
            first = section.key not in NOT_IN_PAPER
            for fi, item in enumerate(section.files, 1):
                part = file_name(item.caption, "item")
                part = part if part not in used else f"{part}-{fi}"  # names end with their breakdown, unique
                used.add(part)
                stem = f"{si:02d}-{fi:02d}-{name}-{part}"
                numbered.append((stem, item))
                if first and isinstance(item, TableFile) and len(item.frame) <= PART_ROWS:
                    paper.append(stem)  # the paper set: each section's first table of one page
                    first = False
        write_files(out.parent / FILES_DIR, numbered)
        from biasatlas.report.paper import write_paper

        write_paper(out.parent / FILES_DIR, paper, title)
    return out


#: sections whose tables are not in the paper set (runs, references: the study's record, not its findings)
NOT_IN_PAPER = ("runs", "references")


class _SafeSection:
    """A section as the template sees it: blocks are our own escaped HTML, the rest is text."""

    def __init__(self, section: Section) -> None:
        self.title = clean(section.title)
        self.methods = Markup(prose(section.methods))
        self.anchor = slug(section.key or section.title, "section")
        self.blocks = [Markup(block) for block in section.blocks]
