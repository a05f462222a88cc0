"""A pack's reading of its descriptor forms in their role (``forms_read.tsv``): the file, its columns and
verdicts, and what it says (how many groups read, by whom). The sheet is rendered and held to the pack by
:mod:`biasatlas.pack_review.form_reading` (it renders the contact probe's phrases).
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FILE = "forms_read.tsv"
#: the columns the sheet renders (what was read)
RENDERED = ("id", "merged", "axis", "sense", "forms", "phrases", "example", "elsewhere")
#: the columns a reader fills
READING = ("means", "verdict", "note")
COLUMNS = RENDERED + READING
#: natural: the right group, as a native would say it; awkward: the right group, understood, not idiomatic;
#: fixed: forms.yaml replaces MMHB's form and the phrase is read again; wrong: names another group, a slur, or
#: breaks the sentence (must be fixed in forms.yaml or the descriptor left out before the file ships)
VERDICTS = ("natural", "awkward", "fixed", "wrong")


class FormReadingError(ValueError):
    """A reading file that cannot be read (the message names the file and line)."""


@dataclass(frozen=True)
class Reading:
    """A pack's reading file: its header lines (``# key: value``) and rows (column -> text)."""

    header: dict[str, str]
    rows: tuple[dict[str, str], ...]


def read_file(path: Path) -> Reading:
    """A reading file (tab-separated, ``# key: value`` header lines); errors name the file and line."""
    header: dict[str, str] = {}
    body = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise FormReadingError(f"{path}: cannot be read ({exc})") from exc
    for line in lines:
        if line.startswith("#"):
            key, sep, value = line[1:].partition(":")
            if sep:
                header[key.strip()] = value.strip()
        elif line.strip():
            body.append(line)
    reader = csv.DictReader(io.StringIO("\n".join(body)), delimiter="\t", quoting=csv.QUOTE_NONE)
    if tuple(reader.fieldnames or ()) != COLUMNS:
        raise FormReadingError(f"{path}: columns must be {', '.join(COLUMNS)}; found "
                               f"{', '.join(reader.fieldnames or ()) or 'none'}")
    rows = []
    for number, row in enumerate(reader, start=2):
        if None in row or any(v is None for v in row.values()):
            raise FormReadingError(f"{path}: line {number}: expected {len(COLUMNS)} tab-separated columns")
        rows.append({k: str(v) for k, v in row.items()})
    return Reading(header, tuple(rows))


def write_file(path: Path, rows: Sequence[dict[str, str]], header: dict[str, str]) -> Path:
    """Write rows (tabs and newlines in cells become spaces) under ``# key: value`` header lines."""
    out = io.StringIO()
    for key, value in header.items():
        out.write(f"# {key}: {value}\n")
    out.write("\t".join(COLUMNS) + "\n")
    for row in rows:
        out.write("\t".join(" ".join(str(row.get(c, "")).split()) for c in COLUMNS) + "\n")
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


def reading_summary(folder: Path) -> dict[str, Any] | None:
    """Groups read, verdict counts and who read them, from ``folder/forms_read.tsv`` (None: no file)."""
    path = folder / FILE
    if not path.is_file():
        return None
    reading = read_file(path)
    counts = Counter(r["verdict"] for r in reading.rows)
    read = sum(counts[v] for v in VERDICTS if v != "wrong")
    return {"groups": len(reading.rows), "read": read, "verdicts": {v: counts[v] for v in VERDICTS},
            "read_by": reading.header.get("read_by", "")}


def reading_status(folder: Path) -> str:
    """"475 of 475 groups read in their role (AI assistant …)", or "forms not read in their role"."""
    s = reading_summary(folder)
    if s is None or not s["read"]:
        return "forms not read in their role"
    by = f" ({s['read_by']})" if s["read_by"] else ""
    return f"{s['read']} of {s['groups']} groups read in their role{by}"
