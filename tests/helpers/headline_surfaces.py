"""The group-disparity headline as a user reads it on each surface: `summary`, the report's overview, the export.

Each reader returns ``{(model, language): headline text}`` so a test can check that the three surfaces name
the same group for the same cell, read from the files a user opens (not from the library's objects).
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pandas as pd

_BLOCK = re.compile(r"^Contact-hypothesis probe(?: · (?P<model>.+?))?(?: · (?P<lang>[a-z]{2,3}))?$")


def _words(fragment: str) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", fragment))).strip()


def from_summary(text: str, model: str | None = None, language: str | None = None) -> dict[tuple[str, str], str]:
    """The ``group disparity:`` line of each headline block at the top of `summary` (wrapped lines joined);
    ``model`` / ``language`` fill in what a block's title leaves out (one model or one language in the study)."""
    found: dict[tuple[str, str], str] = {}
    key: tuple[str, str] | None = None
    lines = text.splitlines()
    for i, line in enumerate(lines):
        head = _BLOCK.match(line.strip())
        if head:
            key = (head["model"] or model or "", head["lang"] or language or "")
            continue
        if key is not None and line.strip().startswith("group disparity:"):
            joined = [line.strip()]
            for more in lines[i + 1:]:
                if not more.startswith("    ") and not (more.startswith("  ") and not more.startswith("  headline")
                                                         and ":" not in more.split()[0]):
                    break
                joined.append(more.strip())
            found[key] = " ".join(joined).removeprefix("group disparity: ")
            key = None
    return found


def from_report(report: Path) -> dict[tuple[str, str], str]:
    """The overview grid's contact cells: the model of each row and the language of each column."""
    page = report.read_text(encoding="utf-8")
    grid = re.search(r"<table class='overview data[^>]*>(.*?)</table>", page, re.S)
    assert grid, "the report has no overview grid"
    head = re.search(r"<thead>(.*?)</thead>", grid.group(1), re.S)
    assert head
    titles = [_words(t) for t in re.findall(r"<th>(.*?)</th>", head.group(1), re.S)][1:]
    found: dict[tuple[str, str], str] = {}
    for row in re.findall(r"<tr>(.*?)</tr>", grid.group(1).split("</thead>", 1)[1], re.S):
        cells = [_words(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        for title, cell in zip(titles, cells[1:], strict=True):
            if title.startswith("Contact"):
                found[(cells[0], title.split()[-1])] = cell
    return found


def from_export(statistics: Path) -> dict[tuple[str, str], pd.Series]:
    """The export's headline group-disparity row of each model x language (``group_headline`` true)."""
    table = pd.read_csv(statistics) if statistics.suffix == ".csv" else pd.read_parquet(statistics)
    rows = table[table["group_headline"].astype(str).str.lower() == "true"]
    return {(str(r["model"]), str(r["language"])): r for _, r in rows.iterrows()}
