"""Social Contact Debiasing (paper 001) as a probe: split, LoRA tuning, contact prompts before/after.

It has no prompts of its own: its plan is the evaluation prompts (contact prompt sets) of the
chosen setting's split, asked of the base model and of the base model with the adapter. Stages:
``splits`` (the paper's settings), ``data`` (training examples), ``train`` (LoRA), ``adapters``
(checks), ``pipeline`` (a run, step by step), ``evaluate`` (pairing, tables), ``quality`` and
``bbq`` (answering quality), ``summary`` (analysis, rich tables), ``report`` (HTML section).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from biasatlas.probes.base import Probe, ProbeConfig, ProbeConfigError
from biasatlas.probes.contact.data import languages as contact_languages
from biasatlas.probes.debias.config import NAME, TITLE, DebiasConfig
from biasatlas.records import GenerationSettings, Prompt

if TYPE_CHECKING:  # pandas, the analysis and the report are imported on use
    import pandas as pd

    from biasatlas.backends.options import BackendOptions
    from biasatlas.report.html import Section
    from biasatlas.runner import RunTotals
    from biasatlas.store import Store

__all__ = ["NAME", "PROBE", "TITLE", "DebiasConfig", "DebiasProbe"]


class DebiasProbe(Probe):
    """LoRA-tune a local model on unbiased contact answers; compare the contact probe before and after."""

    name: ClassVar[str] = NAME
    title: ClassVar[str] = TITLE
    config_model: ClassVar[type[ProbeConfig]] = DebiasConfig
    factors: ClassVar[tuple[str, ...]] = ("scale", "contact", "action", "scenario", "principle", "axis",
                                          "template_set")
    languages: ClassVar[tuple[str, ...]] = tuple(contact_languages())
    default_languages: ClassVar[tuple[str, ...]] = ("en",)
    modes: ClassVar[tuple[str, ...]] = ("choice", "generate")

    def config(self, **values: Any) -> ProbeConfig:
        """As :meth:`Probe.config`; ``design="paper"`` first sets what paper 001 fixes (:mod:`.design`)."""
        if values.get("design") == "paper":
            from biasatlas.probes.debias.design import apply

            values, _ = apply(values)
        return super().config(**values)

    @staticmethod
    def _config(config: ProbeConfig) -> DebiasConfig:
        assert isinstance(config, DebiasConfig)
        return config

    def plan(self, config: ProbeConfig) -> list[Prompt]:
        """The evaluation prompts of the setting's split (``limit`` of them at most, whole prompt sets)."""
        from biasatlas.probes.debias.pipeline import evaluation_split
        from biasatlas.probes.debias.splits import SplitError

        c = self._config(config)
        try:
            return evaluation_split(c).part(c.eval_on)
        except SplitError as exc:
            raise ProbeConfigError(str(exc)) from None

    def settings(self, config: ProbeConfig) -> GenerationSettings:
        from biasatlas.probes.debias.pipeline import contact_settings

        return contact_settings(self._config(config))

    def plan_summary(self, prompts: Sequence[Prompt], config: ProbeConfig) -> dict[str, Any]:
        c = self._config(config)
        return {**super().plan_summary(prompts, c), "setting": c.setting, "part": c.eval_on}

    def run(
        self,
        config: ProbeConfig,
        backend: BackendOptions,
        study: str | Path,
        *,
        progress: bool = False,
        on_totals: Callable[[RunTotals], None] | None = None,
    ) -> list[RunTotals]:
        """Before, LoRA training (unless a finished adapter of this run, or ``backend.adapter``, is there),
        after; every answer stored in ``study``. One RunTotals per run (contact, then QA/BBQ, per side)."""
        from biasatlas.probes.debias.adapters import AdapterError
        from biasatlas.probes.debias.pipeline import execute, prepare

        try:
            plan = prepare(self._config(config), backend, study)
        except (AdapterError, ValueError) as exc:
            raise ProbeConfigError(str(exc)) from None
        totals = execute(plan, backend, study, progress=progress)
        if on_totals is not None:
            for t in totals:
                on_totals(t)
        return totals

    def outcomes(self, store: Store) -> pd.DataFrame:
        """One row per answer of the before/after contact runs: setting, part, role, factors, decision."""
        from biasatlas.probes.debias.evaluate import evaluation_outcomes

        return evaluation_outcomes(store)

    def summarise(self, store: Store, **analysis: Any) -> dict[str, Any]:
        """Before/after tables and tests (``alpha``: 0.05, ``correction``: bh by default); {} without a comparison."""
        from biasatlas.probes.debias.summary import summarise

        self.check_analysis(analysis)
        return summarise(store, alpha=analysis.get("alpha"), correction=analysis.get("correction"))

    def print_summary(self, summary: dict[str, Any], console: Any) -> None:
        from biasatlas.probes.debias.summary import print_summary

        print_summary(summary, console)

    def report_sections(self, store: Store) -> list[Section]:
        """One section: a before/after chart per setting (Figure 4), the paper's tables, quality checks."""
        from biasatlas.probes.debias import report as debias_report
        from biasatlas.probes.debias.summary import summarise

        return debias_report.sections(summarise(store))


PROBE = DebiasProbe()
