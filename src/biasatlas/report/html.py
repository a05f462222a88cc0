"""Self-contained HTML reports: tables (escaped), inline PNG figures, methods text."""

from __future__ import annotations

import base64
import hashlib
import html
import io
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
from jinja2 import Environment, PackageLoader
from markupsafe import Markup

from biasatlas import __version__


@dataclass
class Section:
    """One part of a report. ``blocks`` are HTML fragments made by the helpers below."""

    title: str
    blocks: list[str] = field(default_factory=list)
    methods: str = ""

    def add_text(self, text: str) -> None:
        self.blocks.append(f"<p>{escape(text)}</p>")

    def add_table(self, frame: pd.DataFrame, caption: str = "", *, sortable: bool = False) -> None:
        self.blocks.append(table_html(frame, caption, sortable=sortable))

    def add_figure(self, figure: Any, caption: str = "") -> None:
        self.blocks.append(figure_html(figure, caption))


def table_html(frame: pd.DataFrame, caption: str = "", *, sortable: bool = False) -> str:
    """An HTML table whose every cell is escaped (model text can contain markup)."""
    css = "data sortable" if sortable else "data"
    frame = frame.rename(columns=lambda c: clean(str(c)))
    for column in frame.select_dtypes(include="object").columns:
        frame[column] = frame[column].map(lambda v: clean(v) if isinstance(v, str) else v)
    body = frame.to_html(index=False, escape=True, classes=css, border=0, na_rep="–", float_format=_fmt)
    cap = f"<p class='caption'>{escape(caption)}</p>" if caption else ""
    return f"<div class='table'>{cap}{body}</div>"


# NUL and other control characters (model text can hold them) are dropped; tab and newline stay.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def clean(text: str) -> str:
    """Text without control characters."""
    return _CONTROL.sub("", text)


def escape(text: str) -> str:
    """Text made safe for HTML: control characters dropped, markup escaped (quotes included)."""
    return html.escape(clean(text), quote=True)


def _fmt(value: float) -> str:
    return f"{value:.4g}"


def figure_html(figure: Any, caption: str = "") -> str:
    """A matplotlib figure embedded as a base64 PNG (the report stays one file)."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    figure.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(figure)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    cap = f"<figcaption>{escape(caption)}</figcaption>" if caption else ""
    return f"<figure><img alt='{escape(caption)}' src='data:image/png;base64,{data}'/>{cap}</figure>"


def write_report(
    study_dir: str | Path, sections: list[Section], title: str = "biasatlas report", out: Path | None = None
) -> Path:
    """Render ``sections`` into ``out`` (default ``<study_dir>/report.html``)."""
    # Autoescape everything: study names, titles and methods text are escaped by jinja; the blocks are
    # HTML our helpers built from escaped parts (Markup). The page's own script is allowed by its hash
    # only, and nothing may be loaded from elsewhere (Content-Security-Policy).
    env = Environment(loader=PackageLoader("biasatlas.report", "templates"), autoescape=True)
    env.filters["clean"] = clean
    script = env.get_template("report.js").render()
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    template = env.get_template("report.html.j2")
    out = Path(out) if out is not None else Path(study_dir) / "report.html"
    out.write_text(
        template.render(
            title=title,
            sections=[_SafeSection(s) for s in sections],
            script=Markup(script),
            script_hash=f"sha256-{digest}",
            study=str(Path(study_dir).resolve().name),
            generated=datetime.now(UTC).isoformat(timespec="seconds"),
            version=__version__,
        ),
        encoding="utf-8",
    )
    return out


class _SafeSection:
    """A section as the template sees it: blocks are our own escaped HTML, the rest is text."""

    def __init__(self, section: Section) -> None:
        self.title = clean(section.title)
        self.methods = clean(section.methods)
        self.blocks = [Markup(block) for block in section.blocks]
