"""`biasatlas debias`: Social Contact Debiasing — split, tune (LoRA), evaluate before/after, report."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError

from biasatlas.cli.app import app
from biasatlas.cli.common import BatchOpt, ModelOpt, StudyOpt, console, fail, open_backend
from biasatlas.probes.debias.adapters import AdapterError, check_adapter, tunable_location
from biasatlas.probes.debias.data import TrainingDataError, build_examples
from biasatlas.probes.debias.splits import PARTS, Split, SplitError, build_split, setting_names
from biasatlas.probes.debias.train import TrainConfig, base_model_name, is_finished, read_manifest, run_fingerprint
from biasatlas.records import GenerationSettings, Prompt
from biasatlas.store import Store


def _progress() -> bool:
    return sys.stderr.isatty()


def _train_config(**values: Any) -> TrainConfig:
    try:
        return TrainConfig(**{k: v for k, v in values.items() if v is not None})
    except ValidationError as exc:
        fail("; ".join(f"{e['loc'][0]}: {e['msg']}" for e in exc.errors()))
        raise


def _adapter_state(adapter_dir: Path, location: Any, fingerprint: str, retrain: bool) -> str:
    """'reuse' (a finished adapter of this exact run), 'train' (new or resumable), or an error."""
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


def _run(prompts: list[Prompt], backend: Any, store: Store, settings: GenerationSettings,
         config: dict[str, Any], label: str) -> None:
    from biasatlas.probes.debias import evaluate as evaluate  # scipy/statsmodels: on use
    totals = evaluate.run_side(prompts, backend, store, settings, config, progress=_progress())
    console.print(
        f"{label}: planned {totals.planned}, cached {totals.cached}, new {totals.new}, failed {totals.failed} "
        f"in {totals.seconds:.1f} s"
    )


def _side(role: str, backend: Any, store: Store, split: Split, part: str, mode: str, model: str,
          adapter: str | None, extras: dict[str, list[Prompt]]) -> None:
    """Every evaluation of one side (before or after): contact prompts, then QA / BBQ."""
    from biasatlas.probes.debias import evaluate as evaluate  # scipy/statsmodels: on use
    from biasatlas.probes.debias import quality as quality  # scipy/statsmodels: on use
    settings = GenerationSettings(mode=mode, max_tokens=10)  # type: ignore[arg-type]
    cfg = evaluate.run_config(role, split.setting.name, part, split.fingerprint(), model, adapter, split.language)
    _run(split.part(part), backend, store, settings, cfg, f"{role}: contact {part} prompts")
    for task, prompts in extras.items():
        task_settings = quality.QA_SETTINGS if task == "qa" else quality.BBQ_SETTINGS
        tcfg = evaluate.run_config(role, split.setting.name, task, quality.fingerprint(prompts), model, adapter,
                                   "en")
        tcfg["probe"] = quality.PROBE
        _run(prompts, backend, store, task_settings, tcfg, f"{role}: {task} ({len(prompts)} items)")


@app.command("debias")
def debias(
    study: StudyOpt,
    setting: Annotated[str, typer.Option("--setting", help=f"One of: {', '.join(setting_names())}.")] = "mixed",
    model: ModelOpt = "smollm2",
    lang: Annotated[str, typer.Option("--lang", help="Language of the contact prompts: en, de, is.")] = "en",
    limit: Annotated[
        int | None, typer.Option("--limit", help="Total prompts of the split (train:validation:test = 2:1:4).")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the split and of training.")] = 0,
    epochs: Annotated[float, typer.Option("--epochs", help="Training epochs.")] = 1.0,
    lr: Annotated[float, typer.Option("--lr", help="Learning rate.")] = 2e-4,
    rank: Annotated[int, typer.Option("--rank", help="LoRA rank.")] = 8,
    alpha: Annotated[int | None, typer.Option("--alpha", help="LoRA alpha (default 2 × rank).")] = None,
    train_batch: Annotated[int, typer.Option("--batch-size", help="Training batch size.")] = 8,
    grad_accum: Annotated[int, typer.Option("--grad-accum", help="Gradient accumulation steps.")] = 1,
    target_modules: Annotated[
        str, typer.Option("--target-modules", help="Comma-separated module names LoRA adapts.")
    ] = "q_proj,v_proj",
    top_layers: Annotated[
        int | None, typer.Option("--top-layers", help="LoRA on the top N layers only (faster on a CPU).")
    ] = None,
    mode: Annotated[str, typer.Option("--mode", help="Contact evaluation: choice or generate.")] = "choice",
    eval_part: Annotated[
        str, typer.Option("--eval-on", help="Split part to evaluate on: test (default), validation or train.")
    ] = "test",
    adapter: Annotated[
        Path | None, typer.Option("--adapter", help="Evaluate this existing adapter instead of training one.")
    ] = None,
    retrain: Annotated[bool, typer.Option("--retrain", help="Replace an adapter this study already holds.")] = False,
    qa: Annotated[bool, typer.Option("--qa/--no-qa", help="ROUGE-L on the shipped QA set.")] = True,
    qa_limit: Annotated[int | None, typer.Option("--qa-limit", help="Ask only the first N QA items.")] = None,
    bbq: Annotated[
        list[Path] | None, typer.Option("--bbq", help="BBQ jsonl file(s) or a directory of them.")
    ] = None,
    bbq_limit: Annotated[int | None, typer.Option("--bbq-limit", help="BBQ items per file.")] = None,
    eval_batch: BatchOpt = None,
    plan_only: Annotated[bool, typer.Option("--plan-only", help="Print the split and plan as JSON; run nothing.")]
    = False,
) -> None:
    """Social Contact Debiasing: LoRA-tune a local model on unbiased answers, compare before and after."""
    # ---- every check before any work ----
    from biasatlas.probes.debias import quality as quality  # scipy/statsmodels: on use
    if mode not in ("choice", "generate"):
        fail(f"unknown mode {mode!r}; valid: choice, generate")
    if eval_part not in PARTS:
        fail(f"unknown --eval-on {eval_part!r}; valid: {', '.join(PARTS)}")
    try:
        location = tunable_location(model)
        split = build_split(setting, language=lang, seed=seed, limit=limit)
        train_examples = build_examples(split.train)
        val_examples = build_examples(split.validation)
        config = _train_config(epochs=epochs, learning_rate=lr, rank=rank, alpha=alpha, batch_size=train_batch,
                               grad_accum=grad_accum, seed=seed, top_layers=top_layers,
                               target_modules=[m.strip() for m in target_modules.split(",") if m.strip()])
        fingerprint = run_fingerprint(config, base_model_name(location), train_examples)
        if adapter is not None:
            check_adapter(location, adapter)
            adapter_dir, state = adapter, "given"
        else:
            adapter_dir = study / "adapters" / setting
            state = _adapter_state(adapter_dir, location, fingerprint, retrain)
        extras: dict[str, list[Prompt]] = {}
        if qa:
            extras["qa"] = quality.qa_prompts(qa_limit)
        if bbq:
            from biasatlas.probes.debias import bbq as bbq_mod

            extras["bbq"] = bbq_mod.prompts(bbq_mod.read_bbq(bbq, bbq_limit))
    except (SplitError, AdapterError, TrainingDataError, ValueError) as exc:
        fail(str(exc))
        return
    plan = {
        "split": split.summary(),
        "training": {"examples": len(train_examples), "adapter_dir": str(adapter_dir), "state": state,
                     "config": config.model_dump()},
        "evaluation": {"part": eval_part, "prompts": len(split.part(eval_part)), "mode": mode,
                       **{task: len(p) for task, p in extras.items()}},
    }
    if plan_only:
        sys.stdout.write(json.dumps(plan, indent=2, default=str) + "\n")
        return
    console.print(
        f"setting {split.setting.number} ({setting}): train {len(split.train)}, validation "
        f"{len(split.validation)}, test {len(split.test)} prompts; adapter {adapter_dir} ({state})"
    )
    store = Store(study)
    try:
        # ---- before: the base model; then training on the same loaded weights ----
        base = open_backend(model, batch_size=eval_batch)
        try:
            _side("before", base, store, split, eval_part, mode, model, None, extras)
            if state == "train":
                from biasatlas.probes.debias.train import train_adapter

                device = getattr(base, "device", "?")
                console.print(f"training: {len(train_examples)} examples × {config.epochs} epoch(s) on {device}")
                result = train_adapter(base, train_examples, val_examples, config, adapter_dir, model_spec=model,
                                       extra={"split": split.summary()}, progress=_progress())
                console.print(
                    f"trained: {result.steps} steps in {result.seconds:.1f} s "
                    f"({result.examples_per_s:.2f} examples/s), "
                    f"train loss {result.train_loss:.4f}"
                    + ("" if result.eval_loss is None else f", validation loss {result.eval_loss:.4f}")
                )
        finally:
            base.close()
            del base
        # ---- after: a fresh model with the saved adapter, exactly as any probe would load it ----
        tuned = open_backend(model, batch_size=eval_batch, adapter=str(adapter_dir))
        try:
            _side("after", tuned, store, split, eval_part, mode, model, str(adapter_dir.resolve()), extras)
        finally:
            tuned.close()
    except KeyboardInterrupt:
        console.print(f"[yellow]interrupted[/]: answers and checkpoints are kept in {study}; run the same "
                      "command again to resume.")
        raise typer.Exit(130) from None
    finally:
        store.close()
    _finish(study, setting)


def _finish(study: Path, setting: str) -> None:
    """Print this setting's before/after table and rewrite the study's report."""
    from rich.console import Console

    from biasatlas.cli.main import report
    from biasatlas.probes.debias import probe as probe

    with Store(study) as store:
        summary = probe.summarise(store)
    summary["contact"] = [c for c in summary.get("contact", []) if c["setting"] == setting]
    probe.print_summary(summary, Console())
    report(study)
