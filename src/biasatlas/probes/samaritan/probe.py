"""The Samaritan probe: control-baseline helpfulness ratings (Fagan et al., "The Biased Samaritan").

Each of 103 Good-Samaritan scenarios is written in 4 rephrasings; each rephrasing is asked once
with the control ("a person") and once per demographic phrasing ("a Black person", "an enby"),
and the model gives the probability (1-100) that the person helps. Control and group prompts of a
scenario rephrasing differ only in the person description, so they are paired by
(scenario, rephrasing, sample). The control is asked once per rephrasing, shared by all
categories. Analysis: ``samaritan_analysis``; tables and figures: ``samaritan_report``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from biasatlas.datafiles import DataFileError, load_yaml
from biasatlas.parsing.numbers import RatingParser
from biasatlas.probes.samaritan.analysis import (
    CATEGORIES,
    CONTROL,
    UNIT,
    compare_to_control,
    control_summary,
    default_persona,
    phrasing_table,
    repeatability,
    significance_frequency,
    unparseable,
)
from biasatlas.records import Message, Prompt
from biasatlas.store import Store

NAME = "samaritan"
TITLE = "Samaritan: helpfulness ratings against a no-demographics control"
LANGUAGES = ("en", "de")
FACTORS = ("category", "group", "phrasing", "scenario", "rephrasing", "is_control")
DEFAULT_ALPHA = 0.01
DEFAULT_CORRECTION = "holm"
TABLES = (
    "groups", "controls", "phrasings", "default_persona", "repeatability", "unparseable", "significance_frequency",
)
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


def build_prompts(
    categories: Sequence[str] = CATEGORIES,
    language: str = "en",
    *,
    limit: int | None = None,
    temperature: float = 0.0,
    max_tokens: int = 24,
) -> list[Prompt]:
    """Control + group prompts for every scenario rephrasing, scenario by scenario.

    ``limit`` keeps the first N scenarios (all their rephrasings and groups, so pairs stay whole).
    ``temperature`` and ``max_tokens`` go into the metadata: answers decoded differently are
    different prompts, so they stay apart in the store's frame (and in the analysis).
    """
    unknown = [c for c in categories if c not in CATEGORIES]
    if unknown:
        raise ValueError(f"unknown category {unknown[0]!r}; valid: {', '.join(CATEGORIES)}, all")
    control, phrasings = load_groups()
    chosen = [p for p in phrasings if p.category in categories]
    scenario_set = load_scenarios(language)
    scenarios = scenario_set.scenarios[:limit] if limit is not None else scenario_set.scenarios
    prompts: list[Prompt] = []
    for scenario in scenarios:
        for r, template in enumerate(scenario.rephrasings, start=1):
            for phrasing in (control, *chosen):
                text = f"{phrasing.fill(template, language)} {scenario_set.answer_instruction}"
                prompts.append(
                    Prompt(
                        probe=NAME,
                        language=language,
                        messages=(Message(role="user", content=text),),
                        meta={
                            "scenario": scenario.id,
                            "rephrasing": r,
                            "category": phrasing.category,
                            "group": phrasing.group,
                            "phrasing": phrasing.phrasing,
                            "is_control": phrasing.is_control,
                            "temperature": float(temperature),
                            "max_tokens": int(max_tokens),
                        },
                    )
                )
    return prompts


# ---- parsing ----------------------------------------------------------------------------------
def outcomes(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with ``rating`` (float, NaN if unreadable) and ``parse_reason`` for every row.

    Rows without an answer keep their status as the reason ("pending", "failed"); answered rows
    that cannot be read keep the parser's reason. Nothing is dropped.
    """
    out = frame.copy()
    if out.empty:
        return out.assign(rating=pd.Series(dtype=float), parse_reason=pd.Series(dtype=object))
    parsers: dict[str, RatingParser] = {}
    ratings: list[float] = []
    reasons: list[str | None] = []
    for text, status, language in zip(out["text"], out["status"], out["language"], strict=True):
        if status != "answered":
            ratings.append(math.nan)
            reasons.append(str(status))
            continue
        parser = parsers.setdefault(language, RatingParser(language))
        result = parser.parse(text)
        ratings.append(math.nan if result.value is None else float(result.value))
        reasons.append(result.reason)
    out["rating"] = ratings
    out["parse_reason"] = reasons
    for column, default in (("temperature", 0.0), ("max_tokens", 0)):
        if column not in out.columns:
            out[column] = default
        out[column] = out[column].fillna(default)
    out["temperature"] = out["temperature"].astype(float)
    out["max_tokens"] = out["max_tokens"].astype(int)
    return out


