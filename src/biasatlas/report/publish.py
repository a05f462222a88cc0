"""Publication outputs of a report: readable column names, tables as CSV and LaTeX, figures as SVG and PDF."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

# Column names the analyses use, as a reader of a paper expects them.
_EXACT = {
    "n": "n",
    "p": "p",
    "p_adj": "adjusted p",
    "p_value": "p",
    "q": "q (BH)",
    "q_value": "q (BH)",
    "ci_low": "95% CI low",
    "ci_high": "95% CI high",
    "ci_method": "95% CI method",
    "pct": "%",
    "or": "odds ratio",
    "odds_ratio": "odds ratio",
    "log_or": "log odds ratio",
    "df": "df",
    "se": "SE",
    "sd": "SD",
    "n_pairs": "pairs (n)",
    "n_sets": "prompt sets (n)",
    "backend_id": "model",
    "run_id": "run",
    "latency_s": "latency (s)",
    "prompt_tokens": "prompt tokens",
    "completion_tokens": "completion tokens",
    "significant": "significant (after correction)",
}
_SUFFIXES = (
    ("_ci_low", " 95% CI low"),
    ("_ci_high", " 95% CI high"),
    ("_pct", " %"),
    ("_count", " (n)"),
    ("_n", " (n)"),
    ("_p_adj", " adjusted p"),
    ("_p", " p"),
    ("_mean", " mean"),
    ("_sd", " SD"),
)


def column_label(name: object) -> str:
    """``toward_count`` -> ``Toward (n)``, ``p_adj`` -> ``adjusted p``; names with spaces stay as they are."""
    text = str(name)
    if " " in text or not re.fullmatch(r"[A-Za-z0-9_]+", text):
        return text
    if text in _EXACT:
        return _EXACT[text]
    lowered = text.lower()
    for suffix, label in _SUFFIXES:
        if lowered.endswith(suffix) and len(lowered) > len(suffix):
            stem = text[: -len(suffix)]
            return _EXACT.get(stem, _words(stem)) + label
    return _words(text)


def _words(text: str) -> str:
    spaced = text.replace("_", " ").strip()
    return spaced[:1].upper() + spaced[1:] if spaced else text


def readable_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with every column named for a reader; a name two columns would share is kept raw.

    Of two-level columns (models side by side) only the lower level is relabelled: the upper one
    holds model names, shown as they are.
    """
    if isinstance(frame.columns, pd.MultiIndex):
        tuples = [(*c[:-1], column_label(c[-1])) for c in frame.columns]
        return frame.set_axis(pd.MultiIndex.from_tuples(tuples), axis=1)
    labels = [column_label(c) for c in frame.columns]
    if len(set(labels)) != len(labels):
        seen: set[str] = set()
        fixed = []
        for raw, label in zip(frame.columns, labels, strict=True):
            fixed.append(label if label not in seen else str(raw))
            seen.add(label)
        labels = fixed
    return frame.set_axis(labels, axis=1)


def flat_columns(frame: pd.DataFrame, sep: str = " · ") -> pd.DataFrame:
    """Two-level columns as one header row (``alpha · Biased %``), for CSV files; flat frames unchanged."""
    if not isinstance(frame.columns, pd.MultiIndex):
        return frame
    names = [sep.join(str(part) for part in column if str(part)) for column in frame.columns]
    return frame.set_axis(names, axis=1)


