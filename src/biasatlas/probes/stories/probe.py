"""The open-ended story probe (StereoTales): stories, extracted profiles, associations.

A story prompt gives the protagonist one attribute value ("a person with a low income") and a
situation; everything else about the protagonist comes from the model. An extractor model then
reads each story and returns the protagonist's profile in the closed vocabularies
(:mod:`.extract`), and :mod:`biasatlas.stats.associations` mines the associations between the
prompted attribute and the extracted ones.

Store layout: probe ``stories`` holds the stories (one row per generator × prompt × sample),
probe ``stories-extract`` the extractor answers, linked back through ``meta``
(``story_prompt_id``, ``story_sample``, ``generator``), probe ``stories-harm`` the harm ratings.

The stages live in this package: :mod:`.plan` (prompts, the --limit draw), :mod:`.read` (stories
and refusals), :mod:`.extract_step` (the second step), :mod:`.extract` (parsing and voting),
:mod:`.profiles`, :mod:`.analysis`, :mod:`.summary` (console), :mod:`.report`, :mod:`.harm`,
:mod:`.importer` (published stories). This module only wires them together.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import Field, field_validator

from biasatlas.probes.base import PaperDesign, Probe, ProbeConfig, ProbeConfigError
from biasatlas.probes.stories.plan import NAME, TITLE, plan_prompts
from biasatlas.probes.stories.seeds import LANGUAGES
from biasatlas.records import GenerationSettings, Prompt

if TYPE_CHECKING:
    import pandas as pd

    from biasatlas.backends.options import BackendOptions
    from biasatlas.report.html import Section
    from biasatlas.runner import RunTotals
    from biasatlas.store import Store

# 200 words of Hindi, Arabic or Ukrainian take about 5.5 tokens a word with an English-centred
# tokenizer (docs/methods/stories.md): 400 story tokens and 600 extraction tokens (the former
# defaults) cut them. The original pipeline allows 4,096; these leave room and bound the cost.
STORY_MAX_TOKENS = 2048
STORY_TEMPERATURE = 1.0
EXTRACT_MAX_TOKENS = 3072
SELF_EXTRACTION_WARNING = (
    "the generator extracts its own stories (no --extractor): a model reading its own stories shares their "
    "associations; the paper votes over three independent extractors (--extractor a,b,c)"
)


class StoriesConfig(ProbeConfig):
    """The story design: languages (the plan is their union), stories per prompt (``samples``) and
    the extraction step. ``extractors`` None means the generator extracts its own stories."""

    extractors: list[str] | None = None
    extract: bool = True
    extract_max_tokens: int = Field(default=EXTRACT_MAX_TOKENS, ge=1)
    #: a seeds folder (the published StereoTales layout or ours) instead of the bundled seeds
    seeds: str | None = None
    #: ``paper``: the paper's design (:mod:`biasatlas.probes.stories.design` sets the values; the plan says so)
    design: PaperDesign = None

    @field_validator("seeds")
    @classmethod
    def _folder(cls, value: str | None) -> str | None:
        if value is not None and not Path(value).is_dir():
            raise ValueError(f"--seeds {value}: no such folder")
        return value

    @field_validator("extractors")
    @classmethod
    def _named(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and (not value or any(not spec.strip() for spec in value)):
            raise ValueError(f"--extractor {value!r}: give one or more model specs")
        return value


class StoriesProbe(Probe):
    """Generate stories about a protagonist with one given attribute, then extract their profiles."""

    name: ClassVar[str] = NAME
    title: ClassVar[str] = TITLE
    config_model: ClassVar[type[ProbeConfig]] = StoriesConfig
    factors: ClassVar[tuple[str, ...]] = ("language", "base_attribute", "scenario_group")
    languages: ClassVar[tuple[str, ...]] = LANGUAGES
    default_languages: ClassVar[tuple[str, ...]] = ("en",)
    modes: ClassVar[tuple[str, ...]] = ("generate",)

    def config(self, **values: Any) -> StoriesConfig:
        if values.get("design") == "paper":
            from biasatlas.probes.stories.design import apply

            values, _ = apply(values)
        config = super().config(**values)
        assert isinstance(config, StoriesConfig)
        return config

    def plan(self, config: ProbeConfig) -> list[Prompt]:
        from biasatlas.probes.stories.seeds import SeedError

        try:
            return plan_prompts(self.languages_of(config), config.limit, config.seed, _own(config).seeds)
        except SeedError as exc:
            raise ProbeConfigError(str(exc)) from None

    def settings(self, config: ProbeConfig) -> GenerationSettings:
        return GenerationSettings(
            mode="generate",
            max_tokens=config.max_tokens or STORY_MAX_TOKENS,
            temperature=STORY_TEMPERATURE if config.temperature is None else config.temperature,
            seed=config.seed,
        )

    def plan_summary(self, prompts: Sequence[Prompt], config: ProbeConfig) -> dict[str, Any]:
        plan = super().plan_summary(prompts, config)
        own = _own(config)
        plan["extractors"] = (own.extractors or ["the generator"]) if own.extract else []
        plan["extraction_requests_at_most"] = plan["requests"] * len(plan["extractors"])
        defaults = []
        if not own.languages:
            defaults.append("English only (the paper: 10 languages; --lang)")
        if own.extract and len(own.extractors or []) <= 1:
            defaults.append("one extractor, no majority vote (the paper: three extractors and a majority vote; "
                            "--extractor)")
        if defaults:  # said once, where the user sees the plan
            plan["note"] = "Differs from StereoTales (Le Jeune et al.): " + "; ".join(defaults) + "."
        if own.extract:
            warnings = extraction_warnings(own.extractors)
            if warnings:
                plan["warnings"] = warnings
        if own.design is not None:
            from biasatlas.probes.stories.design import plan_block

            plan["design"] = plan_block(own, prompts)
        return plan

    def run(
        self,
        config: ProbeConfig,
        backend: BackendOptions,
        study: str | Path,
        *,
        progress: bool = False,
        on_totals: Callable[[RunTotals], None] | None = None,
    ) -> list[RunTotals]:
        """Two steps: the stories, then (unless ``extract`` is off) each extractor on the usable ones.

        The generator doubles as the default extractor and stays loaded across both steps. The
        stories' counts (answered, refusals, empty, to_extract) go into the first totals' ``info``.
        """
        from biasatlas.probes.stories.extract_step import run_extraction
        from biasatlas.runner import run_plan
        from biasatlas.store import Store

        own = _own(config)
        prompts = self.plan(own)
        if not prompts:
            raise ProbeConfigError("the plan is empty: nothing to ask (check the filters)")
        model = backend.open()
        try:
            with Store(study) as store:
                totals = run_plan(prompts, model, store, self.settings(own), samples=self.samples(own),
                                  config=self.run_record(own), progress=progress)
            if on_totals is not None:
                on_totals(totals)
            steps = [totals]
            if own.extract:
                counts, extracted = run_extraction(
                    study, prompts, model, backend, own.extractors or [backend.model], own.extract_max_tokens,
                    progress=progress, on_totals=on_totals,
                )
                totals.info["stories"] = counts
                steps.extend(extracted)
        finally:
            model.close()
        return steps

    def outcomes(self, store: Store) -> pd.DataFrame:
        """One row per story: design factors, the story, refusal/empty flags and the voted profile."""
        from biasatlas.probes.stories.profiles import story_outcomes

        return story_outcomes(store)

    def summarise(
        self, store: Store, alpha: float | None = None, correction: str | None = None, **analysis: Any
    ) -> dict[str, Any]:
        """The analysis at ``alpha`` (default 0.05). Tables are corrected with BH, cells with BY (the
        paper's); another ``correction`` is not applied and the summary says so. ``vote`` ("valid", the
        paper's, or "all") is the extractors' majority rule."""
        from biasatlas.probes.stories.analysis import summarise
        from biasatlas.stats.associations import AssociationConfig

        config = AssociationConfig() if alpha is None else AssociationConfig(alpha=alpha)
        summary = summarise(store, config, correction=correction, vote=str(analysis.get("vote", "valid")))
        return with_group_rows(summary, config.alpha)

    def print_summary(self, summary: dict[str, Any], console: Any) -> None:
        from biasatlas.probes.stories.disparity import print_headline
        from biasatlas.probes.stories.summary import print_summary

        print_headline(summary, console)  # the first lines: which groups carry the most associations
        print_summary(summary, console)

    def report_sections(self, store: Store) -> list[Section]:
        from biasatlas.probes.stories.report import report_sections

        return report_sections(store)


def with_group_rows(summary: dict[str, Any], alpha: float) -> dict[str, Any]:
    """``summary`` with its alpha and its group rows (``group_disparity``: which groups carry the associations)."""
    from biasatlas.probes.stories.disparity import statistics

    summary.setdefault("alpha", alpha)
    summary["group_disparity"] = statistics(summary)
    return summary


def extraction_warnings(extractors: Sequence[str] | None, generator: str | None = None) -> list[str]:
    """Warnings about the extractor ensemble: self-extraction, or fewer than the paper's three."""
    if not extractors or (generator is not None and list(extractors) == [generator]):
        return [SELF_EXTRACTION_WARNING]
    if len(set(extractors)) < 3:
        return [f"{len(set(extractors))} extractor(s): the paper votes over three independent extractors"]
    return []


def _own(config: ProbeConfig) -> StoriesConfig:
    """A plain ProbeConfig (shared options only) read as a StoriesConfig with default extraction."""
    if isinstance(config, StoriesConfig):
        return config
    return StoriesConfig(**config.model_dump())


PROBE = StoriesProbe()
