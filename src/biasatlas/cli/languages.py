"""`biasatlas languages`: the coverage matrix (probe x language, provenance status of each pack) and
`biasatlas languages check DIR`, which validates a language pack folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from biasatlas.cli.app import app

languages_app = typer.Typer(help="Language packs: the coverage matrix, and `check DIR` to validate a pack.",
                            invoke_without_command=True)
app.add_typer(languages_app, name="languages")


@languages_app.callback()
def matrix_cmd(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout.")] = False,
) -> None:
    """Print which probe speaks which language, and how each language pack was written."""
    if ctx.invoked_subcommand is not None:
        return
    from biasatlas.languages.coverage import PROBES, coverage

    rows = coverage()
    if as_json:
        typer.echo(json.dumps(rows, ensure_ascii=False, indent=1))
        return
    table = Table(title="Coverage: probe x language")
    for col in ("language", *PROBES, "pack"):
        table.add_column(col)
    for row in rows:
        table.add_row(f"{row['language']} ({escape(row['name'])})", *("yes" if row[p] else "-" for p in PROBES),
                      escape(row["status"]))
    Console().print(table)


@languages_app.command("check")
def check_cmd(
    folder: Annotated[Path, typer.Argument(help="A language pack folder (with pack.yaml).")],
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout.")] = False,
) -> None:
    """Validate a pack: files, slots, descriptor forms, options, Samaritan groups, readers' tables."""
    from biasatlas.languages.check import check_pack

    report = check_pack(folder)
    figures = {k: v for k, v in report.figures.items() if k != "reader"}
    reader = {k: v for k, v in report.figures.get("reader", {}).items() if not k.endswith("_misread")}
    if as_json:
        typer.echo(json.dumps({"ok": report.ok, "problems": report.problems, "figures": figures,
                               "reader": reader}, ensure_ascii=False, indent=1))
    else:
        console = Console()
        name = report.pack.code if report.pack else str(folder)
        console.print(f"pack {escape(name)}: {'valid' if report.ok else 'NOT valid'}"
                      + (f" ({escape(report.pack.status)})" if report.pack else ""))
        for key, value in {**figures, **reader}.items():
            console.print(f"  {key}: {escape(str(value))}")
        for problem in report.problems:
            console.print(f"  problem: {escape(problem)}")
    if not report.ok:
        raise typer.Exit(1)
