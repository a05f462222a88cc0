"""MMHB descriptors (Massive Multilingual HolisticBias) and the choice of a form for a noun slot.

A pack's ``descriptors.mmhb.tsv`` is the upstream file verbatim (see ``data/languages/MMHB_NOTICE.md``).
Rows share an id up to a letter suffix (``P_D001a``/``P_D001b``: forms of one descriptor); the
``OPTION DESCRIPTON [SL]`` column names the form as ``<gender>_unspec_<number>_descriptor``.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

GENDERS = ("masculine", "feminine", "unspec")
NUMBERS = ("singular", "plural", "unspec")
_OPTION = re.compile(r"^(masculine|feminine|unspec)_unspec_(singular|plural|unspec)_descriptor$")
#: the form letter after the id's digits; upstream writes a few in upper case (es P_D006D, P_D009D)
_SUFFIX = re.compile(r"(?<=\d)[a-zA-Z]$")


@dataclass(frozen=True)
class Form:
    """One grammatical form of a descriptor."""

    gender: str
    number: str
    text: str


@dataclass(frozen=True)
class MMHBEntry:
    """A descriptor id with every form the file gives, in file order."""

    id: str
    axis: str
    sense: str
    forms: tuple[Form, ...]

    def form_for(self, gender: str, number: str, marked: bool) -> Form | None:
        """The form a slot of ``gender`` and ``number`` takes, or None when none fits.

        Marked languages (fr es it pt hi) take, in order: the exact gender and number, the gender
        with an unmarked number, an unmarked gender with the number, the fully unmarked form. A form
        of the other gender or number never fills the slot. Unmarked languages (id vi zh ko) take
        the unmarked form first, then any form (their nouns do not agree).
        """
        if not marked:
            order = [("unspec", "unspec"), ("unspec", number), ("unspec", "singular"), ("unspec", "plural")]
            for g, n in order:
                hit = self._first(g, n)
                if hit:
                    return hit
            return self.forms[0] if self.forms else None
        for g, n in ((gender, number), (gender, "unspec"), ("unspec", number), ("unspec", "unspec")):
            hit = self._first(g, n)
            if hit:
                return hit
        return None

    def _first(self, gender: str, number: str) -> Form | None:
        return next((f for f in self.forms if f.gender == gender and f.number == number), None)


def base_id(row_id: str) -> str:
    """``P_D001a`` -> ``P_D001`` (the id shared by a descriptor's forms and across languages)."""
    return _SUFFIX.sub("", row_id.strip())


@cache
def read_mmhb(path: Path) -> tuple[MMHBEntry, ...]:
    """Every descriptor of one MMHB file, in file order; malformed rows raise ValueError naming the line."""
    entries: dict[str, tuple[str, str, list[Form]]] = {}
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = next(reader)
        if [h.strip() for h in header[:2]] != ["ID", "HB AXIS"] or len(header) < 5:
            raise ValueError(f"{path}: not an MMHB descriptor file (header {header!r})")
        for line, row in enumerate(reader, start=2):
            if not row or not row[0].strip():
                continue
            match = _OPTION.match(row[3].strip())
            if len(row) < 5 or not match or not row[4].strip():
                raise ValueError(f"{path}:{line}: unreadable row {row!r}")
            key = base_id(row[0])
            forms = entries.setdefault(key, (row[1].strip(), row[2].strip(), []))[2]
            forms.append(Form(match.group(1), match.group(2), " ".join(row[4].split())))
    return tuple(MMHBEntry(k, a, s, tuple(f)) for k, (a, s, f) in entries.items())
