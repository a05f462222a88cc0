"""`biasatlas debias`: Social Contact Debiasing — split, tune (LoRA), evaluate before/after, report."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from biasatlas.backends.base import BackendError
from biasatlas.cli.app import app
from biasatlas.cli.common import (
    AlphaOpt,
    CorrectionOpt,
    check_analysis_options,
    check_study,
    console,
    fail,
    finish,
    interrupted,
    resume_command,
    show_progress,
)
from biasatlas.cli.options import RunOptions, run_options

# biasatlas.probes.debias.splits.setting_names() and PARTS (a test checks): the probe (torch, peft,
# pandas) is imported inside the command, so `biasatlas --help` stays fast.
SETTINGS = ("mixed", "cross-dataset", "cross-scale-certainty", "cross-scale-likelihood", "cross-scale-frequency",
            "cross-scenario", "cross-principle", "cross-dimension")
PARTS = ("train", "validation", "test")


@app.command("debias")
@run_options
def debias(
    setting: Annotated[str, typer.Option("--setting", help=f"One of: {', '.join(SETTINGS)}.")] = "mixed",
    epochs: Annotated[float, typer.Option("--epochs", help="Training epochs.")] = 1.0,
    lr: Annotated[float, typer.Option("--lr", help="Learning rate.")] = 2e-4,
    rank: Annotated[int, typer.Option("--rank", help="LoRA rank.")] = 8,
    lora_alpha: Annotated[int | None, typer.Option("--lora-alpha", help="LoRA alpha (default 2 × rank).")] = None,
    train_batch_size: Annotated[
        int, typer.Option("--train-batch-size", help="Training batch size (--batch-size: evaluation).")
    ] = 8,
    grad_accum: Annotated[int, typer.Option("--grad-accum", help="Gradient accumulation steps.")] = 1,
    target_modules: Annotated[
        str, typer.Option("--target-modules", help="Comma-separated module names LoRA adapts.")
    ] = "q_proj,v_proj",
    top_layers: Annotated[
        int | None, typer.Option("--top-layers", help="LoRA on the top N layers only (faster on a CPU).")
    ] = None,
    eval_on: Annotated[
        str, typer.Option("--eval-on", help=f"Split part to evaluate on: {', '.join(PARTS)} (default test).")
    ] = "test",
    retrain: Annotated[bool, typer.Option("--retrain", help="Replace an adapter this study already holds.")] = False,
    qa: Annotated[bool, typer.Option("--qa/--no-qa", help="ROUGE-L on the shipped QA set.")] = True,
    qa_limit: Annotated[int | None, typer.Option("--qa-limit", help="Ask only the first N QA items.")] = None,
    bbq: Annotated[
        list[Path] | None, typer.Option("--bbq", help="BBQ jsonl file(s) or a directory of them.")
    ] = None,
    bbq_limit: Annotated[int | None, typer.Option("--bbq-limit", help="BBQ items per file.")] = None,
    alpha: AlphaOpt = None,
    correction: CorrectionOpt = None,
    design: Annotated[
        str | None,
        typer.Option("--design", help="paper: Raj et al.'s (2024) design (English, the setting's split sizes, LLaMA-2 "
                                      "system prompt, generated answers, 1 epoch); printed, and --plan-only gives "
                                      "the paper's sizes, cost and time."),
    ] = None,
    *,
    opts: RunOptions,
) -> None:
    """Social Contact Debiasing: LoRA-tune a local model on unbiased answers, compare before and after.

    --limit N: N evaluation prompts at most (whole contact prompt sets of 3), the training and
    validation parts in the default 2 : 1 : 4 proportion to the test part (default: 10k / 5k / 20k).
    One --lang per run. --mode: choice (default) or generate. --adapter DIR evaluates that adapter
    instead of training one; --batch-size is the evaluation batch. --seed draws the split and seeds
    training. --alpha/--correction: the before/after tests in the summary printed at the end.
    """
    analysis = check_analysis_options(alpha, correction)
    from biasatlas.probes.base import CLI_COMMAND, ProbeConfigError
    from biasatlas.probes.debias.adapters import AdapterError
    from biasatlas.probes.debias.pipeline import execute, prepare
    from biasatlas.probes.debias.probe import PROBE
    from biasatlas.store import StoreError

    if design is not None:  # defaults the design sets are not "given": only what the user typed can differ
        from biasatlas.cli.design import say_design

        say_design("debias", design, {**opts.probe_values(), "setting": setting,
                                      "epochs": None if epochs == 1.0 else epochs})
    try:  # ---- every check before any work ----
        config: Any = PROBE.config(
            **opts.probe_values(), design=design, setting=setting, eval_on=eval_on, epochs=epochs, learning_rate=lr,
            rank=rank, lora_alpha=lora_alpha, train_batch_size=train_batch_size, grad_accum=grad_accum,
            target_modules=target_modules, top_layers=top_layers, retrain=retrain, qa=qa, qa_limit=qa_limit,
            bbq=[str(p) for p in bbq] if bbq else None, bbq_limit=bbq_limit,
        )
        plan = prepare(config, opts.backend, opts.study)
    except (ProbeConfigError, AdapterError, ValueError) as exc:
        fail(str(exc))
        return
    if opts.plan_only:
        summary = PROBE.plan_summary(plan.evaluation(), config)
        if config.design is not None:
            from biasatlas.probes.debias.design import plan_block

            summary["design"] = plan_block(plan)
        sys.stdout.write(json.dumps({**summary, **plan.as_dict()}, indent=2, ensure_ascii=False, default=str) + "\n")
        return
    check_study(opts.study, write=True)
    CLI_COMMAND.set(resume_command())
    try:
        totals = execute(plan, opts.backend, opts.study, progress=show_progress(opts), say=console.print)
    except (BackendError, StoreError) as exc:  # StoreError: a damaged study, one from a newer biasatlas
        fail(str(exc))
        return
    except KeyboardInterrupt:
        if plan.state == "train":
            console.print(f"training checkpoints are kept in {plan.adapter_dir}")
        interrupted(opts.study)
        return
    _finish(opts.study, setting, analysis)
    finish(totals)


def _finish(study: Path, setting: str, analysis: dict[str, Any]) -> None:
    """Print this setting's before/after table and rewrite the study's report."""
    from rich.console import Console

    from biasatlas.probes.debias.probe import PROBE
    from biasatlas.report.build import build_report
    from biasatlas.store import Store

    with Store(study) as store:
        summary = PROBE.summarise(store, **analysis)
        summary["contact"] = [c for c in summary.get("contact", []) if c["setting"] == setting]
        PROBE.print_summary(summary, Console())
        path = build_report(store, study)
    console.print(f"report written: {path}")


# `biasatlas debias-study sheet|score` (the human study of Table 5) lives beside: registered with this command
from biasatlas.cli import debias_study as _debias_study  # noqa: E402, F401
