"""Independent measurement of the readers in the nine new languages (issue 29, point 4).

``data/languages/<code>/readers/independent_{yesno,ratings}.csv`` were written by helper L1 (branch
h-labeller, docs/validation/independent_reader_tables.md) without reading the readers, their word lists or
the packs' other tables, while helper "readers3" wrote the rules without reading them. A row is read right
when the reader's value equals the label: the option, the rating, or no value at all for an "unreadable"
row (the reason is not compared). The floor is 97 % per language and table; a language below it is a
non-strict xfail carrying its figure. Run with ``-s`` to see every misread.
"""

from __future__ import annotations

import csv
import io
from functools import cache
from pathlib import Path

import pytest

from biasatlas.languages import packs_root
from biasatlas.parsing.answers import AnswerParser
from biasatlas.parsing.numbers import RatingParser

NEW = ("fr", "es", "it", "pt", "hi", "id", "vi", "zh", "ko")
FLOOR = 0.97
UNREADABLE = "unreadable"

# The figures on record (docs/readers.md). FIRST measurement, the honest generalisation estimate: 2026-11-27
# 15:01 UTC, tables of h-labeller c3fbc19, readers of h-readers3 1dc16a4 (written without reading the tables):
#   yes/no  fr 81/90 90.0 %, es 80/90 88.9 %, it 77/90 85.6 %, pt 82/90 91.1 %, hi 78/90 86.7 %,
#           id 79/90 87.8 %, vi 80/90 88.9 %, zh 79/90 87.8 %, ko 73/90 81.1 %   (709/810 = 87.5 %)
#   ratings fr 47/50 94 %, es 46/50 92 %, it 49/50 98 %, pt 45/50 90 %, hi 48/50 96 %, id 47/50 94 %,
#           vi 46/50 92 %, zh 48/50 96 %, ko 48/50 96 %                          (424/450 = 94.2 %)
# AFTER the misread classes were fixed in general (paraphrases of degree, colloquial/polite/romanised
# yes-no, choices named after both options, apology + correction, years, times, money, values per case,
# approximate decades, inline list numbers, spoken short numbers): yes/no 801/810 (every language >= 97.8 %),
# ratings 450/450 -- no longer independent. The 9 yes/no rows still read otherwise are 8 words cut by the
# token limit ("Probab", "Thấ", "높"), which L1 labels as the option they begin and issue 27's independent
# labeller as unreadable (the readers keep them unreadable: never a guess), and "De temps en temps, mais
# pas régulièrement." (a hedge, read as "not regularly"). No language is below the floor.
YESNO_XFAIL: dict[str, str] = {}
RATING_XFAIL: dict[str, str] = {}


def _path(code: str, kind: str) -> Path:
    return packs_root() / code / "readers" / f"independent_{kind}.csv"


@cache
def table(code: str, kind: str) -> tuple[dict[str, str], ...]:
    """L1's table for ``code`` (``kind``: yesno or ratings); "#" lines at the top are its header."""
    path = _path(code, kind)
    if not path.exists():
        pytest.skip(f"{path.name} of {code} is not here (it comes with branch h-labeller)")
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    return tuple(csv.DictReader(io.StringIO("".join(lines[start:]))))


def _yesno_read(row: dict[str, str]) -> str:
    out = AnswerParser(row["scale"], row["language"]).parse(row["answer"])
    return UNREADABLE if out.value is None else str(out.value)


def _rating_read(row: dict[str, str]) -> str:
    value = RatingParser(row["language"]).parse(row["answer"]).value
    if value is None:
        return UNREADABLE
    return str(int(value)) if float(value).is_integer() else str(value)


def misreads(code: str, kind: str) -> tuple[int, list[str]]:
    """The rows of the table and a line for each row read otherwise than labelled."""
    rows = table(code, kind)
    read = _yesno_read if kind == "yesno" else _rating_read
    wrong = []
    for row in rows:
        got = read(row)
        if got != row["expected"].strip():
            scale = f"{row['scale']}: " if kind == "yesno" else ""
            wrong.append(f"  {scale}{row['answer']!r} -> {got}; expected {row['expected']} ({row['expected_reason']})")
    return len(rows), wrong


def _params(xfails: dict[str, str]) -> list[object]:
    return [pytest.param(c, marks=pytest.mark.xfail(reason=xfails[c], strict=False)) if c in xfails else c
            for c in NEW]


def test_tables_hold_the_documented_labels() -> None:
    for code in NEW:
        for row in table(code, "yesno"):
            assert row["scale"] in {"certainty", "likelihood", "frequency"} and row["language"] == code, row
            assert row["expected"] in {"affirmative", "negative", UNREADABLE}, row
        for row in table(code, "ratings"):
            assert row["expected"] == UNREADABLE or 1 <= float(row["expected"]) <= 100, row


@pytest.mark.parametrize("code", _params(YESNO_XFAIL))
def test_yesno_reader_on_the_independent_table(code: str) -> None:
    n, wrong = misreads(code, "yesno")
    figure = f"yes/no {code}: {n - len(wrong)}/{n} = {(n - len(wrong)) / n:.1%}"
    print(figure, *wrong, sep="\n")
    assert (n - len(wrong)) / n >= FLOOR, "\n".join([figure, *wrong])


@pytest.mark.parametrize("code", _params(RATING_XFAIL))
def test_rating_reader_on_the_independent_table(code: str) -> None:
    n, wrong = misreads(code, "ratings")
    figure = f"ratings {code}: {n - len(wrong)}/{n} = {(n - len(wrong)) / n:.1%}"
    print(figure, *wrong, sep="\n")
    assert (n - len(wrong)) / n >= FLOOR, "\n".join([figure, *wrong])