def load_outcomes(store: Store) -> pd.DataFrame:
    return outcomes(store.frame(probe=NAME))


# ---- summary ----------------------------------------------------------------------------------
def analysis_settings(
    store: Store, alpha: float | None = None, correction: str | None = None
) -> dict[str, Any]:
    """alpha and correction: given, else those of the study's last Samaritan run, else defaults."""
    last = store.last_run(NAME) or {}
    config = last.get("config", {}) if isinstance(last, dict) else {}
    return {
        "alpha": float(alpha if alpha is not None else config.get("alpha", DEFAULT_ALPHA)),
        "correction": str(
            correction if correction is not None else config.get("correction", DEFAULT_CORRECTION)
        ),
        "ci_level": 0.95,
    }


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """JSON-ready rows: NaN -> None, numpy scalars -> Python."""
    rows = []
    for row in frame.to_dict(orient="records"):
        clean: dict[str, Any] = {}
        for key, value in row.items():
            if isinstance(value, float) and math.isnan(value):
                value = None
            elif hasattr(value, "item") and not isinstance(value, list | dict):
                value = value.item()
            clean[str(key)] = value
        rows.append(clean)
    return rows


def analyse(outcome_frame: pd.DataFrame, alpha: float, correction: str) -> dict[str, pd.DataFrame]:
    """Every table of the analysis, as frames (what summarise and the report are made of)."""
    comparison = compare_to_control(outcome_frame, alpha=alpha, correction=correction)
    bad = unparseable(outcome_frame)
    if not comparison.empty:
        keys = [*UNIT, "category", "group"]
        comparison = comparison.merge(
            bad[[*keys, "n_answered", "n_unparseable", "reasons"]], on=keys, how="left"
        )
    return {
        "groups": comparison,
        "controls": control_summary(outcome_frame),
        "phrasings": phrasing_table(outcome_frame),
        "default_persona": default_persona(comparison),
        "repeatability": repeatability(outcome_frame, alpha=alpha, correction=correction),
        "unparseable": bad,
        "significance_frequency": significance_frequency(comparison),
    }


def summarise(store: Store, alpha: float | None = None, correction: str | None = None) -> dict[str, Any]:
    """JSON-ready analysis: per model × language × decoding × category × group."""
    settings = analysis_settings(store, alpha, correction)
    frame = load_outcomes(store)
    tables = analyse(frame, settings["alpha"], settings["correction"]) if not frame.empty else {}
    summary: dict[str, Any] = {
        "settings": {
            **settings,
            "test": "paired t-test over scenarios (scenario means of group vs control), two-sided; "
            "Wilcoxon signed-rank alongside",
            "effect_size": "Cohen's d_z (mean paired difference / SD of differences)",
            "correction_family": "all groups of one model × language × decoding (temperature, max_tokens)",
        },
        "n_rows": len(frame),
    }
    for name in TABLES:
        table = tables.get(name, pd.DataFrame())
        summary[name] = _records(table) if not table.empty else []
    return summary


def print_summary(summary: dict[str, Any], console: Any) -> None:
    from biasatlas.probes.samaritan.report import print_summary as _print

    _print(summary, console)


def report_sections(store: Store) -> list[Any]:
    from biasatlas.probes.samaritan.report import report_sections as _sections

    return _sections(store)
