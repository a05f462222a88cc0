"""`biasatlas audit FILE --study DIR`: many models x probes x languages from one file, one study, one report."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape as rich_escape

from biasatlas.cli.app import app
from biasatlas.cli.common import (
    EXIT_STOPPED,
    StudyOpt,
    check_study,
    console,
    default_progress,
    fail,
    finish,
    interrupted,
    print_totals,
    resume_command,
)

if TYPE_CHECKING:
    from biasatlas.audit import CellPlan, Plan
    from biasatlas.audit.models import ModelInfo


@app.command("audit")
def audit(
    file: Annotated[Path, typer.Argument(
        help="Audit file (YAML, or TOML for a .toml file; at most 1 MiB, nested at most 100 deep, 100,000 values "
             "with YAML aliases expanded); see docs/audit.md.")],
    study: StudyOpt,
    plan_only: Annotated[
        bool,
        typer.Option("--plan-only", help="Per model x probe x language: prompts, already cached, to ask, "
                     "estimated tokens, cost and time; ask nothing, write nothing."),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="With --plan-only: the plan as JSON on stdout.")] = False,
    progress: Annotated[
        bool | None, typer.Option("--progress/--no-progress", help="Progress: bars on a terminal, else a line every "
                                  "10 s for the run and one for the whole audit (default: on).")
    ] = None,
) -> None:
    """Run an audit file: every model x probe x language a run in the one study (resumable), then the report.

    Run it again to resume: only answers the study does not hold are asked. Exit codes as for
    `biasatlas run`: 0 all answered, 3 some failed, 4 stopped, 130 interrupted, 2 bad input.
    """
    from biasatlas.audit import AuditError, check_models, plan_audit
    from biasatlas.probes.base import CLI_COMMAND

    CLI_COMMAND.set(resume_command())
    check_study(study, write=True)  # --plan-only too: it fails on what the run would fail on
    from biasatlas.held_warnings import hold_warnings, release_warnings

    try:
        with hold_warnings() as held:  # the plan's warnings after the models pass: an error stays one line
            plan = plan_audit(file)
            infos, notes = check_models(plan.audit, strict=True)
            from biasatlas.reading_step import check_judge

            check_judge(plan.audit)  # a judge that cannot be used is found before anything is asked
    except AuditError as exc:
        fail(str(exc))
        raise
    release_warnings(held)
    if plan_only:
        _plan_only(plan, study, as_json, infos, notes)
        return
    _run(plan, study, progress)


def _run(plan: Plan, study: Path, progress: bool | None) -> None:
    from biasatlas.audit import run_cells
    from biasatlas.backends.base import BackendError
    from biasatlas.lock import StudyLockedError
    from biasatlas.probes.base import ProbeConfigError
    from biasatlas.store import StoreError

    progress = default_progress(progress)
    for note in [*plan.notes, *plan.audit.notes]:
        console.print(f"[yellow]note[/]: {rich_escape(note)}")
    seeds = len(plan.audit.seeds)
    count = len(plan.cells)

    def on_cell(index: int, cell: Any) -> None:
        console.rule(f"[bold]{index + 1}/{count}[/] {cell.label(seeds)}")

    try:
        planned = [len(prompts) * cell.probe.samples(cell.config) for cell, prompts in zip(plan.cells, plan.prompts,
                                                                                          strict=True)]
        result = run_cells(plan.cells, study, audit_file=plan.audit.path, progress=progress, on_cell=on_cell,
                           on_totals=print_totals, planned=planned)
        from biasatlas.reading_step import audit_reading

        result.totals.extend(audit_reading(plan.audit, study, progress=progress, on_totals=print_totals))
    except (ProbeConfigError, BackendError, StoreError, StudyLockedError) as exc:
        fail(str(exc))
        raise
    except KeyboardInterrupt:
        interrupted(study)
        raise
    for name, reason in result.stopped.items():
        console.print(f"[bold red]stopped[/] {rich_escape(name)}: {rich_escape(reason)}; its cells are skipped, "
                      "the audit goes on")
    for label in result.skipped:
        console.print(f"[yellow]skipped[/] {rich_escape(label)}: its model stopped earlier")
    written = _report(study)
    _print_ending(study, written)
    if result.stopped and not any(t.status == "stopped" for t in result.totals):
        # no run recorded the stop (the model could not be opened): finish() would not see it
        console.print(f"[bold red]stopped[/]: {rich_escape(', '.join(result.stopped))} could not be used; "
                      f"Resume: {rich_escape(resume_command())}")
        raise typer.Exit(EXIT_STOPPED)
    finish(result.totals)
    if written is None:
        raise typer.Exit(1)


def _report(study: Path) -> Path | None:
    """Write the study's report; a failure is one line (the answers are stored all the same), not a traceback."""
    from biasatlas.report.build import build_report
    from biasatlas.store import Store

    try:
        with Store(study) as store:
            path = build_report(store, study)
    except OSError as exc:
        console.print(f"[bold red]report not written[/] in {study}: {exc.strerror or exc}; "
                      "run `biasatlas report --out FILE`")
        return None
    except Exception as exc:  # a probe's report failed: the runs are stored, say so and go on to the exit code
        console.print(f"[bold red]report not written[/]: {type(exc).__name__}: {exc}; every answer is stored in "
                      f"{study}; run `biasatlas report --study {study}` to retry")
        return None
    console.print(f"report written: {path}", markup=False)
    return Path(path)


