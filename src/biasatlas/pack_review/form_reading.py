"""The reading of every descriptor form in its role: a pack's ``forms_read.tsv``.

MMHB's human translations were made for MMHB's own sentences; a form is right only in the role our contact
sentences give it (beside the slot's noun, agreeing with it). The sheet lists, for each group the plan asks in
a language, the forms the slots take, the noun phrases they render to over every cell, one full sentence, and
the same descriptor's form in the other packs (what the id is meant to name). A reader adds what the phrases
mean when read back in English, a verdict and a note. The shipped file is that reading; a test holds it to the
pack: every group read, every phrase as the pack renders it today, no ``wrong`` verdict left.
"""

from __future__ import annotations

from typing import Any

from biasatlas.languages.form_readings import (
    COLUMNS,
    FILE,
    READING,
    VERDICTS,
    FormReadingError,
    Reading,
    read_file,
    write_file,
)

MMHB_PACKS = ("fr", "es", "it", "pt", "hi", "id", "vi", "zh", "ko")
__all__ = ["COLUMNS", "FILE", "MMHB_PACKS", "READING", "VERDICTS", "FormReadingError", "Reading", "problems",
           "read_file", "refreshed", "sheet_rows", "write_file"]


def _first_plural(descriptor: Any) -> str:
    forms = descriptor.mmhb.forms if descriptor.mmhb is not None else ()
    plural = [f.text for f in forms if f.number == "plural"]
    return (plural or [f.text for f in forms] or [str(descriptor.label)])[0]


def _elsewhere(code: str) -> dict[str, str]:
    """id -> "fr: sourds · es: sordos · …": the id's first plural form in each other MMHB pack."""
    from biasatlas.probes.contact.data import descriptors_for

    seen: dict[str, list[str]] = {}
    for other in MMHB_PACKS:
        if other == code:
            continue
        for d in descriptors_for(other):
            for member in (d, *d.merged):
                if member.mmhb is not None:
                    seen.setdefault(member.key, []).append(f"{other}: {_first_plural(member)}")
    return {k: " · ".join(v) for k, v in seen.items()}


def sheet_rows(code: str) -> list[dict[str, str]]:
    """One row per MMHB group the plan asks in ``code``, rendered as the pack renders it now (reading empty)."""
    from biasatlas.probes.contact.data import descriptors_for, fill, template_sets

    sets = template_sets(code)
    elsewhere = _elsewhere(code)
    rows = []
    for d in descriptors_for(code):
        if d.mmhb is None:
            continue
        forms: list[str] = []
        phrases: list[str] = []
        example = ""
        for tset in sets.values():
            for cell in tset.cells:
                if not d.fits(cell.agree, tset.grammar):
                    continue
                form = d.form(cell.agree, tset.grammar)
                if form is not None and form.text not in forms:
                    forms.append(form.text)
                for case in cell.noun:
                    phrase = d.render(cell.noun, case, cell.agree, tset.grammar)
                    if phrase not in phrases:
                        phrases.append(phrase)
                if not example:
                    example = fill(cell.contact["positive"], d, cell.noun, cell.agree, tset.grammar)
        rows.append({"id": d.key, "merged": " ".join(d.merged_ids), "axis": d.axis,
                     "sense": "" if d.bucket in ("--", "", "null") else d.bucket, "forms": " | ".join(forms),
                     "phrases": " | ".join(phrases), "example": example,
                     "elsewhere": elsewhere.get(d.key, ""), "means": "", "verdict": "", "note": ""})
    return rows


def refreshed(code: str, old: Reading | None) -> list[dict[str, str]]:
    """The sheet of ``code`` now, keeping the reading of each row whose phrases did not change."""
    kept = {r["id"]: r for r in (old.rows if old else ())}
    rows = sheet_rows(code)
    for row in rows:
        prior = kept.get(row["id"])
        if prior is not None and prior["phrases"] == row["phrases"]:
            row.update({k: prior[k] for k in READING})
    return rows


def problems(code: str, reading: Reading) -> list[str]:
    """Where a pack's reading does not hold for the pack as it renders now (empty: every group read)."""
    now = {r["id"]: r for r in sheet_rows(code)}
    read = {r["id"]: r for r in reading.rows}
    out = [f"{code}: {i} is asked but not read" for i in now if i not in read]
    out += [f"{code}: {i} is read but not asked (left out or merged)" for i in read if i not in now]
    for i, row in read.items():
        if i not in now:
            continue
        if row["phrases"] != now[i]["phrases"]:
            out.append(f"{code}: {i} was read as {row['phrases']!r}; it renders {now[i]['phrases']!r} now")
        if row["verdict"] not in VERDICTS:
            out.append(f"{code}: {i} has verdict {row['verdict']!r} (one of {', '.join(VERDICTS)})")
        elif row["verdict"] == "wrong":
            out.append(f"{code}: {i} is read as wrong ({row['note'] or row['means']}): fix it in forms.yaml or "
                       f"leave it out")
        if not row["means"].strip():
            out.append(f"{code}: {i} has no English reading")
    return out
