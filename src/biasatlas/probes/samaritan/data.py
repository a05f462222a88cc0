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

NAME = "samaritan"
TITLE = "Samaritan: helpfulness ratings against a no-demographics control"
LANGUAGES = ("en", "de")
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


def _read_yaml(name: str) -> dict[str, Any]:
    path = Path(str(resources.files("biasatlas") / "data" / "samaritan" / name))
    try:
        data = load_yaml(path)  # YAML 1.2 booleans: 'No' stays a string
    except DataFileError as exc:
        raise SamaritanDataError(str(exc)) from exc
    if not isinstance(data, dict):
        raise SamaritanDataError(f"samaritan/{name} is not a mapping")
    return data


def _forms(entry: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {lang: (entry[lang]["indefinite"], entry[lang]["definite"]) for lang in LANGUAGES if lang in entry}


@lru_cache(maxsize=1)
def load_groups() -> tuple[Phrasing, tuple[Phrasing, ...]]:
    """The control phrasing and every group phrasing (paper Table 4), in file order."""
    data = _read_yaml("groups.yaml")
    c = data["control"]
    control = Phrasing(CONTROL, c["group"], c["phrasing"], _forms(c))
    phrasings = tuple(
        Phrasing(category, g["group"], p["phrasing"], _forms(p))
        for category, groups in data["categories"].items()
        for g in groups
        for p in g["phrasings"]
    )
    return control, phrasings


@lru_cache(maxsize=len(LANGUAGES))
def load_scenarios(language: str = "en") -> ScenarioSet:
    """The 103 scenarios × 4 rephrasings in ``language``."""
    if language not in LANGUAGES:
        raise SamaritanDataError(f"no Samaritan scenarios in {language!r}; valid: {', '.join(LANGUAGES)}")
    data = _read_yaml(f"scenarios.{language}.yaml")
    scenarios = tuple(
        Scenario(s["id"], s.get("topic", ""), tuple(s["rephrasings"])) for s in data["scenarios"]
    )
    return ScenarioSet(language, data["answer_instruction"], scenarios, data.get("provenance", {}))
