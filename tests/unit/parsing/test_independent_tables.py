"""Accuracy of the answer readers on tables labelled independently of their rules (issue 27, point 4).

The tables in ``data/independent_*.csv`` were written and committed before the rules, their word lists,
their tests and docs/readers.md were read (see the tables' header comments). A row counts as read right
when the reader's value equals the label: the option ("affirmative"/"negative"), the rating, or no value
at all for an "unreadable" row (the reason is reported, not scored). The issue's floor is 97 % per
language and table. Run with ``-s`` to see the per-language figures and every misread.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import pytest
from independent_tables import (
    FLOOR,
    UNREADABLE,
    Row,
    measure,
    rating_reader,
    rating_value,
    yesno_reader,
    yesno_value,
)
from independent_tables import (
    report as misread_report,
)
from independent_tables import (
    rows as load_rows,
)

from biasatlas.records import Outcome


@cache
def yesno_rows() -> tuple[Row, ...]:
    """The yes/no table."""
    return load_rows("independent_yesno.csv")


@cache
def rating_rows() -> tuple[Row, ...]:
    """The ratings table."""
    return load_rows("independent_ratings.csv")


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


# The figures, kept on record (issue 27):
# - first measurement, the only independent one: 2026-11-27 12:40 UTC, tables at 0d9168e, main's readers at
#   82dd5e9, before any fix: yes/no en 113/120 = 94.2 %, de 93/100 = 93.0 %, is 57/60 = 95.0 %; ratings en
#   57/60 = 95.0 %, de 49/50 = 98.0 %. Below the 97 % floor, these tests were xfail.
# - after the fixes of the misread classes it found (helper "rules2", 2026-11-27, commits 050cd1a..dafe5e4, each
#   fixed as a class and tested on rows of its own in data/misread_classes.csv and
#   data/ratings_misread_classes.csv): yes/no en 120/120, de 100/100, is 60/60; ratings en 60/60, de 50/50
#   (100 % each). That figure is NO LONGER INDEPENDENT: the rules were changed after these rows were read, so it
#   says nothing about unseen answers; the 93-98 % above is the last independent estimate (of the readers before
#   these fixes). The xfail marks are gone because the tests pass; they now guard against regressions.
@pytest.mark.parametrize("language", ["en", "de", "is"])
def test_yesno_reader_accuracy(language: str) -> None:
    rows = tuple(r for r in yesno_rows() if r.language == language)
    read = yesno_reader
    misreads = measure(rows, read, yesno_value)
    report = misread_report(f"yes/no {language}", len(rows), misreads)
    print("\n" + "\n".join([report, *_reason_notes(rows, read, YESNO_REASONS)]))
    assert (len(rows) - len(misreads)) / len(rows) >= FLOOR, report


@pytest.mark.parametrize("language", ["en", "de"])
def test_rating_reader_accuracy(language: str) -> None:
    rows = tuple(r for r in rating_rows() if r.language == language)
    read = rating_reader
    misreads = measure(rows, read, rating_value)
    report = misread_report(f"ratings {language}", len(rows), misreads)
    print("\n" + "\n".join([report, *_reason_notes(rows, read, RATING_REASONS)]))
    assert (len(rows) - len(misreads)) / len(rows) >= FLOOR, report
