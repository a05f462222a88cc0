"""Entry point: `biasatlas run PROBE ...`, `summary`, `report`, `models`."""

from __future__ import annotations

import importlib
import os
import sqlite3
import sys
import warnings
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.text import Text

from biasatlas.cli.app import app
from biasatlas.cli.common import (
    AlphaOpt,
    CorrectionOpt,
    check_analysis_options,
    database_error_line,
    fail,
    require_study,
    show_warning,
    study_errors,
)
from biasatlas.cli.headlines import print_headlines, title_line
from biasatlas.cli.outputs import check_output_file
from biasatlas.store import DB_NAME, Store, StoreError

# Command modules attach their commands to the apps in biasatlas.cli.app when imported.
COMMAND_MODULES = (
    "biasatlas.cli.run_contact",
    "biasatlas.cli.run_samaritan",
    "biasatlas.cli.run_stories",
    "biasatlas.cli.run_leakage",
    "biasatlas.cli.debias",
    "biasatlas.cli.power",
    "biasatlas.cli.export",
    "biasatlas.cli.audit",
    "biasatlas.cli.batch",
    "biasatlas.cli.readers",
    "biasatlas.cli.stories_survey",
    "biasatlas.cli.languages",
    "biasatlas.cli.validate",
)
for _module in COMMAND_MODULES:
    try:
        importlib.import_module(_module)
    except ModuleNotFoundError as _exc:  # a command still being written is simply absent
        if _exc.name != _module:
            raise


def _open_study(study: Path) -> Store:
    require_study(study, write=False, first="run a probe first")
    try:
        return Store(study)
    except sqlite3.DatabaseError as exc:  # damaged pages met while opening it read-only
        fail(database_error_line(study / DB_NAME, exc))
        raise
    except Exception as exc:  # a newer schema, a read-only file the store cannot open: one line
        fail(f"cannot open study {study}: {exc}")
        raise


def _version(value: bool) -> None:
    if value:
        from biasatlas import __version__

        sys.stdout.write(f"biasatlas {__version__}\n")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Audit large language models for social bias and stereotypes, across languages."""
    warnings.showwarning = show_warning  # biasatlas's own warnings as one line each


@app.command()
def summary(
    study: Annotated[Path, typer.Option("--study", "-s", help="Study directory.")],
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout.")] = False,
    alpha: AlphaOpt = None,
    correction: CorrectionOpt = None,
) -> None:
    """Summarise every probe the study holds: tables with n, counts, % and intervals, tests."""
    analysis = check_analysis_options(alpha, correction)
    with study_errors(study):  # SQLite meeting a damaged page mid-way: one line
        _summary(_open_study(study), as_json, analysis)


def _summary(store: Store, as_json: bool, analysis: dict[str, Any]) -> None:
    from biasatlas import validity
    from biasatlas.probes import load_probe
    from biasatlas.report.build import study_probes
    from biasatlas.report.reading import add_reading, print_reading

    result: dict[str, Any] = {}
    for name in study_probes(store):
        probe = load_probe(name)
        data = probe.summarise(store, **analysis)
        if data or name != "debias":  # debias is empty when the study holds no comparison
            table = probe.validity(store) if name != "debias" else None
            if table is not None and not table.empty:
                data["validity"] = validity.records(table)
                data["validity_warnings"] = validity.warnings(table, name)
            add_reading(store, name, data)  # issue 27: who read the answers, rules vs judge agreement
            if data and "statistics" not in data:  # stories, leakage, debias: the export's rows, the same
                from biasatlas.export.statistics import statistics_rows

                data["statistics"] = statistics_rows(name, data, analysis.get("alpha"))
            result[name] = data
    from biasatlas.cli.pending import unfinished_line, unfinished_runs

    unfinished = unfinished_runs(store)
    if as_json:
        from biasatlas.cli.json_out import write_json

        write_json({**result, "unfinished_runs": unfinished})
        return
    from biasatlas.terminal import STUDY_FACTORS, WrappingConsole, study_factors

    console = WrappingConsole()
    constant = study_factors(r for data in result.values() for r in data.get("statistics") or [])
    console.print(Text(title_line(store.dir, constant), style="bold"))
    for run in unfinished:
        # one line, unwrapped whatever the width: the resume command at its end is copied whole
        Console.print(console, Text.assemble(("unfinished", "yellow"), ": ", unfinished_line(run)), soft_wrap=True)
    if not result:
        console.print("The study holds no answers yet.")
        return
    if not print_headlines(result, console, constant):
        console.print("No headline test yet: the tables below hold what the study has.")
    token = STUDY_FACTORS.set(constant)  # the tables name only the factors that vary in the study
    try:
        for name, data in result.items():
            probe = load_probe(name)
            console.rule(f"[bold]{probe.title}")
            probe.print_summary(data, console)
            _print_validity(data.get("validity") or [], data.get("validity_warnings") or [], console)
            print_reading(probe.title, data, console)
    finally:
        STUDY_FACTORS.reset(token)


def _print_validity(rows: list[dict[str, Any]], warnings: list[str], console: Console) -> None:
    from biasatlas.terminal import FitTable

    if not rows:
        return
    columns = [c for c in ("model", "language", "answers", "readable", "readable_pct", "refusals", "hedges",
                           "other_language", "cut_at_limit", "cut_unread", "failed", "pending") if c in rows[0]]
    console.print(FitTable("Validity: can the answers be read? (per model x language)",
                           [c.replace("_pct", " %").replace("_", " ") for c in columns],
                           [["–" if row[c] is None else str(row[c]) for c in columns] for row in rows],
                           text=frozenset({"model", "language"})))
    for line in warnings:
        console.print(f"[bold yellow]warning[/]: {line}")


@app.command()
def report(
    study: Annotated[Path, typer.Option("--study", "-s", help="Study directory.")],
    out: Annotated[Path | None, typer.Option("--out", help="Report file (default: STUDY/report.html).")] = None,
    files: Annotated[bool, typer.Option("--files/--no-files", help="Also write every table (CSV, LaTeX) and "
                                        "figure (SVG, PDF) to report_files/ next to the report.")] = True,
) -> None:
    """Write a self-contained HTML report: overview, every probe's tables and figures, the answers, methods."""
    from biasatlas.report.build import build_report

    store = _open_study(study)
    target = out if out is not None else study / "report.html"
    if target.exists() and not target.is_file():
        fail(f"{target} exists and is not a file; pass --out FILE")
    check_output_file(target, replace=True)  # its own report again, yes; a study's database, never
    try:
        with study_errors(study):
            path = build_report(store, study, out, publish=files)
    except OSError as exc:
        fail(f"cannot write the report to {target}: {exc.strerror or exc}; pass --out FILE")
        raise
    Console(stderr=True).print(f"report written: {path}" + (f" (tables and figures in {path.parent / 'report_files'})"
                                                             if files else ""))


