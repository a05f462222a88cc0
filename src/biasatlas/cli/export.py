"""`biasatlas export`: the study's answers and statistics as tidy Parquet or CSV tables with schema.md."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from biasatlas.cli.app import app
from biasatlas.cli.common import AlphaOpt, CorrectionOpt, StudyOpt, check_analysis_options, check_study, fail

# The export package (pandas, pyarrow) is imported inside the command: every CLI start imports this module.


@app.command("export")
def export(
    study: StudyOpt,
    to: Annotated[Path, typer.Option("--to", help="Directory to write the tables into (created if missing).")],
    fmt: Annotated[str, typer.Option("--format", help="parquet or csv.")] = "parquet",
    force: Annotated[
        bool, typer.Option("--force", help="Write into a non-empty directory (files of the same names are replaced).")
    ] = False,
    alpha: AlphaOpt = None,
    correction: CorrectionOpt = None,
) -> None:
    """Export answers (one row per model x prompt x sample) and statistics (one row per test) per probe,
    with schema.md describing every column; readable by pandas and Hugging Face datasets."""
    from biasatlas.export import FORMATS, ExportError, check_target, export_study
    from biasatlas.store import DB_NAME

    if fmt not in FORMATS:
        fail(f"--format {fmt!r}: valid: {', '.join(FORMATS)}")
    analysis = check_analysis_options(alpha, correction)
    check_study(study, write=False)
    if not (study / DB_NAME).exists():
        fail(f"no study at {study} (expected {study / DB_NAME}); run a probe first")
    try:
        check_target(to, force)  # before any analysis runs
        result = export_study(study, to, fmt, force=force, analysis=analysis)
    except ExportError as exc:
        fail(str(exc))
        raise
    except OSError as exc:
        fail(f"cannot write the export to {to}: {exc.strerror or exc}")
        raise
    console = Console(stderr=True, soft_wrap=True)
    for name, rows in result.rows.items():
        console.print(f"{rows:>8} rows  {to / name}")
    console.print(f"schema: {to / 'schema.md'}")
