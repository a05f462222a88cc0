"""The quality flags of one overview cell (probe x model x language), the same for the grid and the validity section.

A cell's flags are its headline rows' own (too few units, one option, not tested, ...) and its answers'
(more than 20% unreadable or refused, cut at the token limit; :func:`biasatlas.stats.quality.answer_flags`).
The grid shows each as a ⚑ with its text on hover; the validity section counts and names the same ones, so a
cell with two ⚑ is never "not flagged" there.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from biasatlas.stats.quality import answer_flags


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def row_notes(row: Any) -> list[str]:
    """The flag notes of one headline row, one per flag (its codes where it has codes but no notes)."""
    notes = row.get("flag_notes")
    if not _missing(notes) and str(notes):
        return [note for note in str(notes).split(" | ") if note]
    codes = row.get("flags")
    return [] if _missing(codes) or not str(codes) else [c for c in str(codes).split(",") if c]


def answer_notes(vrow: Any) -> list[str]:
    """The flags of a cell's answers (unreadable, refusals): from its validity row."""
    if vrow is None:
        return []
    answers = int(vrow["answers"])
    readable = vrow.get("readable", answers)
    readable = answers if _missing(readable) else int(readable)
    refusals = vrow.get("refusals", 0)
    refusals = 0 if _missing(refusals) else int(refusals)
    return list(answer_flags(answers, answers - readable, refusals).notes)


def unique(notes: list[str]) -> list[str]:
    """``notes`` once each, in order."""
    return list(dict.fromkeys(n for n in notes if n))


def _base(model: str) -> str:
    return model.rsplit(" (", 1)[0] if model.endswith(")") and " (" in model else model


def validity_notes(validity: pd.DataFrame, headlines: pd.DataFrame | None) -> list[list[str]]:
    """Per row of ``validity`` (one probe): the flags of its overview cell(s), headline rows of the same model
    (or of ``model (mode)``, a model asked in several modes) and language included."""
    out: list[list[str]] = []
    for _, vrow in validity.iterrows():
        notes: list[str] = []
        if headlines is not None and not headlines.empty:
            model, language = str(vrow["model"]), str(vrow["language"])
            same = headlines[(headlines["model"].astype(str).map(_base) == _base(model))
                             & (headlines["language"].astype(str) == language)]
            for _, row in same.iterrows():
                notes += row_notes(row)
        out.append(unique(notes + answer_notes(vrow)))
    return out