@app.command()
def models() -> None:
    """List the backends and model aliases."""
    from biasatlas.backends.registry import ALIASES, BACKENDS

    console = Console()
    console.print("[bold]Aliases[/]")
    for name, text in ALIASES.items():
        console.print(f"  {name:10s} {text}")
    console.print("[bold]Backends[/]")
    for name, text in BACKENDS.items():
        console.print(f"  {name:10s} {text}")


def main() -> None:  # pragma: no cover - console script
    """Console script: option errors are one line (option, value, valid choices) and exit 2; SIGINT and
    SIGTERM at any moment one line (what is stored, the resume command) and exit 130."""
    from biasatlas.cli import interrupts

    interrupts.install_handlers()  # (done already by the console script; here for `python -m` and tests)
    try:
        code = _main()
    except KeyboardInterrupt:  # between a command's own handling and the exit
        code = interrupts.EXIT_INTERRUPTED
    interrupts.ignore_signals()
    if code == interrupts.EXIT_INTERRUPTED:  # typer turns a Ctrl-C outside a run into exit 130 without a word
        from biasatlas.cli.common import resume_command

        interrupts.tell_interrupted(resume_command())
    sys.exit(code)


def _main() -> int:
    """Run the app; its exit code."""
    exit_types, abort_types, usage_types, click_types = _click_exceptions()
    bad = not_utf8(sys.argv[1:])
    if bad is not None:  # before anything runs: a study, the stored command and the report are UTF-8 text
        sys.stderr.write(f"error: {bad}\n")
        return 2
    try:
        code = app(standalone_mode=False)
        return code if isinstance(code, int) else 0
    except exit_types as exc:
        return int(exc.exit_code)
    except abort_types:
        return 130
    except usage_types as exc:
        sys.stderr.write(f"error: {exc.format_message()}\n")
        return 2
    except click_types as exc:
        sys.stderr.write(f"error: {exc.format_message()}\n")
        return int(exc.exit_code)
    except StoreError as exc:  # a command without its own handling: a damaged study, a newer schema
        sys.stderr.write(f"error: {exc}\n")
        return 2
    except sqlite3.DatabaseError as exc:  # the same, met by SQLite mid-way
        sys.stderr.write(f"error: the study database cannot be used: {' '.join(str(exc).split())}\n")
        return 2


def not_utf8(args: list[str]) -> str | None:
    """An error line naming the first argument that is not UTF-8 (bytes the shell passed through, which
    Python keeps as surrogates), with its bytes escaped; None when every argument is text."""
    for index, arg in enumerate(args):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            name, sep, value = arg.partition("=") if arg.startswith("--") else ("", "", arg)
            if not sep:
                before = args[index - 1] if index else ""
                name, value = (before if before.startswith("-") else f"argument {index + 1}"), arg
            if not name.isprintable() or not name.isascii():
                name = f"argument {index + 1}"
            return (f"{name} {os.fsencode(value)!r}: not valid UTF-8; biasatlas keeps names and paths as UTF-8 "
                    "text: rename it, or give it in UTF-8")
    return None


def _click_exceptions() -> tuple[tuple[type[Any], ...], ...]:
    """Exit, Abort, UsageError and ClickException of click and of typer's bundled copy (typer >= 0.16
    raises its own ``typer._click`` classes, which click's ``except`` clauses do not catch)."""
    import click

    modules: list[Any] = [click.exceptions]
    try:
        from typer._click import exceptions as bundled

        modules.append(bundled)
    except ImportError:  # an older typer uses click itself
        pass
    names = ("Exit", "Abort", "UsageError", "ClickException")
    return tuple(tuple(getattr(m, n) for m in modules if hasattr(m, n)) for n in names)
