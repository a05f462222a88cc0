"""Self-contained HTML reports: tables (escaped), inline PNG figures, methods text."""

from __future__ import annotations

import base64
import html
import io
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
from jinja2 import Environment, PackageLoader, select_autoescape

from biasatlas import __version__


@dataclass
class Section:
    """One part of a report. ``blocks`` are HTML fragments made by the helpers below."""

    title: str
    blocks: list[str] = field(default_factory=list)
    methods: str = ""

    def add_text(self, text: str) -> None:
        self.blocks.append(f"<p>{html.escape(text)}</p>")

    def add_table(self, frame: pd.DataFrame, caption: str = "", *, sortable: bool = False) -> None:
        self.blocks.append(table_html(frame, caption, sortable=sortable))

    def add_figure(self, figure: Any, caption: str = "") -> None:
        self.blocks.append(figure_html(figure, caption))


def table_html(frame: pd.DataFrame, caption: str = "", *, sortable: bool = False) -> str:
    """An HTML table whose every cell is escaped (model text can contain markup)."""
    css = "data sortable" if sortable else "data"
    body = frame.to_html(index=False, escape=True, classes=css, border=0, na_rep="–", float_format=_fmt)
    cap = f"<p class='caption'>{html.escape(caption)}</p>" if caption else ""
    return f"<div class='table'>{cap}{body}</div>"


def _fmt(value: float) -> str:
    return f"{value:.4g}"


def figure_html(figure: Any, caption: str = "") -> str:
    """A matplotlib figure embedded as a base64 PNG (the report stays one file)."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    figure.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(figure)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    cap = f"<figcaption>{html.escape(caption)}</figcaption>" if caption else ""
    return f"<figure><img alt='{html.escape(caption)}' src='data:image/png;base64,{data}'/>{cap}</figure>"


def write_report(
    study_dir: str | Path, sections: list[Section], title: str = "biasatlas report", out: Path | None = None
) -> Path:
    """Render ``sections`` into ``out`` (default ``<study_dir>/report.html``)."""
    env = Environment(loader=PackageLoader("biasatlas.report", "templates"), autoescape=select_autoescape())
    template = env.get_template("report.html.j2")
    out = Path(out) if out is not None else Path(study_dir) / "report.html"
    out.write_text(
        template.render(
            title=title,
            sections=sections,
            study=str(Path(study_dir).resolve().name),
            generated=datetime.now(UTC).isoformat(timespec="seconds"),
            version=__version__,
        ),
        encoding="utf-8",
    )
    return out
