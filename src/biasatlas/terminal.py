"""Tables and lines for a terminal of any width (80 columns included): no number cut, no line too long.

A :class:`FitTable` is drawn at the width the console gives it: columns whose value is the same in every row
leave the table (the summary's title, or the table's own title, names them once); a number is never wrapped
or shortened; a table wider than the terminal is folded into parts that each repeat the row labels.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from rich import box
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

#: the columns a table may drop when every row holds the same value (each is named in a title instead)
FACTORS = ("model", "mode", "lang", "language", "scale", "axis", "category", "decoding", "temperature")
#: factors the study holds one value of, shown once in the summary's title: a table names only the others
STUDY_FACTORS: ContextVar[dict[str, str] | None] = ContextVar("biasatlas_study_factors", default=None)
#: a table folded into more parts than this is shown row by row instead (see FitTable._records)
MAX_PARTS = 3
#: the characters between two columns and at the table's edges (box.SIMPLE_HEAD, no edge, no edge padding)
_GAP = 3


def factor_label(name: str) -> str:
    """``lang`` and ``language`` read alike in a title."""
    return "language" if name == "lang" else name


@dataclass
class FitTable:
    """A rich table that fits the console (see the module): ``text`` names the columns that may wrap at spaces
    (labels); every other column is a number or an interval and is kept on one line."""

    title: str
    columns: Sequence[str]
    rows: Sequence[Sequence[str]]
    text: frozenset[str] = field(default_factory=frozenset)
    factors: Sequence[str] = FACTORS

    def constant(self) -> dict[str, str]:
        """The factor columns whose value is the same in every row (with that value)."""
        if len(self.rows) < 1:
            return {}
        found: dict[str, str] = {}
        for index, name in enumerate(self.columns):
            if name in self.factors and len({row[index] for row in self.rows}) == 1:
                found[name] = self.rows[0][index]
        return found

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from self.tables(options.max_width)

    def tables(self, width: int) -> Iterator[Table]:
        """The table, or its parts, each at most ``width`` characters wide."""
        constant = self.constant()
        study = STUDY_FACTORS.get() or {}
        keep = [i for i, name in enumerate(self.columns) if name not in constant]
        if not keep:  # one row of factors only: show it rather than nothing
            keep = list(range(len(self.columns)))
        named = [f"{factor_label(k)} {v}" for k, v in constant.items() if study.get(factor_label(k)) != v]
        title = self.title + (f" — {' · '.join(named)}" if named else "")
        labels = [i for i in keep if self.columns[i] in self.text]
        values = [i for i in keep if i not in labels]
        need = {i: self._min_width(i) for i in keep}
        parts = _fold(labels, values, need, width)
        if len(parts) > MAX_PARTS or any(_size(need, part) > width for part in parts):
            yield from self._records(title, labels, values, width)
            return
        for number, part in enumerate(parts, 1):
            suffix = f" (part {number} of {len(parts)})" if len(parts) > 1 else ""
            yield self._table(title + suffix, part)

    def _records(self, title: str, labels: list[int], values: list[int], width: int) -> Iterator[Any]:
        """Too wide to fold: each row as its labels, then its values as ``column value`` items, lines filled
        at most ``width`` wide (an item is never split)."""
        yield Text(title, style="italic")
        for row in self.rows:
            yield Text(" · ".join(row[i] for i in labels if row[i]) or "–", style="bold")
            items = [f"{self.columns[i]} {row[i]}" for i in values]
            for line in _fill(items, width - 2):
                yield Text("  " + line, no_wrap=True, overflow="ignore")

    def _min_width(self, index: int) -> int:
        """A label's longest word (it wraps at spaces), else the header and the longest cell: never cut."""
        cells = [row[index] for row in self.rows]
        if self.columns[index] in self.text:
            words = [w for c in [self.columns[index], *cells] for w in c.split()]
            return max((cell_len(w) for w in words), default=1)
        lines = [line for c in [self.columns[index], *cells] for line in c.splitlines()]
        return max((cell_len(line) for line in lines), default=1)

    def _table(self, title: str, columns: list[int]) -> Table:
        table = Table(title=title, box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, title_justify="left")
        for i in columns:
            label = self.columns[i] in self.text
            table.add_column(self.columns[i], justify="left" if label else "right", no_wrap=not label,
                             min_width=self._min_width(i), overflow="fold")
        for row in self.rows:
            table.add_row(*(Text(row[i]) for i in columns))  # text, never console markup
        return table


