"""Data of the contact probe: template files per language and descriptor sets, validated.

Templates: ``data/contact/<lang>/templates*.yaml`` (schema in ``data/contact/README.md``). A slot
``{group:CASE}`` in a sentence is filled with the group noun phrase in that grammatical case: the
cell's noun in that case plus the descriptor (before the noun for HolisticBias adjectives,
after it for post-noun phrases such as "students who use wheelchairs" or "Kollegen aus Syrien").
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from biasatlas.datafiles import DataFileError, data_root, load_yaml
from biasatlas.languages.mmhb import Form, MMHBEntry, read_mmhb
from biasatlas.languages.particles import PARTICLE, particle_for

NAME = "contact"  # the probe's name in the study
SCALES = ("certainty", "likelihood", "frequency")
CONTACTS = ("none", "positive", "negative")
ACTIONS = ("positive", "negative")
PRINCIPLES = (
    "equal_status",
    "common_goals",
    "intergroup_cooperation",
    "support_of_authorities",
    "extended_contact",
    "virtual_contact",
)
SCENARIOS = ("education", "workplace", "sports", "community", "healthcare")
HB_VERSIONS = ("v1.0", "v1.1")
SLOT = re.compile(r"\{group:(\w+)\}")


class ContactDataError(DataFileError):
    """A template or descriptor file is malformed; the message names the file and the place."""


# ---- descriptors ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Descriptor:
    """A group descriptor and how it joins a noun.

    Exactly one of ``pre`` (adjective forms by case, before the noun), ``post`` (an invariant
    phrase after the noun) or ``phrase`` (a HolisticBias noun phrase with a ``{noun}`` slot, or a
    fixed plural phrase that replaces the noun) is set.
    """

    axis: str
    bucket: str
    key: str
    label: str
    pre: dict[str, str] | None = None
    post: str | None = None
    phrase: str | None = None
    preference: str | None = None
    #: an MMHB descriptor: its grammatical forms; the slot's gender and number pick one
    mmhb: MMHBEntry | None = None
    #: descriptors of the same wording folded into this one when the language was loaded
    #: (:mod:`biasatlas.probes.contact.wording`); they fill a slot this one has no form for
    merged: tuple[Descriptor, ...] = ()

    @property
    def merged_ids(self) -> tuple[str, ...]:
        """The folded descriptors' keys (``axis:key`` for one listed again under another axis)."""
        return tuple(m.key if m.key != self.key else f"{m.axis}:{m.key}" for m in self.merged)

    def _own_form(self, agree: dict[str, str] | None, grammar: dict[str, Any] | None) -> Form | None:
        if self.mmhb is None:
            return None
        agree, grammar = agree or {}, grammar or {}
        return self.mmhb.form_for(agree.get("gender", "unspec"), agree.get("number", "unspec"),
                                  bool(grammar.get("marked", False)))

    def _speaker(self, agree: dict[str, str] | None, grammar: dict[str, Any] | None) -> Descriptor | None:
        """Who fills the slot: this descriptor, else the first folded one with a form for it, else none."""
        if self.mmhb is None or self._own_form(agree, grammar) is not None:
            return self
        return next((m for m in self.merged if m.mmhb is None or m._own_form(agree, grammar) is not None), None)

    def form(self, agree: dict[str, str] | None, grammar: dict[str, Any] | None) -> Form | None:
        """The MMHB form a slot agreeing with ``agree`` takes (None: none fits, or not MMHB)."""
        speaker = self._speaker(agree, grammar)
        return None if speaker is None else speaker._own_form(agree, grammar)

    def fits(self, agree: dict[str, str] | None, grammar: dict[str, Any] | None) -> bool:
        """Whether the descriptor can fill a slot of that agreement (always, unless MMHB lacks the form)."""
        return self._speaker(agree, grammar) is not None

    def render(self, noun_forms: dict[str, str], case: str, agree: dict[str, str] | None = None,
               grammar: dict[str, Any] | None = None) -> str:
        speaker = self._speaker(agree, grammar) or self
        noun = noun_forms[case]
        if speaker.mmhb is not None:
            return _render_mmhb(speaker, noun, agree or {}, grammar or {})
        if speaker.pre is not None:
            return f"{speaker.pre.get(case, speaker.pre.get('pl', ''))} {noun}"
        if speaker.post is not None:
            return f"{noun} {speaker.post}"
        assert speaker.phrase is not None
        return speaker.phrase.replace("{noun}", noun).strip()


