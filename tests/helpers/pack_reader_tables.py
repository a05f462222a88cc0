"""The independent labelled tables of the language packs (``readers/<prefix>_{yesno,ratings}.csv``): loading
them and reading them with the readers, for tests/unit/languages/test_independent*_readers.py."""

from __future__ import annotations

import csv
import io
from functools import cache

import pytest

from biasatlas.languages import packs_root
from biasatlas.parsing.answers import AnswerParser
from biasatlas.parsing.numbers import RatingParser

NEW = ("fr", "es", "it", "pt", "hi", "id", "vi", "zh", "ko")
FLOOR = 0.97
UNREADABLE = "unreadable"


@cache
def table(prefix: str, code: str, kind: str) -> tuple[dict[str, str], ...]:
    """The table ``<prefix>_<kind>.csv`` of pack ``code`` (``kind``: yesno or ratings); "#" lines at the top
    are its header. Skips when the file is not here."""
    path = packs_root() / code / "readers" / f"{prefix}_{kind}.csv"
    if not path.exists():
        pytest.skip(f"{path.name} of {code} is not here")
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


def misreads(prefix: str, code: str, kind: str) -> tuple[int, list[str]]:
    """The rows of the table and a line for each row read otherwise than labelled (an "unreadable" row is
    right when the reader gives no value; the reason is not compared)."""
    rows = table(prefix, code, kind)
    read = _yesno_read if kind == "yesno" else _rating_read
    wrong = []
    for row in rows:
        got = read(row)
        if got != row["expected"].strip():
            scale = f"{row['scale']}: " if kind == "yesno" else ""
            wrong.append(f"  {scale}{row['answer']!r} -> {got}; expected {row['expected']} ({row['expected_reason']})")
    return len(rows), wrong


def params(xfails: dict[str, str]) -> list[object]:
    """The nine codes, those in ``xfails`` marked as non-strict xfails with their measured figure."""
    return [pytest.param(c, marks=pytest.mark.xfail(reason=xfails[c], strict=False)) if c in xfails else c
            for c in NEW]


def check_floor(prefix: str, code: str, kind: str) -> None:
    """Print the table's figure and misreads; fail below the floor."""
    n, wrong = misreads(prefix, code, kind)
    figure = f"{'yes/no' if kind == 'yesno' else 'ratings'} {code}: {n - len(wrong)}/{n} = {(n - len(wrong)) / n:.1%}"
    print(figure, *wrong, sep="\n")
    assert (n - len(wrong)) / n >= FLOOR, "\n".join([figure, *wrong])
