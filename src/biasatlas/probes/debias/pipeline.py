"""A debiasing run, step by step: every check first, then before, LoRA training, after.

:func:`prepare` does all that can fail on bad input (setting, split, model, adapter, QA/BBQ files)
before anything is loaded or written; :func:`execute` asks the base model ("before"), trains the
adapter on the same loaded weights (unless a finished one of this exact run is there, or one is
given), and asks base + adapter ("after"), each through the normal runner into the study.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biasatlas.probes.debias.adapters import AdapterError, check_adapter, tunable_location
from biasatlas.probes.debias.config import DEFAULT_MAX_TOKENS, DebiasConfig
from biasatlas.probes.debias.data import TrainingExample, build_examples
from biasatlas.probes.debias.splits import Split, SplitSizes, build_split
from biasatlas.probes.debias.train import TrainConfig, base_model_name, is_finished, read_manifest, run_fingerprint
from biasatlas.records import GenerationSettings, Prompt

if TYPE_CHECKING:
    from biasatlas.backends.options import BackendOptions
    from biasatlas.runner import RunTotals
    from biasatlas.store import Store


def _quiet(message: str) -> None:
    """The default reporter: say nothing (the CLI passes its console)."""


def evaluation_split(config: DebiasConfig) -> Split:
    """The setting's split; ``limit`` sizes its evaluated part (the others in proportion); ``design`` paper: the
    paper's sizes (without ``limit``) and its system prompt."""
    sizes = SplitSizes.for_evaluation(config.limit, config.eval_on) if config.limit is not None else None
    if config.design is None:
        return build_split(config.setting, language=config.language, seed=config.seed, sizes=sizes)
    from biasatlas.probes.debias.design import dress_split, paper_sizes

    sizes = sizes or paper_sizes(config.setting)
    return dress_split(build_split(config.setting, language=config.language, seed=config.seed, sizes=sizes))


def contact_settings(config: DebiasConfig) -> GenerationSettings:
    """How the contact prompts are asked on both sides (greedy, one word, choice by default)."""
    return GenerationSettings(
        mode=config.mode or "choice",  # type: ignore[arg-type]
        max_tokens=config.max_tokens or DEFAULT_MAX_TOKENS,
        temperature=config.temperature or 0.0,
        seed=config.seed,
    )


@dataclass
class DebiasPlan:
    """Everything a run will do, checked: the split, the training data, the adapter, the evaluations."""

    config: DebiasConfig
    model: str
    split: Split
    train_examples: list[TrainingExample]
    validation_examples: list[TrainingExample]
    train_config: TrainConfig
    adapter_dir: Path
    state: str  # "train" (new or resumable), "reuse" (finished, same run), "given" (--adapter)
    extras: dict[str, list[Prompt]] = field(default_factory=dict)

    def evaluation(self) -> list[Prompt]:
        return self.split.part(self.config.eval_on)

    def as_dict(self) -> dict[str, Any]:
        """The plan as JSON (``--plan-only``)."""
        return {
            "split": self.split.summary(),
            "training": {"examples": len(self.train_examples), "adapter_dir": str(self.adapter_dir),
                         "state": self.state, "config": self.train_config.model_dump()},
            "evaluation": {"part": self.config.eval_on, "prompts": len(self.evaluation()),
                           "mode": contact_settings(self.config).mode,
                           **{task: len(p) for task, p in self.extras.items()}},
        }


def adapter_state(adapter_dir: Path, location: Any, fingerprint: str, retrain: bool) -> str:
    """'reuse' (a finished adapter of this exact run), 'train' (new or resumable), or an AdapterError."""
    if not adapter_dir.exists() or retrain:
        return "train"
    if is_finished(adapter_dir, fingerprint):
        check_adapter(location, adapter_dir)
        return "reuse"
    manifest = read_manifest(adapter_dir) or {}
    if manifest.get("fingerprint") == fingerprint:
        return "train"  # same run, unfinished: resume from its checkpoint
    if manifest.get("status") == "finished" or (adapter_dir / "adapter_config.json").exists():
        was = manifest.get("base_model", "?")
        raise AdapterError(
            f"{adapter_dir} already holds an adapter from a different run (base {was!r}, settings "
            f"{manifest.get('config')}); pass --retrain to replace it, or use another --study"
        )
    return "train"


