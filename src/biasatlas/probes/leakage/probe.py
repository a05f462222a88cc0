"""Cross-language stereotype leakage (Cao et al., paper 004): ABC trait associations of 30 groups in
English, Russian, Chinese and Hindi, regressed on human stereotypes of each language.

Generative models answer forced-choice ``theme`` prompts; masked and span-filling models (``masked:`` /
``span:`` specs) are scored on ``ilps`` templates. Stages: ``data`` (traits, groups, lexicons, prompts),
``plan`` (prompts, the --limit draw), ``match`` and ``read`` (answers), ``scores`` (association matrices),
``human`` (human tables), ``model`` (the leakage model), ``analysis`` and ``summary``, ``report``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import field_validator, model_validator

from biasatlas.probes.base import Probe, ProbeConfig, ProbeConfigError
from biasatlas.probes.leakage.data import LANGUAGES, LeakageDataError
from biasatlas.probes.leakage.plan import (
    NAME,
    TITLE,
    Method,
    Orders,
    build_prompts,
    limit_plan,
    method_for_model,
    select_groups,
)
from biasatlas.records import GenerationSettings, Prompt

if TYPE_CHECKING:  # pandas, the analysis and the report are imported on use
    from collections.abc import Callable, Sequence
    from pathlib import Path

    import pandas as pd

    from biasatlas.backends.options import BackendOptions
    from biasatlas.report.html import Section
    from biasatlas.runner import RunTotals
    from biasatlas.store import Store

FACTORS = ("method", "language", "category", "group", "side", "order", "template_id")
DEFAULT_MAX_TOKENS = 12
DEFAULT_TEMPERATURE = 1.0  # generate mode; choice mode decodes nothing
DEFAULT_SAMPLES = 10  # generate mode; choice mode gives one score per prompt


class LeakageConfig(ProbeConfig):
    """The leakage design: groups (default all 30), presentation orders, and the method.

    ``method`` None: ``theme`` when planning, and at run time the one the model needs (``ilps`` for
    ``masked:`` / ``span:`` models). ``mode`` None: choice. ``samples`` None: 10 in generate mode, and
    more than one is an error in choice mode. ``temperature`` None: 1.0 (generate mode); ``max_tokens``
    None: 12.
    """

    groups: list[str] | None = None
    orders: Literal["both", "one"] = "both"
    method: Literal["theme", "ilps"] | None = None
    #: how the study is analysed (``ours`` or ``paper``: Cao et al.'s fit); stored with the run
    design: Literal["ours", "paper"] = "ours"
    #: this model is the monolingual control (LM_tgt) of one language: asked in that language only
    mono_for: str | None = None

    @field_validator("mono_for")
    @classmethod
    def _mono_for(cls, value: str | None) -> str | None:
        if value is not None and value not in LANGUAGES:
            raise ValueError(f"--mono-for {value!r}: no such language (valid: {', '.join(LANGUAGES)})")
        return value

    @field_validator("groups", mode="before")
    @classmethod
    def _groups(cls, value: Any) -> list[str] | None:
        if value is None:
            return None
        parts = value.split(",") if isinstance(value, str) else list(value)
        names = [str(g).strip() for g in parts if str(g).strip()]
        if not names:
            return None
        try:
            return list(dict.fromkeys(g.id for g in select_groups(names)))
        except LeakageDataError as exc:
            raise ValueError(str(exc)) from None

    @model_validator(mode="after")
    def _mode_fits_method(self) -> LeakageConfig:
        if self.mono_for is not None:
            if self.languages not in (None, [self.mono_for]):
                raise ValueError(f"--mono-for {self.mono_for}: a monolingual control answers in {self.mono_for} "
                                 "only; drop --lang")
            self.languages = [self.mono_for]
        if self.method == "ilps" and self.mode == "generate":
            raise ValueError("masked and span-filling models are scored, not sampled: drop --mode generate")
        if (self.mode or "choice") == "choice" and self.samples not in (None, 1):
            raise ValueError(
                "--samples applies to --mode generate; choice mode is deterministic (one score per prompt)"
            )
        return self


class LeakageProbe(Probe):
    """Trait associations per group and language, and how much of another language's stereotypes they carry."""

    name = NAME
    title = TITLE
    config_model = LeakageConfig
    factors = FACTORS
    languages = LANGUAGES
    default_languages = LANGUAGES
    modes = ("choice", "generate")

    @staticmethod
    def _config(config: ProbeConfig) -> LeakageConfig:
        assert isinstance(config, LeakageConfig)
        return config

    def method_of(self, config: ProbeConfig) -> Method:
        return self._config(config).method or "theme"

    def plan(self, config: ProbeConfig) -> list[Prompt]:
        """Every prompt of the languages' plans; ``limit``: a seeded draw split evenly over the languages,
        whole comparisons (both orders for one group) or whole templates (with their neutral baseline)."""
        c = self._config(config)
        orders: Orders = c.orders
        try:
            prompts = build_prompts(self.languages_of(c), method=self.method_of(c), group_names=c.groups,
                                    orders=orders)
        except LeakageDataError as exc:
            raise ProbeConfigError(str(exc)) from None
        return limit_plan(prompts, c.limit, c.seed)

    def plan_summary(self, prompts: Sequence[Prompt], config: ProbeConfig) -> dict[str, Any]:
        """The plan's counts, and what its design (ours or the paper's) does differently from Cao et al."""
        from biasatlas.probes.leakage.design import OURS_NOTE, plan_block

        plan = super().plan_summary(prompts, config)
        c = self._config(config)
        if c.design == "paper":
            plan["design"] = plan_block(c)
        else:  # said once, where the user sees the plan
            plan["note"] = OURS_NOTE
        return plan

    def settings(self, config: ProbeConfig) -> GenerationSettings:
        if self.mode_of(config) == "choice":
            return GenerationSettings(mode="choice", max_tokens=config.max_tokens or DEFAULT_MAX_TOKENS,
                                      temperature=0.0, seed=config.seed)
        temperature = DEFAULT_TEMPERATURE if config.temperature is None else config.temperature
        return GenerationSettings(mode="generate", max_tokens=config.max_tokens or DEFAULT_MAX_TOKENS,
                                  temperature=temperature, seed=config.seed)

    def samples(self, config: ProbeConfig) -> int:
        if self.mode_of(config) == "choice":
            return 1
        return config.samples or DEFAULT_SAMPLES

    def for_model(self, config: ProbeConfig, model: str) -> LeakageConfig:
        """The config with the method ``model`` needs; a method set that the model cannot answer is an error."""
        c = self._config(config)
        needed = method_for_model(model)
        if c.method is not None and c.method != needed:
            kind = "masked:/span: models" if c.method == "ilps" else "generative models"
            raise ProbeConfigError(
                f"method {c.method!r} is for {kind}, but --model {model!r} needs {needed!r} "
                "(ilps: masked:PATH or span:PATH models; theme: every other model)"
            )
        values = {**c.model_dump(), "method": needed}
        return self._config(self.config(**values))

    def run(
        self,
        config: ProbeConfig,
        backend: BackendOptions,
        study: str | Path,
        *,
        progress: bool = False,
        on_totals: Callable[[RunTotals], None] | None = None,
    ) -> list[RunTotals]:
        """Ask the plan of the method the model needs (theme or ilps) into the study."""
        return super().run(self.for_model(config, backend.model), backend, study, progress=progress,
                           on_totals=on_totals)

    def outcomes(self, store: Store) -> pd.DataFrame:
        from biasatlas.probes.leakage.read import load_outcomes

        return load_outcomes(store)

    def summarise(self, store: Store, **analysis: Any) -> dict[str, Any]:
        """The analysis with ``alpha`` (default 0.05), ``correction`` (default: the design's) and ``design``
        (default: the study's)."""
        from biasatlas.probes.leakage.summary import summarise

        self.check_analysis(analysis, allowed=("alpha", "correction", "design"))
        return summarise(store, alpha=analysis.get("alpha"), correction=analysis.get("correction"),
                         design=analysis.get("design"))

    def print_summary(self, summary: dict[str, Any], console: Any) -> None:
        from biasatlas.probes.leakage.report import print_summary

        print_summary(summary, console)

    def report_sections(self, store: Store) -> list[Section]:
        from biasatlas.probes.leakage.report import report_sections

        return report_sections(store)


PROBE = LeakageProbe()
