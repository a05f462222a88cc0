"""Reader accuracy on a pack's labelled tables (``readers/yesno*.csv``, ``readers/ratings*.csv``).

The tables have the columns of ``tests/unit/parsing/data/`` (yes/no: scale, language, answer,
expected, reason, source; ratings: language, answer, expected, reason, source). ``*_heldout.csv``
rows were held back while the word lists were written; their accuracy is the one to report.
A row is right when the value matches and, where there is no value, the reason matches too.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any


def load_table(path: Path) -> list[dict[str, str]]:
    """A labelled table; a literal "\\n" in an answer stands for a line break, "#" lines at the top are its header."""
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(line for line in handle if not line.startswith("#")))
    for row in rows:
        row["answer"] = row["answer"].replace("\\n", "\n")
    return rows


def yesno_misread(rows: list[dict[str, str]]) -> list[str]:
    """Rows the yes/no reader reads otherwise than labelled."""
    from biasatlas.parsing.answers import AnswerParser

    wrong = []
    for row in rows:
        outcome = AnswerParser(row["scale"], row["language"]).parse(row["answer"])
        value = None if row["expected"] == "none" else row["expected"]
        if outcome.value != value or (value is None and outcome.reason != row["reason"]):
            wrong.append(f"{row['scale']}/{row['language']} {row['answer']!r}: {outcome.value} {outcome.reason}")
    return wrong


def rating_misread(rows: list[dict[str, str]]) -> list[str]:
    """Rows the rating reader reads otherwise than labelled."""
    from biasatlas.parsing.numbers import parse_rating

    wrong = []
    for row in rows:
        outcome = parse_rating(row["answer"], row["language"])
        if row["expected"] == "none":
            right = outcome.value is None and outcome.reason == row["reason"]
        else:
            right = outcome.value is not None and math.isclose(outcome.value, float(row["expected"]))
        if not right:
            wrong.append(f"{row['language']} {row['answer']!r}: {outcome.value} {outcome.reason}")
    return wrong


def reader_accuracy(language: str, folder: Path) -> dict[str, Any]:
    """Rows and accuracy per table (dev and held-back) of the yes/no and rating readers."""
    out: dict[str, Any] = {"language": language}
    for kind, misread in (("yesno", yesno_misread), ("ratings", rating_misread)):
        total = 0
        for split, name in (("dev", f"{kind}.csv"), ("heldout", f"{kind}_heldout.csv")):
            path = folder / name
            if not path.exists():
                raise ValueError(f"missing labelled table {path}")
            rows = [r for r in load_table(path) if r["language"] == language]
            wrong = misread(rows)
            total += len(rows)
            out[f"{kind}_{split}_rows"] = len(rows)
            out[f"{kind}_{split}_accuracy"] = round(1 - len(wrong) / len(rows), 4) if rows else None
            out[f"{kind}_{split}_misread"] = wrong
        out["yesno_rows" if kind == "yesno" else "rating_rows"] = total
    return out
