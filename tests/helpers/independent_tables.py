"""The independent reader tables (issue 27): loading, reading each row, counting misreads, the report.

Shared by tests/unit/parsing/test_independent_tables.py and test_independent2_tables.py (one set each).
A row is read right when the reader's value equals the label: the option, the rating, or no value at all
for an "unreadable" row (the free-text reason is not scored).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from biasatlas.parsing.answers import AnswerParser
from biasatlas.parsing.numbers import RatingParser
from biasatlas.records import Outcome

DATA = Path(__file__).resolve().parents[1] / "unit" / "parsing" / "data"
FLOOR = 0.97
UNREADABLE = "unreadable"


@dataclass(frozen=True)
class Row:
    """One labelled answer."""

    language: str
    scale: str
    answer: str
    expected: str
    expected_reason: str


@dataclass(frozen=True)
class Misread:
    """A row the reader got wrong, with what it read."""

    row: Row
    value: object
    reason: str | None

    @property
    def kind(self) -> str:
        """'read unreadable' (a value for an unreadable row), 'missed' (no value), or 'wrong value'."""
        if self.row.expected == UNREADABLE:
            return "read unreadable"
        return "missed" if self.value is None else "wrong value"


def rows(name: str) -> tuple[Row, ...]:
    """A table of ``DATA``; only its leading header block is comments (answers may hold any character)."""
    lines = (DATA / name).read_text(encoding="utf-8").splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    reader = csv.DictReader(io.StringIO("".join(lines[start:])))
    return tuple(Row(r["language"], r.get("scale") or "rating", r["answer"], r["expected"], r["expected_reason"])
                 for r in reader)


def yesno_reader(row: Row) -> Outcome:
    return AnswerParser(row.scale, row.language).parse(row.answer)


def rating_reader(row: Row) -> Outcome:
    return RatingParser(row.language).parse(row.answer)


def yesno_value(out: Outcome) -> str:
    return UNREADABLE if out.value is None else str(out.value)


def rating_value(out: Outcome) -> str:
    value = out.value
    if value is None:
        return UNREADABLE
    return str(int(value)) if float(value).is_integer() else str(value)


def measure(table: tuple[Row, ...], read: Callable[[Row], Outcome], shown: Callable[[Outcome], str]) -> list[Misread]:
    """Every row whose read value differs from its label."""
    misreads = []
    for row in table:
        out = read(row)
        if shown(out) != row.expected:
            misreads.append(Misread(row, out.value, out.reason))
    return misreads


def report(title: str, n: int, misreads: list[Misread]) -> str:
    """The figure and every misread, one line each."""
    lines = [f"{title}: {n - len(misreads)}/{n} = {(n - len(misreads)) / n:.1%} (floor {FLOOR:.0%})"]
    for m in misreads:
        lines.append(
            f"  [{m.kind}] {m.row.scale}: {m.row.answer!r} -> {m.value!r} ({m.reason}); expected {m.row.expected}"
            + (f" ({m.row.expected_reason})" if m.row.expected_reason else "")
        )
    return "\n".join(lines)
