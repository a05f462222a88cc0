"""`biasatlas languages check DIR`: validate a language pack before it ships.

Checks that every file the manifest names exists, that every contact slot fills with every
descriptor (and, for MMHB packs, with the form its noun's gender and number need), that no two
descriptors read as one wording unless the pack's ``same_wording.yaml`` lists their merge, that the
answer options of each scale are distinct, that the Samaritan phrasings name known groups and
use their MMHB form where they cite one (no two with one wording), and that the readers' word
lists and labelled tables are present (with their accuracy, see :mod:`biasatlas.languages.readers`).
"""

from __future__ import annotations

import csv
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biasatlas.datafiles import DataFileError, load_yaml
from biasatlas.languages import MAX_DESCRIPTOR_CHARS, MAX_PROMPT_CHARS, LanguagePackError, Pack, read_pack

REQUIRED_ROW_KEYS = ("file", "written_by", "native_speaker_reviewed", "validate")
#: what reading a table may raise on a file of the wrong shape (an empty file ends csv's reader at once)
UNREADABLE = (OSError, ValueError, StopIteration, IndexError, KeyError, csv.Error)
#: the columns each labelled reader table needs (readers.load_table, yesno_misread, rating_misread)
READER_COLUMNS = {"yesno": ("scale", "language", "answer", "expected", "reason"),
                  "ratings": ("language", "answer", "expected", "reason")}


def unreadable(part: str, path: Path | None, exc: BaseException) -> str:
    """One line for a table that cannot be read: its part, its file, why (never a traceback)."""
    name = path.name if path is not None else "?"
    if isinstance(exc, StopIteration):
        why = "empty file"
    elif isinstance(exc, csv.Error) and "field larger" in str(exc):
        why = f"a field is longer than {csv.field_size_limit():,} characters (a descriptor has at most " \
              f"{MAX_DESCRIPTOR_CHARS:,}, a prompt {MAX_PROMPT_CHARS:,})"
    elif isinstance(exc, IndexError | KeyError):
        why = f"a row or column is missing ({type(exc).__name__}: {exc})"
    else:
        why = " ".join(str(exc).split())[:300]
    return f"{part}: {why}" if name in why else f"{part}: {name}: {why}"


@dataclass
class Report:
    """What a check found: problems (the pack is not valid) and figures (cells, prompts, ...)."""

    pack: Pack | None = None
    problems: list[str] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems


def check_pack(folder: Path) -> Report:
    """Every check on the pack in ``folder``; never raises on bad data (it reports it)."""
    report = Report()
    try:
        report.pack = pack = read_pack(folder)
    except (LanguagePackError, DataFileError) as exc:
        report.problems.append(str(exc))
        return report
    _check_manifest(pack, report)
    checks = []
    if pack.file("contact_templates") and pack.file("contact_templates").exists():  # type: ignore[union-attr]
        checks.append(("contact", _check_contact))
    if pack.file("samaritan_groups") and pack.file("samaritan_groups").exists():  # type: ignore[union-attr]
        checks.append(("samaritan", _check_samaritan))
    checks.append(("readers", _check_readers))
    for part, check in checks:
        try:
            check(pack, report)
        except (TypeError, AttributeError, KeyError, IndexError, ValueError, OSError, RecursionError, StopIteration,
                csv.Error) as exc:
            # a file of the wrong shape (a number where a list belongs, a list where a mapping does): one
            # line naming the part, never a traceback
            report.problems.append(f"{part}: a file has the wrong structure ({type(exc).__name__}: "
                                   f"{' '.join(str(exc).split())[:200]})")
    return report


def _check_manifest(pack: Pack, report: Report) -> None:
    if not pack.provenance:
        report.problems.append(f"{pack.path}/pack.yaml: no provenance rows")
    for i, row in enumerate(pack.provenance):
        missing = [k for k in REQUIRED_ROW_KEYS if k not in row]
        if missing:
            report.problems.append(f"pack.yaml provenance[{i}]: missing {', '.join(missing)}")
    for key, rel in pack.files.items():
        path = pack.file(key)
        if path is None or not path.exists():
            report.problems.append(f"pack.yaml files.{key}: {rel} does not exist, is not a regular file, or lies "
                                   "outside the pack's folder")


