"""Native-speaker review of a language pack: a sheet to fill in, and the record a filled sheet leaves.

``biasatlas languages review --lang fr --n 200 --out sheet.csv`` writes a seeded, stratified sample of the
pack's rendered prompts (:mod:`biasatlas.pack_review.review_sample`), each with the English prompt of its design
cell, and a guide next to it. ``--apply sheet.csv --reviewer NAME`` checks every filled row against the pack
(the row's prompt rendered again must have its id) and appends a record to the pack folder's
``reviews.yaml``: who, when, how many prompts, the verdict counts, the sheet's sha256, the corrections.
A pack is called reviewed only on such records (:attr:`biasatlas.languages.Pack.reviews`; what they say:
:mod:`biasatlas.languages.reviews`).
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from biasatlas.languages import REVIEWS_FILE, Pack, read_reviews
from biasatlas.languages.reviews import VERDICTS
from biasatlas.pack_review.review_sample import (
    CONTACT,
    PackPrompts,
    ReviewError,
    Unit,
    design_key,
    parse_design,
    sample_units,
)

COLUMNS = ("prompt_id", "language", "probe", "axis", "group", "descriptor", "scenario", "frame", "prompt",
           "english_prompt", "english_match", "design", "verdict", "correction", "comment")
#: the columns --apply needs (the others are there for the reader)
REQUIRED = ("prompt_id", "language", "probe", "design", "verdict", "correction", "comment")
GUIDE = """How to fill in {sheet}

This sheet holds {n} prompts of the {name} ({code}) language pack, drawn at random (seed {seed}) and spread
over the contact and Samaritan probes, the groups' axes or categories and the scenarios or frames. The
prompts were drafted by a machine; you are asked whether a native speaker would write them.

For each row read `prompt` (what the model is asked) and fill in:
  verdict     ok      - natural, correct, and it names the group in `group` (and no other);
              awkward - understandable and correct, but not how a native speaker would put it;
              wrong   - a grammar error a native stumbles on, a question that asks something else,
                        the wrong group named, or an offensive word for the group.
  correction  how you would write the prompt (or the faulty part), where the verdict is not ok.
  comment     anything else (a regional usage, why the form is wrong, ...).

`english_prompt` is the English prompt of the same design cell (probe, scenario, framing, scale). The
translated packs were drafted from the design, not sentence by sentence from English, so the wording may
differ; read it for what is being asked. `english_match`: "cell and group" = the same cell and the same
group in English; "cell only" = the same cell, the group's English wording unknown to biasatlas (in
brackets: its axis and sense, or its English label); "none" = English has no such cell.
Leave `prompt_id`, `design` and the other columns as they are: they tie each row to its prompt. Rows left
without a verdict are not counted.