def _render_mmhb(d: Descriptor, noun: str, agree: dict[str, str], grammar: dict[str, Any]) -> str:
    """Noun and MMHB form in the language's order: ``pre`` (hi, ko, zh; zh adds its linker 的) or ``post``."""
    form = d.form(agree, grammar)
    if form is None:
        raise ContactDataError(f"descriptor {d.key} has no form for a {agree} slot")
    if grammar.get("order") == "pre":
        text = form.text
        linker = str(grammar.get("linker", ""))
        if linker and not text.endswith(linker):
            text += linker
        return f"{text}{grammar.get('separator', ' ')}{noun}"
    return f"{noun} {form.text}"


@cache
def holistic_bias_descriptors(version: str = "v1.0") -> tuple[Descriptor, ...]:
    """English descriptors from the shipped HolisticBias files, standalone noun phrases included."""
    if version not in HB_VERSIONS:
        raise ContactDataError(f"unknown HolisticBias version {version!r}; valid: {', '.join(HB_VERSIONS)}")
    folder = data_root() / "holistic_bias" / version
    descriptors: dict[tuple[str, str], Descriptor] = {}
    for axis, buckets in json.loads((folder / "descriptors.json").read_text()).items():
        for bucket, items in buckets.items():
            for item in items:
                text = item if isinstance(item, str) else item["descriptor"]
                pref = None if isinstance(item, str) else item.get("preference")
                descriptors.setdefault(
                    (axis, text), Descriptor(axis, bucket, text, text, pre={"pl": text}, preference=pref)
                )
    standalone = json.loads((folder / "standalone_noun_phrases.json").read_text())
    for axis, items in standalone.items():
        for item in items:
            obj = {"noun_phrase": item} if isinstance(item, str) else item
            plural = obj.get("plural_noun_phrase", obj["noun_phrase"])
            # "{article} {noun} who use wheelchairs" -> "{noun} who use wheelchairs"
            phrase = plural.replace("{article}", "").strip()
            label = phrase.replace("{noun}", "…").strip()
            descriptors.setdefault(
                (axis, label),
                Descriptor(axis, "standalone", label, label, phrase=phrase, preference=obj.get("preference")),
            )
    return tuple(descriptors.values())


def _load_yaml(path: Path) -> dict[str, Any]:
    try:
        data = load_yaml(path)
    except DataFileError as exc:
        raise ContactDataError(str(exc)) from exc
    if not isinstance(data, dict):
        raise ContactDataError(f"{path}: expected a mapping at the top level")
    return data


@cache
def yaml_descriptors(language: str) -> tuple[Descriptor, ...]:
    """Descriptors of a non-English language from ``data/contact/<lang>/descriptors.yaml``."""
    path = data_root() / "contact" / language / "descriptors.yaml"
    if not path.exists():
        raise ContactDataError(f"no descriptor file for language {language!r} ({path})")
    data = _load_yaml(path)
    out: list[Descriptor] = []
    for axis, items in (data.get("axes") or {}).items():
        for i, item in enumerate(items):
            where = f"{path}: axes.{axis}[{i}]"
            if not isinstance(item, dict) or "key" not in item:
                raise ContactDataError(f"{where}: each descriptor needs a 'key'")
            forms = [k for k in ("pre", "post", "phrase") if k in item]
            if len(forms) != 1:
                raise ContactDataError(f"{where}: give exactly one of pre / post / phrase")
            out.append(
                Descriptor(
                    axis=axis,
                    bucket=str(item.get("bucket", axis)),
                    key=str(item["key"]),
                    label=str(item.get("label_en", item["key"])),
                    pre=item.get("pre"),
                    post=item.get("post"),
                    phrase=item.get("phrase"),
                )
            )
    return tuple(out)