def _options_problem(scale: str, options: list[str]) -> str | None:
    """Two options, different, and neither's words inside the other's ("Mungkin" / "Tidak mungkin"):
    the reader reads whole words, so "Probable" / "Improbable" are distinct."""
    from biasatlas.parsing.lexicon import TOKEN

    if len(options) != 2:
        return f"scale {scale}: {len(options)} options (need 2)"
    a, b = (tuple(TOKEN.findall(o.casefold())) for o in options)

    def inside(x: tuple[str, ...], y: tuple[str, ...]) -> bool:
        return any(y[i : i + len(x)] == x for i in range(len(y) - len(x) + 1))

    if not a or not b or inside(a, b) or inside(b, a):
        return f"scale {scale}: options {options} are not distinct (one's words are inside the other)"
    return None


def _check_contact(pack: Pack, report: Report) -> None:
    from biasatlas.probes.contact.data import (
        SLOT,
        ContactDataError,
        fill,
        parse_template_file,
        raw_descriptors_for,
        yaml_descriptors,
    )
    from biasatlas.probes.contact.plan import default_actions

    path = pack.file("contact_templates")
    assert path is not None
    try:
        tset = parse_template_file(path, pack.code)
    except ContactDataError as exc:
        report.problems.append(str(exc))
        return
    for scale, spec in tset.scales.items():
        problem = _options_problem(scale, list(spec["options"]))
        if problem:
            report.problems.append(f"{path.name}: {problem}")
    try:
        descriptors = (_pack_mmhb(pack) if str(pack.files.get("descriptors", "")).endswith(".tsv")
                       else raw_descriptors_for(pack.code) if pack.code == "en" else yaml_descriptors(pack.code))
        if str(pack.files.get("descriptors", "")).endswith(".tsv"):
            _form_figures(pack, report)
    except (ContactDataError, *UNREADABLE) as exc:
        report.problems.append(unreadable("descriptors", pack.file("descriptors"), exc))
        return
    if not _descriptors_fit(pack, descriptors, report):
        return
    given = len(descriptors)
    descriptors = _one_wording(pack, descriptors, tset, report)
    if tset.grammar and tset.grammar.get("order") not in ("pre", "post"):
        report.problems.append(f"{path.name}: grammar.order must be pre or post")
    actions = default_actions(pack.code)
    prompts = skipped = 0
    used: set[str] = set()
    forms: Counter[str] = Counter()
    for cell in tset.cells:
        if any(d.mmhb is not None for d in descriptors) and not cell.agree:
            report.problems.append(f"{path.name}: cell {cell.id} has MMHB descriptors but no 'agree' (gender/number)")
            continue
        texts = [cell.contact["positive"], cell.contact["negative"]]
        texts += [cell.actions[a][s] for a in actions if a in cell.actions for s in tset.scales]
        for d in descriptors:
            if not d.fits(cell.agree, tset.grammar):
                skipped += 1
                continue
            used.add(d.key)
            form = d.form(cell.agree, tset.grammar)
            for text in texts:
                out = fill(text, d, cell.noun, cell.agree, tset.grammar)
                if len(out) > MAX_PROMPT_CHARS:
                    report.problems.append(f"{path.name}: cell {cell.id}: a prompt of {len(out):,} characters, longer "
                                           f"than {MAX_PROMPT_CHARS:,} characters (the most a prompt may have)")
                    return
                if SLOT.search(out) or "{" in out:
                    report.problems.append(f"{path.name}: cell {cell.id}: a slot did not fill: {out!r}")
                    return
                if form is not None and form.text not in out:
                    report.problems.append(f"{path.name}: cell {cell.id}: {d.key} form {form.text!r} missing")
                    return
            if form is not None:
                forms[f"{form.gender}/{form.number}"] += 1
            prompts += 3 * len(tset.scales) * len([a for a in actions if a in cell.actions])
    report.figures.update({
        "cells": len(tset.cells), "scales": sorted(tset.scales), "actions": actions,
        "descriptors": given, "groups": len(descriptors),
        "descriptors_used": len(used),
        "cell_descriptor_pairs_skipped": skipped, "contact_prompts_all_scales": prompts,
        "mmhb_forms_used": dict(forms),
    })