When done, record the review (the reviewer's name as it should appear, and the date of the reading):
  biasatlas languages review --apply {sheet} --reviewer "NAME" --date YYYY-MM-DD{pack_option}
"""


# ---- the sheet ----------------------------------------------------------------------------------------
def sheet_rows(prompts: PackPrompts, n: int, seed: int) -> list[dict[str, str]]:
    """The rows of a sheet: ``n`` prompts (fewer if the pack has fewer), contact first, then Samaritan."""
    rng = random.Random(seed + 1)  # the framing of each drawn contact cell: its own stream
    from biasatlas.probes.contact.data import CONTACTS

    english = _English()
    rows = []
    for unit in sample_units(prompts, n, seed):
        if unit.probe == CONTACT:
            contact = rng.choice(CONTACTS)
            rows.append(_contact_row(prompts, unit, contact, english))
        else:
            rows.append(_samaritan_row(prompts, unit, english))
    return rows


def _contact_row(prompts: PackPrompts, unit: Unit, contact: str, english: _English) -> dict[str, str]:
    cell_id, scale, action, axis, key = unit.design
    prompt, cell, d = prompts.contact_prompt(cell_id, scale, action, axis, key, contact)
    text, match = english.contact(cell, scale, action, contact, d)
    form = prompt.meta.get("descriptor_form") or d.label
    merged = f" (also {', '.join(d.merged_ids)})" if d.merged else ""
    return {"prompt_id": prompt.id, "language": prompt.language, "probe": CONTACT, "axis": axis,
            "group": str(form), "descriptor": f"{key}{merged}", "scenario": cell.scenario,
            "frame": f"{cell.principle}; {contact} contact; {scale}; {action} action",
            "prompt": prompt.messages[0].content, "english_prompt": text, "english_match": match,
            "design": design_key(unit, contact), "verdict": "", "correction": "", "comment": ""}


def _samaritan_row(prompts: PackPrompts, unit: Unit, english: _English) -> dict[str, str]:
    scenario_id, rephrasing, phrasing = unit.design
    prompt, who = prompts.samaritan_prompt(scenario_id, rephrasing, phrasing)
    text, match = english.samaritan(scenario_id, rephrasing, phrasing)
    return {"prompt_id": prompt.id, "language": prompt.language, "probe": "samaritan", "axis": who.category,
            "group": who.forms[prompt.language][0], "descriptor": phrasing, "scenario": scenario_id,
            "frame": f"rephrasing {rephrasing}", "prompt": prompt.messages[0].content, "english_prompt": text,
            "english_match": match, "design": design_key(unit), "verdict": "", "correction": "", "comment": ""}


class _English:
    """The English prompt of a design cell: the English pack's template of that cell, with the group's
    English descriptor where the pack's key is one (de, is), else a bracketed stand-in (MMHB ids)."""

    def __init__(self) -> None:
        from biasatlas.probes.contact.data import descriptors_for, template_sets

        tset = template_sets("en")["a"]
        self.tset = tset
        self.cells = {(c.principle, c.scenario): c for c in tset.cells}
        self.descriptors = {(d.axis, d.key): d for d in descriptors_for("en")}
        self.prompts = PackPrompts(_english_pack())

    def contact(self, cell: Any, scale: str, action: str, contact: str, d: Any) -> tuple[str, str]:
        from biasatlas.probes.contact.data import Descriptor, fill
        from biasatlas.probes.contact.plan import compose

        en = self.cells.get((cell.principle, cell.scenario))
        if en is None or action not in en.actions or scale not in self.tset.scales:
            return "", "none"
        own = self.descriptors.get((d.axis, d.key))
        # MMHB ids carry no English wording: the axis and sense; de/is descriptors carry their English label
        shown = d.label if d.mmhb is None else f"{d.axis}: {d.bucket.replace('_', ' ')}"
        stand_in = Descriptor(d.axis, d.bucket, d.key, d.key, pre={"pl": f"[{shown}]"})
        who = own or stand_in
        sentence = None if contact == "none" else fill(en.contact[contact], who, en.noun)
        text = compose(sentence, fill(en.actions[action][scale], who, en.noun), self.tset.scales[scale]["instruction"])
        return text, "cell and group" if own is not None else "cell only"

    def samaritan(self, scenario_id: str, rephrasing: int, phrasing: str) -> tuple[str, str]:
        try:
            prompt, _ = self.prompts.samaritan_prompt(scenario_id, rephrasing, phrasing)
        except (KeyError, StopIteration):
            return "", "none"
        return prompt.messages[0].content, "cell and group"


def _english_pack() -> Pack:
    from biasatlas.languages import pack

    return pack("en")


def write_sheet(rows: Sequence[dict[str, str]], out: Path, *, pack: Pack, seed: int, pack_option: str) -> Path:
    """Write the sheet (UTF-8 with a BOM, so spreadsheets read the script right) and its guide; the guide's path."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8-sig", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    guide = out.with_name(f"{out.stem}.guide.txt")
    guide.write_text(GUIDE.format(sheet=out.name, n=len(rows), name=pack.name, code=pack.code, seed=seed,
                                  pack_option=pack_option), encoding="utf-8")
    return guide


# ---- applying a filled sheet ----------------------------------------------------------------------------
def read_sheet(sheet: Path) -> tuple[list[dict[str, str]], str]:
    """The sheet's rows and the sha256 of its bytes; a missing column is an error."""
    try:
        data = sheet.read_bytes()
    except OSError as exc:
        raise ReviewError(f"{sheet}: {exc.strerror or exc}") from exc
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ReviewError(f"{sheet}: not UTF-8 text (save the sheet as CSV UTF-8)") from exc
    reader = csv.DictReader(text.splitlines(keepends=True))
    missing = [c for c in REQUIRED if c not in (reader.fieldnames or [])]
    if missing:
        raise ReviewError(f"{sheet}: missing column(s) {', '.join(missing)} (draw a sheet with --out)")
    return [dict(r) for r in reader], hashlib.sha256(data).hexdigest()


def review_record(sheet: Path, pack: Pack, reviewer: str, date: str | None) -> dict[str, Any]:
    """The record a filled sheet makes; every filled row is checked against the pack first."""
    reviewer = " ".join(reviewer.split())
    if not reviewer:
        raise ReviewError("--reviewer is empty: give the reviewer's name")
    day = _date(date)
    rows, digest = read_sheet(sheet)
    if any(r.get("sheet_sha256") == digest for r in pack.reviews):
        raise ReviewError(f"{sheet}: this sheet (sha256 {digest[:12]}…) is already recorded for {pack.code}")
    prompts, seen = PackPrompts(pack), set()
    verdicts: Counter[str] = Counter()
    corrections = []
    for line, row in enumerate(rows, start=2):
        verdict = (row.get("verdict") or "").strip().lower()
        if not verdict:
            continue  # not read
        if verdict not in VERDICTS:
            raise ReviewError(f"{sheet}: line {line}: unknown verdict {row['verdict']!r}; valid: {', '.join(VERDICTS)}")
        pid = (row.get("prompt_id") or "").strip()
        if pid in seen:
            raise ReviewError(f"{sheet}: line {line}: prompt {pid} appears twice")
        seen.add(pid)
        _check_row(prompts, row, pid, f"{sheet}: line {line}")
        verdicts[verdict] += 1
        correction, comment = (row.get("correction") or "").strip(), (row.get("comment") or "").strip()
        if verdict != "ok" or correction or comment:
            corrections.append({"prompt_id": pid, "probe": row["probe"], "design": row["design"],
                                "verdict": verdict, "prompt": row.get("prompt", ""), "correction": correction,
                                "comment": comment})
    if not verdicts:
        raise ReviewError(f"{sheet}: no row has a verdict (ok, awkward or wrong)")
    return {"reviewer": reviewer, "date": day, "language": pack.code, "prompts_reviewed": sum(verdicts.values()),
            "verdicts": {v: verdicts[v] for v in VERDICTS}, "sheet": sheet.name, "sheet_sha256": digest,
            "corrections": corrections}


def _date(date: str | None) -> str:
    if date is None:
        return dt.datetime.now(dt.UTC).date().isoformat()
    try:
        return dt.date.fromisoformat(date.strip()).isoformat()
    except ValueError as exc:
        raise ReviewError(f"--date {date!r} is not a date YYYY-MM-DD") from exc


def _check_row(prompts: PackPrompts, row: dict[str, str], pid: str, where: str) -> None:
    """The row's prompt, rendered again from its design, must be this pack's and have the row's id."""
    code = prompts.pack.code
    if (row.get("language") or "").strip() != code:
        raise ReviewError(f"{where}: language {row.get('language')!r}, not this pack's ({code})")
    design = parse_design(row.get("design") or "")
    try:
        if design[0] == CONTACT:
            prompt = prompts.contact_prompt(*[str(v) for v in design[1:7]])[0]
        else:
            prompt = prompts.samaritan_prompt(str(design[1]), int(design[2]), str(design[3]))[0]
    except (KeyError, StopIteration, IndexError, TypeError, ValueError):
        prompt = None
    if prompt is None or prompt.id != pid:
        raise ReviewError(f"{where}: prompt {pid or '(no id)'} is not a prompt of the {code} pack as it is now "
                          "(a sheet of another pack, an edited row, or the pack changed since: draw a new sheet)")


def append_record(pack: Pack, record: dict[str, Any]) -> Path:
    """Append the record to the pack folder's reviews file (written whole, then renamed into place)."""
    path = pack.path / REVIEWS_FILE
    records = [*read_reviews(pack.path), record]
    body = yaml.safe_dump({"reviews": records}, allow_unicode=True, sort_keys=False, width=120)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text("# Native-speaker reviews of this pack, recorded by `biasatlas languages review --apply`.\n"
                   "# One record per applied sheet; do not edit by hand.\n" + body, encoding="utf-8")
    tmp.replace(path)
    from biasatlas.languages import pack as shipped

    shipped.cache_clear()  # a shipped pack read before this record is out of date
    return path