def slug(text: str, fallback: str, limit: int = 60) -> str:
    """A file-name-safe short form of ``text``, at most ``limit`` characters, cut between words."""
    return cut_words(re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-"), limit) or fallback


def cut_words(name: str, limit: int) -> str:
    """``name`` (words joined by '-') cut to ``limit`` characters at a '-', not inside a word."""
    if len(name) <= limit:
        return name
    cut = name[: limit + 1]
    if cut.endswith("-"):
        return cut.strip("-")
    whole = cut.rsplit("-", 1)[0]
    # a single word longer than the limit can only be cut inside itself
    return (whole if "-" in cut else name[:limit]).strip("-")


@dataclass
class TableFile:
    """A report table kept for the publication files."""

    frame: pd.DataFrame
    caption: str


class FigureFile:
    """A figure as SVG and PDF for the publication files, drawn the first time either is read.

    ``make`` builds the matplotlib figure: a report whose page shows the interactive plot and that writes no
    files never draws it (drawing and saving is most of a figure's cost, and grows with the models).
    """

    def __init__(self, caption: str, make: Callable[[], Any] | None = None, *, svg: bytes = b"",
                 pdf: bytes = b"") -> None:
        self.caption = caption
        self._make = make
        self._files = None if make is not None else {"svg": svg, "pdf": pdf}

    @property
    def svg(self) -> bytes:
        return self._render()["svg"]

    @property
    def pdf(self) -> bytes:
        return self._render()["pdf"]

    def _render(self) -> dict[str, bytes]:
        if self._files is None:
            assert self._make is not None
            self._files = _save(self._make())
            self._make = None  # the data it holds can go
        return self._files


def render_figure(figure: Any, caption: str) -> FigureFile:
    """A matplotlib figure as SVG (shown in the page too) and PDF, drawn now; the figure is closed."""
    files = _save(figure)
    return FigureFile(caption, svg=files["svg"], pdf=files["pdf"])


def lazy_figure(make: Callable[[], Any], caption: str) -> FigureFile:
    """A figure drawn (by ``make``) only when its SVG or PDF is read."""
    return FigureFile(caption, make)


def _save(figure: Any) -> dict[str, bytes]:
    """``figure`` saved as SVG and PDF; the figure is closed."""
    from biasatlas.report.figure_fonts import save_vector

    return save_vector(figure)


def latex_table(frame: pd.DataFrame, caption: str, label: str = "tab:table") -> str:
    """A LaTeX table (booktabs, escaped text, wrapping columns, ``\\label``): see ``report/latex.py``."""
    from biasatlas.report import latex

    return latex.latex_table(frame, caption, label)


def write_files(directory: Path, numbered: list[tuple[str, TableFile | FigureFile]]) -> list[Path]:
    """Write each item as ``NN-slug.csv``/``.tex`` (tables) or ``.svg``/``.pdf`` (figures); old files go."""
    directory.mkdir(parents=True, exist_ok=True)
    for old in directory.iterdir():
        if old.is_file() and old.suffix in (".csv", ".tex", ".svg", ".pdf", ".bib"):
            old.unlink()
    from biasatlas.report.cells import file_cells
    from biasatlas.report.latex import label_for
    from biasatlas.report.table_data import split_estimates
    from biasatlas.table_files import to_csv

    written: list[Path] = []
    for stem, item in numbered:
        if isinstance(item, TableFile):
            csv = directory / f"{stem}.csv"
            # estimate cells as numbers (estimate, ci_low, ci_high, n); no formula runs when opened
            to_csv(flat_columns(file_cells(split_estimates(item.frame))), csv)
            tex = directory / f"{stem}.tex"
            tex.write_text(latex_table(item.frame, item.caption, label_for(stem)), encoding="utf-8")
            written += [csv, tex]
        else:
            svg, pdf = directory / f"{stem}.svg", directory / f"{stem}.pdf"
            svg.write_bytes(item.svg)
            pdf.write_bytes(item.pdf)
            written += [svg, pdf]
    return written


def file_name(caption: str, fallback: str, limit: int = 60) -> str:
    """A table's or figure's file name part from its caption, ending with its breakdown: the caption without
    its parentheses, and where that is too long its last "by …" part ("by-group", "by-scale-contact-action")."""
    plain = re.sub(r"\([^()]*\)", " ", caption)
    plain = re.sub(r"[,:;]?\s*(?:models )?side by side", " ", plain)  # a layout, not a breakdown
    name = slug(plain, fallback, 1000)
    if len(name) <= limit:
        return name
    at = name.rfind("by-")
    if at > 0 and len(name) - at <= limit:
        head = cut_words(name[:at].strip("-"), limit - (len(name) - at) - 1)
        return f"{head}-{name[at:]}" if head else name[at:]
    return cut_words(name, limit)
