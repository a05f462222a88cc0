"""An oracle for the agreement tests, written from the MMHB files alone (not from biasatlas.languages.mmhb).

For a noun of gender g (masculine / feminine) in the plural, a marked language (fr es it pt hi) takes
the descriptor's row marked g + plural, else g + unspecified number, else unspecified gender + plural,
else the unmarked row; never a row of the other gender or of the singular. Unmarked languages (id vi zh
ko) take the unmarked row, else the first row.
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from pathlib import Path

import yaml

OPTION = re.compile(r"^(masculine|feminine|unspec)_unspec_(singular|plural|unspec)_descriptor$")


def mmhb_rows(path: Path) -> dict[str, list[tuple[str, str, str]]]:
    """descriptor id -> [(gender, number, text)] in file order."""
    out: dict[str, list[tuple[str, str, str]]] = {}
    with path.open(encoding="utf-8", newline="") as fh:
        rows = csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        next(rows)
        for row in rows:
            if not row or not row[0].strip():
                continue
            m = OPTION.match(row[3].strip())
            assert m, row
            out.setdefault(re.sub(r"(?<=\d)[a-zA-Z]$", "", row[0].strip()), []).append(
                (m.group(1), m.group(2), " ".join(row[4].split())))
    return out


def expected_form(rows: list[tuple[str, str, str]], gender: str, number: str, marked: bool) -> str | None:
    if marked:
        order = [(gender, number), (gender, "unspec"), ("unspec", number), ("unspec", "unspec")]
    else:
        order = [("unspec", "unspec"), ("unspec", number), ("unspec", "singular"), ("unspec", "plural")]
    for g, n in order:
        for rg, rn, text in rows:
            if (rg, rn) == (g, n):
                return text
    return None if marked else rows[0][2]


def _senses(path: Path) -> dict[str, list[tuple[str, str]]]:
    """descriptor id -> the (axis, sense) of each of its rows, in file order."""
    out: dict[str, list[tuple[str, str]]] = {}
    with path.open(encoding="utf-8", newline="") as fh:
        rows = csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        next(rows)
        for row in rows:
            if row and row[0].strip():
                out.setdefault(re.sub(r"(?<=\d)[a-zA-Z]$", "", row[0].strip()), []).append((row[1], row[2]))
    return out


def fixed_rows(path: Path) -> dict[str, list[tuple[str, str, str]]]:
    """``mmhb_rows`` as the pack uses them: rows filed under an id whose sense most packs give another
    sense are dropped, a ``forms.yaml`` entry replaces the id's rows, an ``omit`` entry removes the id."""
    rows = mmhb_rows(path)
    senses = _senses(path)
    votes: dict[str, Counter[tuple[str, str]]] = {}
    for other in path.parent.parent.glob("*/descriptors.mmhb.tsv"):
        for key, found in _senses(other).items():
            for sense in set(found):
                votes.setdefault(key, Counter())[sense] += 1
    for key, found in senses.items():
        if len(set(found)) > 1:
            keep = votes[key].most_common(1)[0][0]
            rows[key] = [r for r, s in zip(rows[key], found, strict=True) if s == keep]
    fixes_path = path.parent / "forms.yaml"
    fixes = yaml.safe_load(fixes_path.read_text(encoding="utf-8")) if fixes_path.exists() else {}
    for key, entry in (fixes.get("forms") or {}).items():
        rows[key] = [(*k.split("_"), text) for k, text in entry["forms"].items()]
    for key in fixes.get("omit") or {}:
        rows.pop(key, None)
    return rows
