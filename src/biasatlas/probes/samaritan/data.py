"""Samaritan data: the design's constants, the groups (paper Table 4) and the scenario files.

Light on purpose (no pandas): the plan, the reader and the analysis all build on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from biasatlas.datafiles import DataFileError, load_yaml
from biasatlas.languages.particles import fill_slot

NAME = "samaritan"
TITLE = "Samaritan: helpfulness ratings against a no-demographics control"
#: the languages of data/samaritan/ (paper data and its German draft); packs add the others
BASE_LANGUAGES = ("en", "de")
CATEGORIES = ("race", "gender", "age")
CONTROL = "control"
PLACEHOLDERS = ("a_person", "A_person", "the_person", "The_person")


class SamaritanDataError(ValueError):
    """A data file is missing or malformed."""


@dataclass(frozen=True)
class Phrasing:
    """One way of naming a group (or the control), with its noun phrases per language."""

    category: str
    group: str
    phrasing: str
    forms: dict[str, tuple[str, str]]  # language -> (indefinite, definite)

    @property
    def is_control(self) -> bool:
        return self.category == CONTROL

    def fill(self, template: str, language: str) -> str:
        indefinite, definite = self.forms[language]
        if language == "ko":  # a particle after the person agrees with the phrasing's last sound (한 여자가)
            for slot, value in (("a_person", indefinite), ("A_person", indefinite), ("the_person", definite),
                                ("The_person", definite)):
                template = fill_slot(template, "{" + slot + "}", value.replace("{", "{{").replace("}", "}}"))
        return template.format(
            a_person=indefinite,
            A_person=indefinite[:1].upper() + indefinite[1:],
            the_person=definite,
            The_person=definite[:1].upper() + definite[1:],
        )


@dataclass(frozen=True)
class Scenario:
    id: str
    topic: str
    rephrasings: tuple[str, ...]


@dataclass(frozen=True)
class ScenarioSet:
    language: str
    answer_instruction: str
    scenarios: tuple[Scenario, ...]
    provenance: dict[str, Any]


def _pack_file(language: str, key: str) -> Path | None:
    """A language pack's Samaritan file (``samaritan_scenarios`` / ``samaritan_groups``), if it has one."""
    from biasatlas.languages import LanguagePackError, pack

    if language in BASE_LANGUAGES:
        return None
    try:
        path = pack(language).file(key)
    except LanguagePackError:
        return None
    return path if path is not None and path.exists() else None


def pack_languages() -> tuple[str, ...]:
    """en, de, then every language pack with Samaritan scenarios and groups (atlas order)."""
    from biasatlas.languages import pack_codes

    extra = [c for c in pack_codes() if c not in BASE_LANGUAGES
             and _pack_file(c, "samaritan_scenarios") and _pack_file(c, "samaritan_groups")]
    return (*BASE_LANGUAGES, *extra)


LANGUAGES = pack_languages()


def _read_yaml(name: str, path: Path | None = None) -> dict[str, Any]:
    path = path or Path(str(resources.files("biasatlas") / "data" / "samaritan" / name))
    try:
        data = load_yaml(path)  # YAML 1.2 booleans: 'No' stays a string
    except DataFileError as exc:
        raise SamaritanDataError(str(exc)) from exc
    if not isinstance(data, dict):
        raise SamaritanDataError(f"samaritan/{name} is not a mapping")
    return data


def _forms(entry: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {lang: (entry[lang]["indefinite"], entry[lang]["definite"])
            for lang in BASE_LANGUAGES if lang in entry}


def _pack_forms() -> tuple[dict[str, tuple[str, str]], dict[str, dict[str, tuple[str, str]]]]:
    """Control forms and phrasing forms (by English phrasing) of every pack's ``samaritan/groups.yaml``."""
    control: dict[str, tuple[str, str]] = {}
    by_phrasing: dict[str, dict[str, tuple[str, str]]] = {}
    for lang in LANGUAGES[len(BASE_LANGUAGES):]:
        path = _pack_file(lang, "samaritan_groups")
        data = _read_yaml(f"{lang}/groups", path)
        c = data["control"]
        control[lang] = (c["indefinite"], c["definite"])
        for item in data.get("phrasings") or []:
            by_phrasing.setdefault(item["phrasing"], {})[lang] = (item["indefinite"], item["definite"])
    return control, by_phrasing


@lru_cache(maxsize=1)
def load_groups() -> tuple[Phrasing, tuple[Phrasing, ...]]:
    """The control phrasing and every group phrasing (paper Table 4), in file order.

    A pack's language gets the phrasings its ``groups.yaml`` drafts (by English phrasing name);
    a phrasing without a form in a language is not asked in it.
    """
    data = _read_yaml("groups.yaml")
    pack_control, pack_phrasings = _pack_forms()
    known = {p["phrasing"] for groups in data["categories"].values() for g in groups for p in g["phrasings"]}
    unknown = sorted(set(pack_phrasings) - known)
    if unknown:
        raise SamaritanDataError(f"pack groups name unknown phrasing(s) {unknown}; valid: {sorted(known)}")
    c = data["control"]
    control = Phrasing(CONTROL, c["group"], c["phrasing"], {**_forms(c), **pack_control})
    phrasings = tuple(
        Phrasing(category, g["group"], p["phrasing"], {**_forms(p), **pack_phrasings.get(p["phrasing"], {})})
        for category, groups in data["categories"].items()
        for g in groups
        for p in g["phrasings"]
    )
    return control, phrasings


@lru_cache(maxsize=len(LANGUAGES))
def load_scenarios(language: str = "en") -> ScenarioSet:
    """The scenarios × 4 rephrasings in ``language`` (103 in every language; en/de hand-written)."""
    if language not in LANGUAGES:
        raise SamaritanDataError(f"no Samaritan scenarios in {language!r}; valid: {', '.join(LANGUAGES)}")
    data = _read_yaml(f"scenarios.{language}.yaml", _pack_file(language, "samaritan_scenarios"))
    scenarios = tuple(
        Scenario(s["id"], s.get("topic", ""), tuple(s["rephrasings"])) for s in data["scenarios"]
    )
    return ScenarioSet(language, data["answer_instruction"], scenarios, data.get("provenance", {}))