def _size(need: dict[int, int], columns: Iterable[int]) -> int:
    """The width of a table of these columns, each at its narrowest."""
    cols = list(columns)
    return sum(need[c] for c in cols) + _GAP * max(0, len(cols) - 1)


def _fill(items: list[str], width: int) -> list[str]:
    """``items`` joined by `` · `` into lines of at most ``width`` characters (a longer item on a line alone)."""
    lines: list[str] = []
    for item in items:
        if lines and cell_len(lines[-1]) + 3 + cell_len(item) <= width:
            lines[-1] += " · " + item
        else:
            lines.append(item)
    return lines


def _fold(labels: list[int], values: list[int], need: dict[int, int], width: int) -> list[list[int]]:
    """The columns of each part: every part holds the labels, and as many value columns as fit."""
    def size(cols: Iterable[int]) -> int:
        return _size(need, cols)

    if size([*labels, *values]) <= width or not values:
        return [sorted([*labels, *values])]  # the columns in their order
    parts: list[list[int]] = []
    current: list[int] = []
    for column in values:
        if current and size([*labels, *current, column]) > width:
            parts.append(current)
            current = []
        current.append(column)
    parts.append(current)
    return [sorted([*labels, *part]) for part in parts]


def study_factors(rows: Iterable[dict[str, Any]], names: Sequence[str] = ("model", "mode", "language", "scale")
                  ) -> dict[str, str]:
    """The factors that hold one value over every row given (the statistics rows of every probe)."""
    seen: dict[str, set[str]] = {name: set() for name in names}
    for row in rows:
        for name in names:
            value = row.get(name)
            if value is not None and value == value:
                seen[name].add(str(value))
    return {name: next(iter(values)) for name, values in seen.items() if len(values) == 1}


_NUMERIC = re.compile(r"^[\s\d.,:;+\-–−\[\]()%e<>*=±/x]*$")


def _plain(value: Any) -> str:
    """What a rich table shows of a cell or header: markup read (as the table would), as plain text."""
    if value is None:
        return ""
    if isinstance(value, Text):
        return value.plain
    return Text.from_markup(value).plain if isinstance(value, str) else str(value)


def fit_table(table: Table) -> FitTable:
    """A rich table as a :class:`FitTable`: its left-aligned columns of words are the labels, papers named
    author–year in its title."""
    from biasatlas.report.citations import cite_papers

    columns = [_plain(c.header) for c in table.columns]
    cells = [[_plain(cell) for cell in c._cells] for c in table.columns]
    text = frozenset(name for name, column, values in zip(columns, table.columns, cells, strict=True)
                     if column.justify == "left" and not all(_NUMERIC.match(v) for v in values))
    rows = [list(row) for row in zip(*cells, strict=True)] if cells else []
    return FitTable(cite_papers(_plain(table.title)), columns, rows, text=text)


class WrappingConsole(Console):
    """A console whose every line wraps at its width, also where a caller asked for one long line (``soft_wrap``,
    which keeps a log line whole), and whose tables fit it (:func:`fit_table`): a summary is read on a
    terminal, at 80 columns too."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        from biasatlas.report.citations import cite_papers

        kwargs["soft_wrap"] = False  # papers named author–year, as the report names them
        super().print(*(fit_table(o) if isinstance(o, Table) else cite_papers(o) if isinstance(o, str) else o
                        for o in objects), **kwargs)
