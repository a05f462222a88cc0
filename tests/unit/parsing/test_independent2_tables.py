"""Second independent measurement of the answer readers (issue 27): fresh tables, never used to fix rules.

``data/independent2_*.csv`` were written and committed (975fcf2) by helper "readcheck2" before the readers,
their word lists, their tests and docs/readers.md were read (see the tables' header comments). A row is
read right when the reader's value equals the label: the option ("affirmative"/"negative"), the rating,
or no value at all for an "unreadable" row (the free-text reason is not scored). The issue's floor is
97 % per language and table; a figure below it is kept as a non-strict xfail carrying the measured
figure, so the record stays honest and the tables are never tuned to. Run with ``-s`` to see every misread.
"""

from __future__ import annotations

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


@cache
def yesno_rows() -> tuple[Row, ...]:
    """The yes/no table."""
    return load_rows("independent2_yesno.csv")


@cache
def rating_rows() -> tuple[Row, ...]:
    """The ratings table."""
    return load_rows("independent2_ratings.csv")


def test_tables_have_the_planned_size_and_labels() -> None:
    yesno, ratings = yesno_rows(), rating_rows()
    assert {lang: sum(r.language == lang for r in yesno) for lang in ("en", "de", "is")} == {
        "en": 100,
        "de": 80,
        "is": 50,
    }
    assert {lang: sum(r.language == lang for r in ratings) for lang in ("en", "de")} == {"en": 50, "de": 40}
    for r in yesno:
        assert r.scale in {"certainty", "likelihood", "frequency"}, r
        assert r.expected in {"affirmative", "negative", UNREADABLE}, r
        assert r.expected != UNREADABLE or r.expected_reason, r
    for r in ratings:
        assert r.expected == UNREADABLE or 1 <= int(r.expected) <= 100, r
        assert r.expected != UNREADABLE or r.expected_reason, r


# The figures, kept on record (issue 27). Single measurement: 2026-11-27 13:54 UTC, tables at 975fcf2 (committed
# before any reader code was read), readers as on branch h-readcheck2 at that commit (= main when branched).
# yes/no en 98/100 = 98.0 %, de 76/80 = 95.0 %, is 48/50 = 96.0 %; ratings en 49/50 = 98.0 %, de 40/40 = 100 %.
# Misreads: self-corrections read by the first option in de/is (en ones were read right), "Y" and
# "Yes or No: No" (en), "Ich würde davon abraten." (de), "Answer: 92.5" read as a rating (en).
# The tables are not to be edited to these readers; a rule fix lifts the xfail (strict=False) but then this
# table, too, stops being an independent estimate.
YESNO_XFAIL: dict[str, str] = {
    "de": "independent measurement 2026-11-27: yes/no de 76/80 = 95.0 % < 97 % (3 self-corrections, 1 advice-against)",
    "is": "independent measurement 2026-11-27: yes/no is 48/50 = 96.0 % < 97 % (2 self-corrections)",
}
RATING_XFAIL: dict[str, str] = {}


def _params(languages: list[str], xfails: dict[str, str]) -> list[object]:
    return [
        pytest.param(lang, marks=pytest.mark.xfail(reason=xfails[lang], strict=False)) if lang in xfails else lang
        for lang in languages
    ]


@pytest.mark.parametrize("language", _params(["en", "de", "is"], YESNO_XFAIL))
def test_yesno_reader_accuracy(language: str) -> None:
    rows = tuple(r for r in yesno_rows() if r.language == language)
    misreads = measure(rows, yesno_reader, yesno_value)
    report = misread_report(f"yes/no {language}", len(rows), misreads)
    print("\n" + report)
    assert (len(rows) - len(misreads)) / len(rows) >= FLOOR, report


@pytest.mark.parametrize("language", _params(["en", "de"], RATING_XFAIL))
def test_rating_reader_accuracy(language: str) -> None:
    rows = tuple(r for r in rating_rows() if r.language == language)
    misreads = measure(rows, rating_reader, rating_value)
    report = misread_report(f"ratings {language}", len(rows), misreads)
    print("\n" + report)
    assert (len(rows) - len(misreads)) / len(rows) >= FLOOR, report