def _descriptors_fit(pack: Pack, descriptors: tuple[Any, ...], report: Report) -> bool:
    """A table with descriptors, none longer than MAX_DESCRIPTOR_CHARS (in any of its forms)."""
    path = pack.file("descriptors")
    name = path.name if path is not None else "descriptors"
    if not descriptors:
        report.problems.append(f"descriptors: {name}: no descriptors")
        return False
    for d in descriptors:
        longest = max([len(str(d.label)), *(len(f.text) for f in (d.mmhb.forms if d.mmhb is not None else ()))])
        if longest > MAX_DESCRIPTOR_CHARS:
            report.problems.append(f"descriptors: {name}: {d.key} has {longest:,} characters (a descriptor has at "
                                   f"most {MAX_DESCRIPTOR_CHARS:,} characters)")
            return False
    return True


def _one_wording(pack: Pack, descriptors: tuple[Any, ...], tset: Any, report: Report) -> tuple[Any, ...]:
    """The groups the plan asks (descriptors of one wording merged); a merge ``same_wording.yaml`` does not
    list, or one it lists that the data do not make, is a problem (issue 37)."""
    from biasatlas.probes.contact.wording import (
        SAME_WORDING,
        collisions,
        merges,
        one_per_wording,
        read_same_wording,
        slot_classes,
        wording,
    )

    slots = slot_classes([tset])
    declared = {str(e["keep"]): tuple(str(i) for i in e.get("ids") or ()) for e in read_same_wording(pack.path)}
    groups = one_per_wording(descriptors, slots, set(declared))
    made = merges(groups)
    for cluster in collisions(descriptors, slots):
        members = [descriptors[i] for i in cluster]
        keep = next(g for g in groups if g.merged and {g.key, *g.merged_ids} >= {m.key for m in members})
        if declared.get(keep.key) != made[keep.key]:
            shared = next((w for s in slots for w in [wording(members[0], s)]
                           if w is not None and sum(wording(m, s) == w for m in members) > 1), "?")
            report.problems.append(
                f"descriptors {', '.join(m.key for m in members)} read as one wording ({shared!r}): the plan asks "
                f"them as one group ({keep.key}); list it in {SAME_WORDING} (keep: {keep.key}, ids: "
                f"{list(made[keep.key])}) or give one of them another wording")
    for keep_id, ids in declared.items():
        if made.get(keep_id) != ids:
            report.problems.append(f"{SAME_WORDING}: {keep_id} + {list(ids)} is not a merge the data make "
                                   f"({keep_id}: {list(made.get(keep_id, ()))})")
    report.figures["descriptors_merged"] = sum(len(ids) for ids in made.values())
    return groups


def _pack_mmhb(pack: Pack) -> tuple[Any, ...]:
    """The pack's MMHB descriptors, read from the pack folder (works for a pack not yet shipped)."""
    from biasatlas.languages.forms import fixed_entries
    from biasatlas.languages.mmhb import read_mmhb
    from biasatlas.probes.contact.data import Descriptor

    path = pack.file("descriptors")
    assert path is not None
    return tuple(Descriptor(axis=e.axis, bucket=e.sense, key=e.id, label=e.forms[0].text, mmhb=e)
                 for e in fixed_entries(read_mmhb(path), pack.path, path))  # as the plan reads them


def _form_figures(pack: Pack, report: Report) -> None:
    """How many MMHB forms the pack replaces or leaves out (forms.yaml), and rows filed under another id."""
    from biasatlas.languages.forms import misfiled, read_form_fixes

    fixes = read_form_fixes(pack.path)
    path = pack.file("descriptors")
    report.figures["descriptor_forms_replaced"] = len(fixes.forms)
    report.figures["descriptors_left_out"] = len(fixes.omit)
    report.figures["mmhb_ids_with_misfiled_rows"] = len(misfiled(path)) if path is not None else 0


