"""Fixes to MMHB descriptor forms, at the source: rows filed under another descriptor's id, and a pack's
``forms.yaml`` (forms that replace MMHB's where they do not fit our sentences, descriptors left out).

MMHB's human translations were made for MMHB's own sentences; a form is right only in the role our
sentence gives it (a modifier beside the slot's noun). ``forms.yaml`` records, per descriptor id, the forms
used instead (``gender_number: text``), the English meaning read back and the reason; ``omit`` leaves a
descriptor out of the language with its reason. Upstream also files a few rows under the id of another
descriptor (es P_D039 "obesas" beside "de piel pálida": a feminine plural slot named the wrong group): an
id whose rows carry two senses keeps the rows of the sense the other packs give it.
"""

from __future__ import annotations

import csv
from collections import Counter
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

from biasatlas.languages.mmhb import GENDERS, NUMBERS, Form, MMHBEntry, base_id

FILE = "forms.yaml"


@dataclass(frozen=True)
class FormFixes:
    """A pack's replacements (id -> forms) and omissions (id -> reason), with each replacement's reason."""

    forms: dict[str, tuple[Form, ...]]
    reasons: dict[str, str]
    omit: dict[str, str]


def _form_key(key: str, text: str, where: str) -> Form:
    gender, _, number = key.partition("_")
    if gender not in GENDERS or number not in NUMBERS:
        raise ValueError(f"{where}: form key {key!r} is not gender_number ({'/'.join(GENDERS)} _ "
                         f"{'/'.join(NUMBERS)})")
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{where}: form {key!r} has no text")
    return Form(gender, number, " ".join(text.split()))


@cache
def read_form_fixes(folder: Path) -> FormFixes:
    """``folder/forms.yaml`` (none: no fixes); a malformed file raises ValueError naming the entry."""
    from biasatlas.datafiles import load_yaml

    path = folder / FILE
    if not path.is_file():
        return FormFixes({}, {}, {})
    data: Any = load_yaml(path) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping")
    forms: dict[str, tuple[Form, ...]] = {}
    reasons: dict[str, str] = {}
    for key, entry in (data.get("forms") or {}).items():
        where = f"{path}: forms.{key}"
        if not isinstance(entry, dict) or not isinstance(entry.get("forms"), dict) or not entry.get("reason"):
            raise ValueError(f"{where}: needs `forms` (gender_number: text) and a `reason`")
        forms[str(key)] = tuple(_form_key(str(k), v, where) for k, v in entry["forms"].items())
        reasons[str(key)] = str(entry["reason"])
    omit: dict[str, str] = {}
    for key, entry in (data.get("omit") or {}).items():
        reason = entry.get("reason") if isinstance(entry, dict) else entry
        if not reason:
            raise ValueError(f"{path}: omit.{key} needs a reason")
        omit[str(key)] = str(reason)
    return FormFixes(forms, reasons, omit)


def _senses(path: Path) -> dict[str, Counter[tuple[str, str]]]:
    """Per descriptor id, how many rows of ``path`` carry each (axis, sense)."""
    out: dict[str, Counter[tuple[str, str]]] = {}
    with path.open(encoding="utf-8", newline="") as fh:
        for row in list(csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))[1:]:
            if len(row) >= 5 and row[0].strip():
                out.setdefault(base_id(row[0]), Counter())[(row[1].strip(), row[2].strip())] += 1
    return out


@cache
def reference_senses() -> dict[str, tuple[str, str]]:
    """Per MMHB id, the (axis, sense) most of the shipped packs give it."""
    from biasatlas.datafiles import data_root

    votes: dict[str, Counter[tuple[str, str]]] = {}
    for path in sorted((data_root() / "languages").glob("*/descriptors.mmhb.tsv")):
        for key, senses in _senses(path).items():
            for sense in senses:
                votes.setdefault(key, Counter())[sense] += 1
    return {key: counts.most_common(1)[0][0] for key, counts in votes.items()}


def misfiled(path: Path) -> dict[str, tuple[str, str]]:
    """Ids of ``path`` whose rows carry several senses -> the sense kept (the other packs' sense)."""
    reference = reference_senses()
    out: dict[str, tuple[str, str]] = {}
    for key, senses in _senses(path).items():
        if len(senses) > 1:
            kept = reference.get(key)
            out[key] = kept if kept is not None and kept in senses else next(iter(senses))
    return out


def fixed_entries(entries: tuple[MMHBEntry, ...], folder: Path, rows: Path) -> tuple[MMHBEntry, ...]:
    """``entries`` (read from ``rows``) with misfiled rows dropped and ``folder``'s forms.yaml applied."""
    fixes = read_form_fixes(folder)
    kept_sense = misfiled(rows) if rows.is_file() else {}
    by_sense = _row_senses(rows) if kept_sense else {}
    out = []
    for entry in entries:
        if entry.id in fixes.omit:
            continue
        if entry.id in fixes.forms:
            entry = replace(entry, forms=fixes.forms[entry.id])
        elif entry.id in kept_sense:
            axis, sense = kept_sense[entry.id]
            forms = tuple(f for f, s in zip(entry.forms, by_sense[entry.id], strict=True) if s == (axis, sense))
            entry = replace(entry, axis=axis, sense=sense, forms=forms)
        out.append(entry)
    return tuple(out)


def _row_senses(path: Path) -> dict[str, list[tuple[str, str]]]:
    """Per id, the (axis, sense) of each of its rows in file order (the order of ``MMHBEntry.forms``)."""
    out: dict[str, list[tuple[str, str]]] = {}
    with path.open(encoding="utf-8", newline="") as fh:
        for row in list(csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))[1:]:
            if len(row) >= 5 and row[0].strip() and row[4].strip():
                out.setdefault(base_id(row[0]), []).append((row[1].strip(), row[2].strip()))
    return out
