"""The Samaritan probe: control-baseline helpfulness ratings (Fagan et al., "The Biased Samaritan").

Each of 103 Good-Samaritan scenarios is written in 4 rephrasings; each rephrasing is asked once
with the control ("a person") and once per demographic phrasing ("a Black person", "an enby"),
and the model gives the probability (1-100) that the person helps. Control and group prompts of a
scenario rephrasing differ only in the person description, so they are paired by
(scenario, rephrasing, sample). The control is asked once per rephrasing, shared by all
categories. Stages: ``data`` (groups, scenarios), ``plan`` (prompts, --limit draw), ``read``
(ratings), ``analysis`` (statistics), ``summary`` (tables), ``report`` (rich tables, HTML).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import Field, field_validator

from biasatlas.probes.base import PaperDesign, Probe, ProbeConfig, ProbeConfigError
from biasatlas.probes.samaritan.data import CATEGORIES, LANGUAGES, NAME, TITLE
from biasatlas.probes.samaritan.plan import (
    DEFAULT_MAX_TOKENS,
    default_temperature,
    plan_figures,
    plan_prompts,
)
from biasatlas.records import GenerationSettings, Prompt

if TYPE_CHECKING:  # pandas, the analysis and the report are imported on use
    import pandas as pd

    from biasatlas.report.html import Section
    from biasatlas.store import Store

FACTORS = ("category", "group", "phrasing", "scenario", "rephrasing", "is_control")


def parse_categories(value: str | Sequence[str]) -> list[str]:
    """Category names (a list, or comma-separated; "all" = every category), each once, in order."""
    parts = value.split(",") if isinstance(value, str) else list(value)
    names = [str(c).strip() for c in parts if str(c).strip()]
    if names == ["all"]:
        return list(CATEGORIES)
    bad = [c for c in names if c not in CATEGORIES] or ([] if names else [""])
    if bad:
        raise ValueError(f"--category {bad[0]!r} is not valid for {NAME}; valid: {', '.join(CATEGORIES)}, all")
    return list(dict.fromkeys(names))


class SamaritanConfig(ProbeConfig):
    """The Samaritan design: categories of groups (each asked with the shared control).

    ``alpha``, ``correction`` and ``equivalence_margin`` are analysis settings a run records as the
    study's defaults for ``summary`` (None: alpha 0.01, holm within each category, ± 2 rating
    points). ``temperature`` None: 0 for one sample, 1.0 for several; ``max_tokens`` None: 512.
    """

    categories: list[str] = Field(default_factory=lambda: list(CATEGORIES))
    alpha: float | None = None
    correction: str | None = None
    equivalence_margin: float | None = None
    #: ``paper``: the paper's design (:mod:`biasatlas.probes.samaritan.design` sets the values; the plan says so)
    design: PaperDesign = None

    @field_validator("categories", mode="before")
    @classmethod
    def _categories(cls, value: Any) -> list[str]:
        return parse_categories(value)

    @field_validator("alpha")
    @classmethod
    def _alpha(cls, value: float | None) -> float | None:
        if value is not None and not 0 < value < 1:
            raise ValueError("must be between 0 and 1 (exclusive)")
        return value

    @field_validator("equivalence_margin")
    @classmethod
    def _margin(cls, value: float | None) -> float | None:
        if value is not None and not value > 0:
            raise ValueError("must be above 0 (rating points)")
        return value

    @field_validator("correction")
    @classmethod
    def _correction(cls, value: str | None) -> str | None:
        from biasatlas.stats.multitest import METHODS

        if value is not None and value not in METHODS:
            raise ValueError(f"must be one of {', '.join(METHODS)}")
        return value


class SamaritanProbe(Probe):
    """Probability ratings that a person helps, per demographic group and for the control."""

    name = NAME
    title = TITLE
    config_model = SamaritanConfig
    factors = FACTORS
    languages = LANGUAGES
    default_languages = ("en",)
    modes = ("generate",)
    value_column = "rating"

    def config(self, **values: Any) -> SamaritanConfig:
        """As :meth:`Probe.config`; a bad category is one line naming --category and the valid ones."""
        if values.get("design") == "paper":
            from biasatlas.probes.samaritan.design import apply

            values, _ = apply(values)
        if values.get("categories") is not None:
            try:
                values["categories"] = parse_categories(values["categories"])
            except ValueError as exc:
                raise ProbeConfigError(str(exc)) from None
        return self._config(super().config(**values))

    @staticmethod
    def _config(config: ProbeConfig) -> SamaritanConfig:
        assert isinstance(config, SamaritanConfig)
        return config

    def temperature(self, config: ProbeConfig) -> float:
        """The configured temperature, else 0 for one sample and 1.0 for several."""
        if config.temperature is not None:
            return config.temperature
        return default_temperature(self.samples(config))

    def plan(self, config: ProbeConfig) -> list[Prompt]:
        c = self._config(config)
        return plan_prompts(
            c.categories, self.languages_of(c), temperature=self.temperature(c),
            max_tokens=c.max_tokens or DEFAULT_MAX_TOKENS, limit=c.limit, seed=c.seed,
        )

    def settings(self, config: ProbeConfig) -> GenerationSettings:
        return GenerationSettings(
            mode="generate", max_tokens=config.max_tokens or DEFAULT_MAX_TOKENS,
            temperature=self.temperature(config), seed=config.seed,
        )

    def plan_summary(self, prompts: Sequence[Prompt], config: ProbeConfig) -> dict[str, Any]:
        c = self._config(config)
        summary = {**super().plan_summary(prompts, c), **plan_figures(prompts, c.categories)}
        if c.design is not None:
            from biasatlas.probes.samaritan.design import plan_block

            summary["design"] = plan_block(c, prompts, self.samples(c), c.max_tokens or DEFAULT_MAX_TOKENS)
        return summary

    def run_record(self, config: ProbeConfig) -> dict[str, Any]:
        """The config, and the analysis settings at the top level: ``summary``'s defaults for the study."""
        c = self._config(config)
        record = super().run_record(c)
        analysis = (("alpha", c.alpha), ("correction", c.correction), ("equivalence_margin", c.equivalence_margin))
        record.update({k: v for k, v in analysis if v is not None})
        return record

    def outcomes(self, store: Store) -> pd.DataFrame:
        from biasatlas.probes.samaritan.read import load_outcomes

        return load_outcomes(store)

    def summarise(self, store: Store, **analysis: Any) -> dict[str, Any]:
        """The analysis with ``alpha`` / ``correction`` / ``equivalence_margin`` (default: the last
        run's, else 0.01, holm within each category, ± 2 rating points)."""
        from biasatlas.probes.samaritan.summary import summarise

        self.check_analysis(analysis, ("alpha", "correction", "equivalence_margin"))
        return summarise(store, alpha=analysis.get("alpha"), correction=analysis.get("correction"),
                         equivalence_margin=analysis.get("equivalence_margin"))

    def print_summary(self, summary: dict[str, Any], console: Any) -> None:
        from biasatlas.probes.samaritan.disparity import print_disparity
        from biasatlas.probes.samaritan.report import print_summary

        print_disparity(summary, console)  # the first lines: which group is rated unlike the others
        print_summary(summary, console)

    def report_sections(self, store: Store) -> list[Section]:
        from biasatlas.probes.samaritan.disparity import add_to_sections
        from biasatlas.probes.samaritan.report import report_sections

        sections = report_sections(store)
        add_to_sections(sections, store)  # which group is rated unlike the others: first in the section
        return sections


PROBE = SamaritanProbe()