def _print_ending(study: Path, written: Path | None) -> None:
    """The audit's last lines: every probe's headline (as ``summary`` prints them first), then what to open."""
    from biasatlas.cli.headlines import next_steps, print_headlines
    from biasatlas.probes import load_probe
    from biasatlas.report.build import study_probes
    from biasatlas.store import Store
    from biasatlas.terminal import WrappingConsole, study_factors

    out = WrappingConsole(stderr=True)
    try:
        with Store(study) as store:
            result = {name: load_probe(name).summarise(store) for name in study_probes(store) if name != "debias"}
    except Exception as exc:  # the answers are stored; the headlines are one summary away
        out.print(f"headlines not shown ({type(exc).__name__}: {exc}); run `biasatlas summary --study {study}`",
                  markup=False)
        result = {}
    constant = study_factors(r for data in result.values() for r in data.get("statistics") or [])
    if result:
        out.rule("[bold]Headlines")
        print_headlines(result, out, constant)
    for line in next_steps(study, written):  # one line each, as long as the path: a command to copy
        console.print(line, markup=False, highlight=False)


def _plan_only(plan: Plan, study: Path, as_json: bool, infos: dict[str, ModelInfo], notes: list[str]) -> None:
    from biasatlas.audit import estimate_cells, plan_totals
    from biasatlas.audit.estimate import power_notes

    rows = estimate_cells(plan.cells, plan.prompts, infos, study)
    totals = plan_totals(rows)
    notes = [*plan.notes, *notes]
    unpriced = [model for model in dict.fromkeys(r.model for r in rows) if any(
        r.cost_usd is None for r in rows if r.model == model)]
    if unpriced:  # the total of the priced models (cost_usd_priced), and which models it leaves out
        totals["unpriced_models"] = unpriced
        notes.append(f"cost: no price given for {', '.join(unpriced)} (http settings price_prompt, price_completion)"
                     + ("; the total is of the other models" if "cost_usd_priced" in totals else ""))
    tokenizers = {r.model: r.tokens_by for r in rows}
    notes.extend(f"{model}: tokens counted with {by}" for model, by in tokenizers.items())
    if any(r.seconds is None for r in rows):
        notes.append("time: unknown where the study has no finished run of that model in that mode")
    notes.extend(power_notes(rows))  # the MDE per test cell (issue 26): biasatlas.audit.estimate
    if as_json:
        out = {"file": str(plan.audit.path), "study": str(study), "cells": [r.as_dict() for r in rows],
               "totals": totals, "notes": notes}
        sys.stdout.write(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
        return
    _print_table(rows, totals, len(plan.audit.seeds) > 1, notes)


def _fmt(value: Any, missing: str = "?") -> str:
    if value is None:
        return missing
    if isinstance(value, float):
        return f"{value:,.4f}" if value < 1 else f"{value:,.2f}"
    return f"{value:,}"


def _cost_total(totals: dict[str, Any]) -> str:
    """The cost total; where some models have no price, the priced models' total, marked (a note names the rest)."""
    if totals["cost_usd"] is None and totals.get("cost_usd_priced") is not None:
        return f"{_fmt(totals['cost_usd_priced'])} + unpriced"
    return _fmt(totals["cost_usd"], "–")


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def _print_table(rows: list[CellPlan], totals: dict[str, Any], seeds: bool, notes: list[str]) -> None:
    from rich.table import Table
    from rich.text import Text

    table = Table(title="Audit plan (? = unknown, – = no price given)")
    columns = ["model", "probe", "language", *(["seed"] if seeds else []), "mode", "prompts", "requests",
               "cached", "to ask", "prompt tokens", "max completion tokens", "cost USD", "time"]
    for column in columns:
        table.add_column(column, justify="left" if column in ("model", "probe", "language", "mode") else "right")
    for r in rows:
        table.add_row(r.model, r.probe, r.language, *([str(r.seed)] if seeds else []), r.mode, _fmt(r.prompts),
                      _fmt(r.requests), _fmt(r.cached), _fmt(r.to_ask), _fmt(r.prompt_tokens),
                      _fmt(r.completion_tokens), _fmt(r.cost_usd, "–"), _duration(r.seconds))
    table.add_row("total", "", "", *([""] if seeds else []), "", _fmt(totals["prompts"]), _fmt(totals["requests"]),
                  _fmt(totals["cached"]), _fmt(totals["to_ask"]), _fmt(totals["prompt_tokens"]),
                  _fmt(totals["completion_tokens"]), _cost_total(totals), _duration(totals["seconds"]),
                  style="bold")
    from biasatlas.cli.plan_notes import terminal_notes
    from biasatlas.terminal import WrappingConsole

    warnings, others, hidden = terminal_notes(rows, notes)
    out = WrappingConsole()
    for line in warnings:  # what makes the plan useless as it stands, before the table and the other notes
        out.print(Text.assemble(("warning", "bold yellow"), f": {line}"))
    out.print(table)
    for note in others:
        out.print(Text(f"note: {note}"))
    if hidden:
        out.print(Text(f"{hidden} more notes (the smallest detectable effect of every test cell, the power "
                       "assumptions): --plan-only --json"))