def prepare(config: DebiasConfig, backend: BackendOptions, study: str | Path) -> DebiasPlan:
    """Check everything and plan the run; raises SplitError, AdapterError, TrainingDataError,
    DataFileError or ValueError with a one-line message, before any model is loaded."""
    from biasatlas.probes.debias import quality as quality  # scipy/statsmodels: on use

    location = tunable_location(backend.model)
    split = evaluation_split(config)
    train_examples = build_examples(split.train)
    validation_examples = build_examples(split.validation)
    train_config = config.train_config()
    fingerprint = run_fingerprint(train_config, base_model_name(location), train_examples)
    if backend.adapter is not None:
        adapter_dir, state = Path(backend.adapter), "given"
        check_adapter(location, adapter_dir)
    else:
        adapter_dir = Path(study) / "adapters" / config.setting
        state = adapter_state(adapter_dir, location, fingerprint, config.retrain)
    extras: dict[str, list[Prompt]] = {}
    if config.qa:
        extras["qa"] = quality.qa_prompts(config.qa_limit)
    if config.bbq:
        from biasatlas.probes.debias import bbq as bbq_mod

        extras["bbq"] = bbq_mod.prompts(bbq_mod.read_bbq([Path(p) for p in config.bbq], config.bbq_limit))
    return DebiasPlan(config, backend.model, split, train_examples, validation_examples, train_config,
                      adapter_dir, state, extras)


def _side(role: str, backend: Any, store: Store, plan: DebiasPlan, adapter: str | None, progress: bool,
          say: Callable[[str], None]) -> list[RunTotals]:
    """Every evaluation of one side (before or after): the contact prompts, then QA / BBQ."""
    from biasatlas.probes.debias import evaluate as evaluate  # scipy/statsmodels: on use
    from biasatlas.probes.debias import quality as quality

    split, part = plan.split, plan.config.eval_on
    cfg = evaluate.run_config(role, split.setting.name, part, split.fingerprint(), plan.model, adapter,
                              split.language)
    steps = [(f"{role}: contact {part} prompts", plan.evaluation(), contact_settings(plan.config), cfg,
              plan.config.samples or 1)]
    for task, prompts in plan.extras.items():
        tcfg = evaluate.run_config(role, split.setting.name, task, quality.fingerprint(prompts), plan.model,
                                   adapter, "en")
        tcfg["probe"] = quality.PROBE
        settings = quality.QA_SETTINGS if task == "qa" else quality.BBQ_SETTINGS
        steps.append((f"{role}: {task} ({len(prompts)} items)", prompts, settings, tcfg, 1))
    from biasatlas.probes.base import CLI_COMMAND

    command = CLI_COMMAND.get()
    out = []
    for label, prompts, settings, run_cfg, samples in steps:
        if command:  # the command line that resumes this run, shown for unfinished runs
            run_cfg["command"] = command
        totals = evaluate.run_side(prompts, backend, store, settings, run_cfg, progress=progress, samples=samples)
        say(f"{label}: planned {totals.planned}, cached {totals.cached}, new {totals.new}, "
            f"failed {totals.failed} in {totals.seconds:.1f} s")
        out.append(totals)
    return out


def execute(plan: DebiasPlan, backend: BackendOptions, study: str | Path, *, progress: bool = False,
            say: Callable[[str], None] = _quiet) -> list[RunTotals]:
    """Before, training (when needed), after; every answer stored in ``study``. One RunTotals per run.

    A KeyboardInterrupt propagates; stored answers and training checkpoints are kept, and the
    same call again resumes.
    """
    from biasatlas.backends.extras import require
    from biasatlas.lock import study_writer
    from biasatlas.store import Store

    if plan.state == "train":  # fail before the minutes of the "before" evaluation, not after
        require("train", "Social Contact Debiasing (LoRA training)")
    split = plan.split
    say(f"setting {split.setting.number} ({split.setting.name}): train {len(split.train)}, validation "
        f"{len(split.validation)}, test {len(split.test)} prompts; adapter {plan.adapter_dir} ({plan.state})")
    totals: list[RunTotals] = []
    with study_writer(study), Store(study) as store:
        # ---- before: the base model; then training on the same loaded weights ----
        base = backend.model_copy(update={"adapter": None}).open()
        try:
            totals += _side("before", base, store, plan, None, progress, say)
            if plan.state == "train":
                from biasatlas.probes.debias.train import train_adapter

                device = getattr(base, "device", "?")
                say(f"training: {len(plan.train_examples)} examples × {plan.train_config.epochs} epoch(s) "
                    f"on {device}")
                result = train_adapter(base, plan.train_examples, plan.validation_examples, plan.train_config,
                                       plan.adapter_dir, model_spec=plan.model, extra={"split": split.summary()},
                                       progress=progress)
                say(f"trained: {result.steps} steps in {result.seconds:.1f} s "
                    f"({result.examples_per_s:.2f} examples/s), train loss {result.train_loss:.4f}"
                    + ("" if result.eval_loss is None else f", validation loss {result.eval_loss:.4f}"))
        finally:
            base.close()
            del base
        # ---- after: a fresh model with the saved adapter, exactly as any probe would load it ----
        tuned = backend.model_copy(update={"adapter": str(plan.adapter_dir)}).open()
        try:
            totals += _side("after", tuned, store, plan, str(plan.adapter_dir.resolve()), progress, say)
        finally:
            tuned.close()
    return totals
