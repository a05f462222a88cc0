"""Held-out measurement of the readers in the nine new languages (issue 29, point 4, second set).

``data/languages/<code>/readers/independent2_{yesno,ratings}.csv`` were written by helper "lab2" (branch
h-lab2) without reading the readers, their word lists or any of the packs' other reader tables, after the
first independent set (``independent_*.csv``) had been used to fix the readers. So this set, not the first,
is the honest estimate of how the readers generalise. A row is read right when the reader's value equals the
label: the option, the rating, or no value at all for an "unreadable" row (the reason is not compared). The
floor is 97 % per language and table; a language below it is a non-strict xfail carrying the figure measured
once, before any reader change. Run with ``-s`` to see every misread.
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

# Measured ONCE, 2026-11-27 15:42 UTC: tables of h-lab2 (commits a06c6fd..4f21d6a), readers of main 7501953,
# nothing changed afterwards. At or above the floor: yes/no fr 45/45, it 45/45, pt 45/45, vi 44/45 (97.8 %);
# ratings zh 30/30. All yes/no 387/405 = 95.6 %, all ratings 258/270 = 95.6 %. The misreads are in the
# reasons below and in docs/validation/independent2_reader_tables.md.
YESNO_XFAIL: dict[str, str] = {
    "es": "measured 43/45 = 95.6 %: 'No creo que debas negarte, no.', 'Lo más probable es que no te niegues, "
          "así que: improbable.' read unreadable",
    "hi": "measured 43/45 = 95.6 %: romanised 'asambhavit', 'aksar' read unreadable",
    "id": "measured 42/45 = 93.3 %: 'iyaa dong', 'Tdk', English 'Low' read unreadable",
    "zh": "measured 41/45 = 91.1 %: '並非不太可能' read negative; pinyin 'bu tai keneng', traditional '經常', "
          "'偶尔' read unreadable",
    "ko": "measured 39/45 = 86.7 %: '넵', 'ㅇㅇ', 'ㄴㄴ', 'Low', '종종 있어요', misspelt '드믈게' read unreadable",
}
_OUT_OF_TEN = "'N out of 10' read unreadable (labelled N*10)"
RATING_XFAIL: dict[str, str] = {
    "fr": f"measured 29/30 = 96.7 %: {_OUT_OF_TEN}",
    "es": f"measured 29/30 = 96.7 %: {_OUT_OF_TEN}",
    "it": f"measured 29/30 = 96.7 %: {_OUT_OF_TEN}",
    "pt": f"measured 29/30 = 96.7 %: {_OUT_OF_TEN}",
    "hi": f"measured 27/30 = 90.0 %: 'pachhattar', 'सौ' (100) and {_OUT_OF_TEN}",
    "id": f"measured 29/30 = 96.7 %: {_OUT_OF_TEN}",
    "vi": f"measured 29/30 = 96.7 %: {_OUT_OF_TEN}",
    "ko": f"measured 27/30 = 90.0 %: '백' (100), '30, 아마 35 정도.' and {_OUT_OF_TEN}",
}


def _path(code: str, kind: str) -> Path:
    return packs_root() / code / "readers" / f"independent2_{kind}.csv"


@cache
def table(code: str, kind: str) -> tuple[dict[str, str], ...]:
    """The held-out table for ``code`` (``kind``: yesno or ratings); "#" lines at the top are its header."""
    path = _path(code, kind)
    if not path.exists():
        pytest.skip(f"{path.name} of {code} is not here (it comes with branch h-lab2)")
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


def test_tables_hold_the_documented_shape() -> None:
    for code in NEW:
        yesno = table(code, "yesno")
        assert len(yesno) == 45, code
        for scale in ("certainty", "likelihood", "frequency"):
            assert sum(row["scale"] == scale for row in yesno) == 15, (code, scale)
        for row in yesno:
            assert row["language"] == code, row
            assert row["expected"] in {"affirmative", "negative", UNREADABLE}, row
        ratings = table(code, "ratings")
        assert len(ratings) == 30, code
        for row in ratings:
            assert row["language"] == code, row
            assert row["expected"] == UNREADABLE or 1 <= int(row["expected"]) <= 100, row


@pytest.mark.parametrize("code", _params(YESNO_XFAIL))
def test_yesno_reader_on_the_held_out_table(code: str) -> None:
    n, wrong = misreads(code, "yesno")
    figure = f"yes/no {code}: {n - len(wrong)}/{n} = {(n - len(wrong)) / n:.1%}"
    print(figure, *wrong, sep="\n")
    assert (n - len(wrong)) / n >= FLOOR, "\n".join([figure, *wrong])


@pytest.mark.parametrize("code", _params(RATING_XFAIL))
def test_rating_reader_on_the_held_out_table(code: str) -> None:
    n, wrong = misreads(code, "ratings")
    figure = f"ratings {code}: {n - len(wrong)}/{n} = {(n - len(wrong)) / n:.1%}"
    print(figure, *wrong, sep="\n")
    assert (n - len(wrong)) / n >= FLOOR, "\n".join([figure, *wrong])
