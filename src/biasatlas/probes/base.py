"""What every probe provides, and the helpers all of them share.

A probe is a package ``biasatlas.probes.<name>`` whose ``probe`` module holds one ``PROBE`` object,
an instance of a :class:`Probe` subclass. The stages live in the package's other modules (data
loading, prompt planning, answer reading, analysis, report sections); the ``probe`` module only
wires them together, and nothing below it imports it (no import circles).
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Callable, Hashable, Sequence
from contextvars import ContextVar
from itertools import zip_longest
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from biasatlas.records import GenerationSettings, Prompt

if TYPE_CHECKING:  # pandas and the report are imported on use: CLI start-up stays fast
    from pathlib import Path

    import pandas as pd

    from biasatlas.backends.options import BackendOptions
    from biasatlas.report.html import Section
    from biasatlas.runner import RunTotals
    from biasatlas.store import Store


#: the CLI command line being run (set by the CLI; None when called from Python)
CLI_COMMAND: ContextVar[str | None] = ContextVar("biasatlas_cli_command", default=None)


class ProbeConfigError(ValueError):
    """A probe configuration that cannot be planned; the message is one line for the user."""


def paper_design(value: str | None) -> str | None:
    """``design``'s one value besides None (ours): ``paper``, the paper's design that the probe's design
    module sets (contact, Samaritan, stories, debiasing; leakage's two analysis designs are its own)."""
    if value is not None and value != "paper":
        raise ValueError(f"unknown design {value!r}; valid: paper")
    return value


#: a config's ``design`` field: None or ``paper``
PaperDesign = Annotated[str | None, AfterValidator(paper_design)]


class ProbeConfig(BaseModel):
    """Options every probe's configuration has; each probe subclasses it with its own design factors.

    ``languages`` None means the probe's default languages. ``limit`` counts prompts (never prompt
    sets or scenarios): a seeded draw stratified over the design cells, whole prompt sets where a
    probe pairs prompts. ``mode``, ``max_tokens`` and ``temperature`` None mean the probe's defaults.
    """

    model_config = ConfigDict(extra="forbid")
    languages: list[str] | None = None
    seed: int = 0
    samples: int | None = Field(default=None, ge=1)
    limit: int | None = Field(default=None, ge=1)
    mode: str | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0.0)