@cache
def mmhb_descriptors(language: str) -> tuple[Descriptor, ...]:
    """A pack's MMHB descriptors (``data/languages/<lang>/descriptors.mmhb.tsv``), keyed by MMHB id."""
    from biasatlas.languages.forms import fixed_entries

    path = data_root() / "languages" / language / "descriptors.mmhb.tsv"
    try:  # MMHB verbatim, then the pack's form fixes (languages/forms.py)
        entries = fixed_entries(read_mmhb(path), path.parent, path)
    except (OSError, ValueError) as exc:
        raise ContactDataError(str(exc)) from exc
    return tuple(
        Descriptor(axis=e.axis, bucket=e.sense, key=e.id, label=e.forms[0].text, mmhb=e) for e in entries
    )


def raw_descriptors_for(language: str, hb_version: str = "v1.0") -> tuple[Descriptor, ...]:
    """A language's descriptors as its files list them (two may share a wording; see ``descriptors_for``)."""
    if language == "en":
        return holistic_bias_descriptors(hb_version)
    if (data_root() / "languages" / language / "descriptors.mmhb.tsv").exists():
        return mmhb_descriptors(language)
    return yaml_descriptors(language)


@cache
def descriptors_for(language: str, hb_version: str = "v1.0") -> tuple[Descriptor, ...]:
    """The groups of a language, one per wording: descriptors that render alike in a slot its templates
    use are one group (:func:`biasatlas.probes.contact.wording.one_per_wording`)."""
    from biasatlas.probes.contact.wording import one_per_wording, read_same_wording, slot_classes

    raw = raw_descriptors_for(language, hb_version)
    try:
        slots = slot_classes(template_sets(language))
    except ContactDataError:  # descriptors without templates: no slot, nothing can share one
        return raw
    keep = {str(e["keep"]) for e in read_same_wording(data_root() / "languages" / language)}
    return one_per_wording(raw, slots, keep)


# ---- templates ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Cell:
    """One (principle, scenario) cell of a template set: noun forms, contact sentences, actions."""

    id: str
    principle: str
    scenario: str
    noun: dict[str, str]
    contact: dict[str, str]
    actions: dict[str, dict[str, str]]  # action -> {"verb": ..., scale: question}
    agree: dict[str, str] = field(default_factory=dict)  # the noun's gender and number (MMHB packs)


@dataclass(frozen=True)
class TemplateSet:
    language: str
    name: str
    path: Path
    scales: dict[str, dict[str, Any]]  # scale -> {"options": [...], "instruction": "..."}
    cells: tuple[Cell, ...]
    provenance: dict[str, Any] = field(default_factory=dict)
    grammar: dict[str, Any] = field(default_factory=dict)  # order pre/post, marked, linker (MMHB packs)


def _check_slots(text: str, noun: dict[str, str], where: str) -> None:
    cases = SLOT.findall(text)
    if not cases:
        raise ContactDataError(f"{where}: no {{group:CASE}} slot in {text!r}")
    missing = [c for c in cases if c not in noun]
    if missing:
        raise ContactDataError(f"{where}: case(s) {missing} used but the cell's noun has only {sorted(noun)}")