def _check_samaritan(pack: Pack, report: Report) -> None:
    from biasatlas.probes.samaritan.data import PLACEHOLDERS

    groups_path, scen_path = pack.file("samaritan_groups"), pack.file("samaritan_scenarios")
    assert groups_path is not None
    if scen_path is None or not scen_path.exists():
        report.problems.append("samaritan: groups without scenarios")
        return
    groups, scenarios = load_yaml(groups_path), load_yaml(scen_path)
    if not isinstance(scenarios, dict) or not isinstance(scenarios.get("answer_instruction"), str) \
            or not isinstance(scenarios.get("scenarios"), list):
        report.problems.append(f"{scen_path.name}: needs 'answer_instruction' (text) and 'scenarios' (a list)")
        return
    if not isinstance(groups, dict) or "phrasings" not in groups:
        return  # en/de share data/samaritan/groups.yaml (checked by the probe's own tests)
    try:  # an unreadable descriptor file is reported by the contact check
        mmhb = ({d.key: d for d in _pack_mmhb(pack)} if str(pack.files.get("descriptors", "")).endswith(".tsv")
                else {})
    except UNREADABLE:  # ContactDataError is a ValueError
        mmhb = {}
    cited = 0
    for item in groups["phrasings"]:
        for key in ("phrasing", "indefinite", "definite"):
            if not item.get(key):
                report.problems.append(f"{groups_path.name}: a phrasing lacks {key}: {item}")
        ref = item.get("mmhb")
        if ref:
            cited += 1
            entry = mmhb.get(ref)
            # a zh form is cited by its stem too: 白人的 (modifier with the linker 的) in 一位白人
            texts = {t for f in (entry.mmhb.forms if entry is not None and entry.mmhb else ())
                     for t in (f.text, f.text.removesuffix("的")) if t}
            if not any(t.casefold() in item["indefinite"].casefold() for t in texts):
                report.problems.append(f"{groups_path.name}: {item['phrasing']} cites MMHB {ref} but does not use "
                                       "any of its forms")
    seen: dict[str, str] = {}
    for item in [groups.get("control") or {}, *groups["phrasings"]]:
        for key in ("indefinite", "definite"):
            text = " ".join(str(item.get(key, "")).casefold().split())
            name = str(item.get("phrasing", "control"))
            if text and seen.setdefault(f"{key}:{text}", name) != name:
                report.problems.append(f"{groups_path.name}: {seen[f'{key}:{text}']} and {name} read as one "
                                       f"wording ({text!r}): two groups, one question")
    n = 0
    for s in scenarios.get("scenarios", []):
        for r in s.get("rephrasings", []):
            n += 1
            import re

            names = set(re.findall(r"\{(\w+)\}", r))
            if len(str(r)) > MAX_PROMPT_CHARS:
                report.problems.append(f"{scen_path.name}: {s.get('id')}: a rephrasing of {len(str(r)):,} characters, "
                                       f"longer than {MAX_PROMPT_CHARS:,} characters (the most a prompt may have)")
            elif not names or not names <= set(PLACEHOLDERS):
                report.problems.append(f"{scen_path.name}: {s.get('id')}: bad placeholders in {r!r}")
    report.figures.update({"samaritan_scenarios": len(scenarios.get("scenarios", [])),
                           "samaritan_rephrasings": n, "samaritan_phrasings": len(groups["phrasings"]),
                           "samaritan_phrasings_from_mmhb": cited})


def _check_readers(pack: Pack, report: Report) -> None:
    from biasatlas.languages.readers import reader_accuracy

    words = pack.file("reader_words")
    if words is None or not words.exists():
        report.problems.append("readers: no word list (files.reader_words)")
        return
    tables = pack.file("reader_tables")
    if tables is None:
        return  # en/de/is: labelled tables live in tests/unit/parsing
    if not _reader_columns(tables, report):
        return
    try:
        report.figures["reader"] = acc = reader_accuracy(pack.code, tables)
    except UNREADABLE as exc:
        report.problems.append(unreadable("readers", None, exc) if not str(exc).startswith("missing labelled")
                               else f"readers: {exc}")
        return
    if acc["yesno_rows"] < 80 or acc["rating_rows"] < 40:
        report.problems.append(f"readers: labelled tables too small ({acc['yesno_rows']} yes/no, "
                               f"{acc['rating_rows']} ratings; need >= 80 and >= 40)")


def _reader_columns(folder: Path, report: Report) -> bool:
    """Each labelled table present with its columns (a table without its answer column is a problem, named)."""
    ok = True
    for kind, columns in READER_COLUMNS.items():
        for name in (f"{kind}.csv", f"{kind}_heldout.csv"):
            path = folder / name
            if not path.is_file():
                continue  # reader_accuracy names a missing table
            try:  # every row: a field past csv's limit is named with its table here
                with path.open(encoding="utf-8", newline="") as handle:
                    rows = csv.reader(line for line in handle if not line.startswith("#"))
                    header = next(rows, None)
                    for _ in rows:
                        pass
            except UNREADABLE as exc:
                report.problems.append(unreadable("readers", path, exc))
                ok = False
                continue
            missing = [c for c in columns if c not in (header or [])]
            if missing:
                report.problems.append(f"readers: {name} has no column {', '.join(missing)} (it needs "
                                       f"{', '.join(columns)})")
                ok = False
    return ok