class Probe(ABC):
    """One published method: plan prompts, read answers, analyse, report."""

    name: ClassVar[str]
    title: ClassVar[str]
    #: the pydantic model of this probe's configuration
    config_model: ClassVar[type[ProbeConfig]]
    #: design factors of ``Prompt.meta`` shown in a plan and kept in the tidy outcomes frame
    factors: ClassVar[tuple[str, ...]]
    #: the languages the probe has data for, and its default
    languages: ClassVar[tuple[str, ...]]
    default_languages: ClassVar[tuple[str, ...]] = ("en",)
    #: the modes it can ask in (the first is the default)
    modes: ClassVar[tuple[str, ...]] = ("generate",)

    # ---- configuration ---------------------------------------------------------------------
    def config(self, **values: Any) -> ProbeConfig:
        """Validate keyword options into this probe's config; a one-line ProbeConfigError otherwise."""
        values = {k: v for k, v in values.items() if v is not None}
        try:
            config = self.config_model(**values)
        except ValidationError as exc:
            raise ProbeConfigError(_validation_message(exc)) from None
        if config.mode is not None and config.mode not in self.modes:
            raise ProbeConfigError(
                f"--mode {config.mode!r} is not valid for {self.name}; valid: {', '.join(self.modes)}"
            )
        bad = [lang for lang in (config.languages or []) if lang not in self.languages]
        if bad:
            raise ProbeConfigError(
                f"--lang {bad[0]!r} is not valid for {self.name}; valid: {', '.join(self.languages)}"
            )
        return config

    def languages_of(self, config: ProbeConfig) -> list[str]:
        return list(config.languages or self.default_languages)

    def mode_of(self, config: ProbeConfig) -> str:
        return config.mode or self.modes[0]

    # ---- stages ----------------------------------------------------------------------------
    @abstractmethod
    def plan(self, config: ProbeConfig) -> list[Prompt]:
        """Every prompt of the configured design (``limit`` applied)."""

    @abstractmethod
    def settings(self, config: ProbeConfig) -> GenerationSettings:
        """How to ask: mode and decoding settings."""

    def samples(self, config: ProbeConfig) -> int:
        """Samples per prompt (each cached separately)."""
        return config.samples or 1

    def plan_summary(self, prompts: Sequence[Prompt], config: ProbeConfig) -> dict[str, Any]:
        """Size and factor counts of a plan (`--plan-only`), and per cell the minimum detectable effect
        (``power``, where the probe has a power model); probes may add their own figures."""
        return plan_summary(prompts, self.factors, self.samples(config), probe=self.name, mode=self.mode_of(config),
                            alpha=getattr(config, "alpha", None))

    def run_record(self, config: ProbeConfig) -> dict[str, Any]:
        """What the run record keeps of the configuration (beside settings, samples and backend)."""
        record: dict[str, Any] = {"probe": self.name, "config": config.model_dump(mode="json")}
        command = CLI_COMMAND.get()
        if command:  # the command line that resumes this run, shown for unfinished runs
            record["command"] = command
        return record

    def run(
        self,
        config: ProbeConfig,
        backend: BackendOptions,
        study: str | Path,
        *,
        progress: bool = False,
        on_totals: Callable[[RunTotals], None] | None = None,
    ) -> list[RunTotals]:
        """Ask the plan into the study (resumable: only what is missing is asked); one RunTotals per step.

        Probes with more than one step (stories: generation, then extraction) override this.
        A KeyboardInterrupt propagates after the run is marked interrupted; every answer stays stored.
        """
        from biasatlas.held_warnings import hold_warnings, release_warnings
        from biasatlas.runner import run_plan
        from biasatlas.store import Store

        with hold_warnings() as held:  # shown once the model and the study open: an error stays one line
            prompts = self.plan(config)
        if not prompts:
            raise ProbeConfigError("the plan is empty: nothing to ask (check the filters)")
        from biasatlas.lock import study_writer

        model = backend.open()
        try:
            with study_writer(study), Store(study) as store:
                release_warnings(held)
                totals = run_plan(prompts, model, store, self.settings(config), samples=self.samples(config),
                                  config=self.run_record(config), progress=progress)
        finally:
            model.close()
        if on_totals is not None:
            on_totals(totals)
        return [totals]

    @abstractmethod
    def outcomes(self, store: Store) -> pd.DataFrame:
        """Tidy frame: one row per stored answer, every design factor and the parsed value/reason."""

    #: the outcomes column holding the parsed answer (None/NaN = unreadable), for the validity table
    value_column: ClassVar[str | None] = None

    def validity(self, store: Store) -> pd.DataFrame:
        """Readable answers, refusals, hedges, other-language and cut answers per model x language."""
        import pandas as pd

        from biasatlas.validity import validity_table

        frame = self.outcomes(store)
        column = self.value_column or next(
            (c for c in ("answer", "rating", "value", "decision") if c in frame.columns), None
        )
        if frame.empty or column is None:
            return pd.DataFrame()
        return validity_table(frame, column)

    def check_analysis(self, analysis: dict[str, Any], allowed: Sequence[str] = ("alpha", "correction")) -> None:
        """Refuse analysis options this probe does not take (a typo must not pass silently)."""
        unknown = set(analysis) - set(allowed)
        if unknown:
            raise TypeError(f"unknown analysis option(s) for {self.name}: {', '.join(sorted(unknown))}")

    @abstractmethod
    def summarise(self, store: Store, **analysis: Any) -> dict[str, Any]:
        """JSON-ready analysis of everything the study holds for this probe (``alpha``, ``correction``)."""

    @abstractmethod
    def print_summary(self, summary: dict[str, Any], console: Any) -> None:
        """The summary as rich tables."""

    @abstractmethod
    def report_sections(self, store: Store) -> list[Section]:
        """Sections of the HTML report."""