def parse_template_file(path: Path, language: str) -> TemplateSet:
    """Read and validate one template file; errors name the file and the cell."""
    data = _load_yaml(path)
    prov = data.get("provenance") or {}
    if not prov:
        raise ContactDataError(f"{path}: a 'provenance' block is required")
    scales = data.get("scales") or {}
    for scale, spec in scales.items():
        if scale not in SCALES:
            raise ContactDataError(f"{path}: unknown scale {scale!r}; valid: {', '.join(SCALES)}")
        if len(spec.get("options", [])) != 2 or "instruction" not in spec:
            raise ContactDataError(f"{path}: scale {scale!r} needs two options and an instruction")
    cells: list[Cell] = []
    seen: set[str] = set()
    for i, raw in enumerate(data.get("cells") or []):
        where = f"{path}: cells[{i}] ({raw.get('id', '?')})"
        for key in ("id", "principle", "scenario", "noun", "contact", "actions"):
            if key not in raw:
                raise ContactDataError(f"{where}: missing '{key}'")
        if raw["id"] in seen:
            raise ContactDataError(f"{where}: duplicate id")
        seen.add(raw["id"])
        if raw["principle"] not in PRINCIPLES:
            raise ContactDataError(f"{where}: unknown principle {raw['principle']!r}")
        if raw["scenario"] not in SCENARIOS:
            raise ContactDataError(f"{where}: unknown scenario {raw['scenario']!r}")
        noun = {str(k): str(v) for k, v in raw["noun"].items()}
        for kind in ("positive", "negative"):
            if kind not in raw["contact"]:
                raise ContactDataError(f"{where}: missing contact.{kind}")
            _check_slots(raw["contact"][kind], noun, f"{where} contact.{kind}")
        actions: dict[str, dict[str, str]] = {}
        for action, spec in raw["actions"].items():
            if action not in ACTIONS:
                raise ContactDataError(f"{where}: unknown action {action!r}")
            for scale in scales:
                if scale not in spec:
                    raise ContactDataError(f"{where}: action {action} lacks the {scale} question")
                _check_slots(spec[scale], noun, f"{where} actions.{action}.{scale}")
            actions[action] = {k: str(v) for k, v in spec.items()}
        if "positive" not in actions:
            raise ContactDataError(f"{where}: the positive action is required")
        agree = {str(k): str(v) for k, v in (raw.get("agree") or {}).items()}
        cells.append(Cell(raw["id"], raw["principle"], raw["scenario"], noun, dict(raw["contact"]), actions, agree))
    if not cells:
        raise ContactDataError(f"{path}: no cells")
    name = str(prov.get("template_set", path.stem.removeprefix("templates").strip("_") or "a"))
    return TemplateSet(language, name, path, scales, tuple(cells), prov, dict(data.get("grammar") or {}))


@cache
def template_sets(language: str) -> dict[str, TemplateSet]:
    """All template sets shipped for ``language``, by set name."""
    files = _template_files(language)
    if not files:
        raise ContactDataError(f"unknown language {language!r}; valid: {', '.join(languages())}")
    sets = {}
    for path in files:
        ts = parse_template_file(path, language)
        sets[ts.name] = ts
    return sets


def _template_files(language: str) -> list[Path]:
    """``data/contact/<lang>/templates*.yaml`` (en, de, is), else the pack's ``contact/templates*.yaml``."""
    for folder in (data_root() / "contact" / language, data_root() / "languages" / language / "contact"):
        files = sorted(folder.glob("templates*.yaml")) if folder.is_dir() else []
        if files:
            return files
    return []


def languages() -> list[str]:
    """Languages with shipped contact templates (the original folders and the language packs)."""
    found = set()
    for root in (data_root() / "contact", data_root() / "languages"):
        found |= {p.name for p in root.iterdir() if p.is_dir() and _template_files(p.name)} if root.is_dir() else set()
    return sorted(found)


def fill(text: str, descriptor: Descriptor, noun: dict[str, str], agree: dict[str, str] | None = None,
         grammar: dict[str, Any] | None = None) -> str:
    """Put the group noun phrase into every ``{group:CASE}`` slot of ``text``.

    A pack whose grammar names ``particles: ko`` has the particle right after a slot chosen from the filled
    phrase's last sound (Korean 과/와, 을/를, …: :mod:`biasatlas.languages.particles`), whatever the template wrote.
    """
    if (grammar or {}).get("particles") == "ko":
        def korean(m: re.Match[str]) -> str:
            phrase = descriptor.render(noun, m.group(1), agree, grammar)
            return phrase + (particle_for(phrase, m["particle"]) if m["particle"] else "")

        return re.sub(SLOT.pattern + f"(?:{PARTICLE})?", korean, text)
    return SLOT.sub(lambda m: descriptor.render(noun, m.group(1), agree, grammar), text)
