"""`biasatlas export`: the study's answers and statistics as tidy Parquet or CSV tables with schema.md."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console
from rich.text import Text

from biasatlas.cli.app import app
from biasatlas.cli.common import (
    AlphaOpt,
    CorrectionOpt,
    StudyOpt,
    check_analysis_options,
    console,
    fail,
    require_study,
    study_errors,
)

# The export package (pandas, pyarrow) is imported inside the command: every CLI start imports this module.


@app.command("export")
def export(
    study: StudyOpt,
    to: Annotated[Path, typer.Option("--to", help="Directory to write the tables into (created if missing).")],
    fmt: Annotated[str | None, typer.Option("--format", help="parquet or csv (default: parquet where pyarrow is "
                                            "installed, else csv).")] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Write into a non-empty directory (files of the same names are replaced).")
    ] = False,
    alpha: AlphaOpt = None,
    correction: CorrectionOpt = None,
) -> None:
    """Export answers (one row per model x prompt x sample) and statistics (one row per test) per probe,
    with schema.md describing every column; readable by pandas and Hugging Face datasets."""
    from biasatlas.export import FORMATS, ExportError, check_target, export_study

    if fmt is None:
        fmt = default_format()
    if fmt not in FORMATS:
        fail(f"--format {fmt!r}: valid: {', '.join(FORMATS)}")
    analysis = check_analysis_options(alpha, correction)
    require_study(study, write=False, first="run a probe first")
    try:
        check_target(to, force)  # before any analysis runs
        with study_errors(study):  # a newer schema, a damaged database: one line
            result = export_study(study, to, fmt, force=force, analysis=analysis)
    except ExportError as exc:
        _fail_plain(str(exc))
    except OSError as exc:
        _fail_plain(f"cannot write the export to {to}: {exc.strerror or exc}")
    out = Console(stderr=True, soft_wrap=True)
    for name, rows in result.rows.items():
        out.print(f"{rows:>8} rows  {to / name}", markup=False)
    out.print(f"schema: {to / 'schema.md'}", markup=False)


def default_format() -> str:
    """Parquet where pyarrow is installed; else CSV, and one line says so (a core install has no pyarrow)."""
    from biasatlas.export import has_pyarrow

    if has_pyarrow():
        return "parquet"
    Console(stderr=True, soft_wrap=True).print(
        "note: pyarrow is not installed: writing CSV (for Parquet: pip install 'biasatlas[parquet]', "
        "then --format parquet)", markup=False)
    return "csv"


def _fail_plain(message: str) -> NoReturn:
    """As ``fail``, with the message printed as is: it may name an extra (``biasatlas[parquet]``),
    which console markup would swallow."""
    console.print(Text.assemble(("error:", "bold red"), " ", message))
    raise typer.Exit(2)