def _validation_message(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error["loc"])
        message = str(error["msg"]).removeprefix("Value error, ")
        value = error.get("input")
        shown = "" if isinstance(value, dict) else f" (got {value!r})"
        parts.append(f"{where}: {message}{shown}" if where else message)
    return "; ".join(parts)


def plan_summary(prompts: Sequence[Prompt], factors: Sequence[str], samples: int = 1, *, probe: str | None = None,
                 mode: str | None = None, alpha: float | None = None) -> dict[str, Any]:
    """The plan's size, how many prompts each level of each design factor has and, for a probe with a
    power model (:mod:`biasatlas.probes.power`), the minimum detectable effect per cell at 80% power and
    ``alpha`` (the probe's default where None). ``probe`` None: the prompts' own probe."""
    from collections import Counter

    from biasatlas.probes.power import power_plan

    counts: dict[str, Any] = {}
    for factor in factors:
        if factor == "language":
            continue  # given by Prompt.language, below
        c = Counter(str(p.meta[factor]) for p in prompts if p.meta.get(factor) is not None)
        if c:
            counts[factor] = dict(sorted(c.items()))
    languages = Counter(p.language for p in prompts)
    summary: dict[str, Any] = {
        "prompts": len(prompts),
        "samples_per_prompt": samples,
        "requests": len(prompts) * samples,
        "languages": dict(sorted(languages.items())),
        "factors": counts,
    }
    name = probe if probe is not None else (prompts[0].probe if prompts else None)
    power = power_plan(name, prompts, mode=mode, alpha=alpha) if name is not None and prompts else None
    if power is not None:
        summary["power"] = power
    return summary


def limit_prompts(
    prompts: Sequence[Prompt],
    limit: int | None,
    seed: int,
    *,
    cell: Callable[[Prompt], Hashable],
    unit: Callable[[Prompt], Hashable] | None = None,
    language: Callable[[Prompt], str] | None = None,
) -> list[Prompt]:
    """A seeded draw of about ``limit`` prompts that keeps every design cell represented.

    ``unit`` groups prompts that must stay together (a contact prompt set: none/positive/negative);
    whole units are drawn, so the result can fall short of ``limit`` by less than one unit and holds
    at least one unit. ``cell`` names the stratum of a unit (e.g. language x scale x scenario): units
    are drawn round-robin over the cells, in a seeded order, so a small limit still touches every
    cell (as many as it can); languages take turns first (``language`` names an item's language; default
    its ``language`` attribute). The plan's order is kept.
    """
    if limit is None or limit >= len(prompts):
        return list(prompts)
    unit_of = unit or (lambda p: p.id)
    units: dict[Hashable, list[int]] = {}
    for i, p in enumerate(prompts):
        units.setdefault(unit_of(p), []).append(i)
    by_cell: dict[Hashable, list[Hashable]] = defaultdict(list)
    for key, members in units.items():
        by_cell[cell(prompts[members[0]])].append(key)
    rng = random.Random(seed)
    by_language: dict[str, list[list[Hashable]]] = defaultdict(list)
    for c in sorted(by_cell, key=repr):
        keys = list(by_cell[c])
        rng.shuffle(keys)
        first = prompts[units[keys[0]][0]]
        by_language[language(first) if language else str(getattr(first, "language", ""))].append(keys)
    for cells in by_language.values():
        rng.shuffle(cells)
    # Languages take turns first, so a small limit over several languages touches each of them.
    queues = [q for group in zip_longest(*by_language.values()) for q in group if q is not None]
    chosen: list[int] = []
    taken = 0
    while queues:
        next_round = []
        for q in queues:
            size = len(units[q[-1]])
            if taken and taken + size > limit:
                continue
            chosen.extend(units[q.pop()])
            taken += size
            if q:
                next_round.append(q)
        if taken >= limit or not next_round or all(taken + len(units[q[-1]]) > limit for q in next_round):
            break
        queues = next_round
    return [prompts[i] for i in sorted(chosen)]
