"""`biasatlas languages`: the coverage matrix (probe x language, review status of each pack),
`biasatlas languages check DIR`, which validates a language pack folder, and `biasatlas languages review`,
which draws a sheet of a pack's prompts for a native speaker (--out) and records a filled one (--apply)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from biasatlas.cli.app import app

languages_app = typer.Typer(help="Language packs: the coverage matrix, `check DIR` to validate a pack, and "
                            "`review` to draw a sheet for a native speaker and record the filled sheet.",
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
    from biasatlas.probes.coverage import PROBES, coverage

    rows = coverage()
    if as_json:
        typer.echo(json.dumps(rows, ensure_ascii=False, indent=1))
        return
    table = Table(title="Coverage: probe x language")
    for col in ("language", *PROBES, "pack", "descriptor forms"):
        table.add_column(col)
    for row in rows:
        table.add_row(f"{row['language']} ({escape(row['name'])})", *("yes" if row[p] else "-" for p in PROBES),
                      escape(row["status"]), escape(row["forms_status"]))
    Console().print(table)


@languages_app.command("check")
def check_cmd(
    folder: Annotated[Path, typer.Argument(help="A language pack folder (with pack.yaml).")],
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout.")] = False,
) -> None:
    """Validate a pack: files, slots, descriptor forms, options, Samaritan groups, readers' tables."""
    from biasatlas.pack_review.check import check_pack

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


@languages_app.command("review")
def review_cmd(
    lang: Annotated[str | None, typer.Option("--lang", help="The pack's language code (fr, es, ...).")] = None,
    n: Annotated[int, typer.Option("--n", help="Prompts on the sheet (spread over probes, axes, scenarios).")] = 200,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the draw.")] = 0,
    out: Annotated[Path | None, typer.Option("--out", help="The sheet to write (CSV), a guide next to it.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing --out.")] = False,
    apply: Annotated[Path | None, typer.Option("--apply", help="A filled sheet to record in the pack.")] = None,
    reviewer: Annotated[str | None, typer.Option("--reviewer", help="Who read the sheet (with --apply).")] = None,
    date: Annotated[str | None, typer.Option("--date", help="When, YYYY-MM-DD (with --apply; default today).")] = None,
    pack_dir: Annotated[Path | None, typer.Option("--pack", help="A pack folder instead of a shipped pack.")] = None,
) -> None:
    """Native-speaker review: draw a sheet of rendered prompts (--out), or record a filled one (--apply)."""
    from biasatlas.cli.common import fail
    from biasatlas.cli.outputs import check_output_file
    from biasatlas.datafiles import DataFileError
    from biasatlas.languages import LanguagePackError, pack, read_pack
    from biasatlas.pack_review.review_sample import PackPrompts, ReviewError

    if (out is None) == (apply is None):
        fail("give --out SHEET (draw a sheet) or --apply SHEET (record a filled one)")
    try:
        if pack_dir is not None:
            chosen = read_pack(pack_dir)
            if lang is not None and lang != chosen.code:
                fail(f"--lang {lang} but the pack in {pack_dir} is {chosen.code}")
        elif lang is not None:
            chosen = pack(lang)
        elif apply is not None:
            chosen = pack(_sheet_language(apply))
        else:
            fail("give --lang (a shipped pack) or --pack DIR")
    except (LanguagePackError, DataFileError, ReviewError) as exc:
        fail(str(exc))
    from biasatlas.languages.reviews import review_status
    from biasatlas.pack_review import review

    pack_option = f" --pack {pack_dir}" if pack_dir is not None else ""
    try:
        if out is not None:
            if reviewer is not None or date is not None:
                fail("--reviewer and --date go with --apply")
            check_output_file(out, replace=force)
            rows = review.sheet_rows(PackPrompts(chosen), n, seed)
            guide = review.write_sheet(rows, out, pack=chosen, seed=seed, pack_option=pack_option)
            typer.echo(f"wrote {out} ({len(rows)} prompts of the {chosen.code} pack, seed {seed}) and {guide}")
            return
        assert apply is not None
        if reviewer is None:
            fail("--apply needs --reviewer NAME")
        record = review.review_record(apply, chosen, str(reviewer), date)
        path = review.append_record(chosen, record)
    except (ReviewError, LanguagePackError, DataFileError, OSError) as exc:
        fail(str(exc))
    counts = ", ".join(f"{v} {k}" for k, v in record["verdicts"].items())
    typer.echo(f"recorded in {path}: {record['reviewer']}, {record['date']}, {record['prompts_reviewed']} prompts "
               f"({counts}), {len(record['corrections'])} corrections or comments")
    typer.echo(f"{chosen.code}: {review_status(read_pack(chosen.path))}")


def _sheet_language(sheet: Path) -> str:
    """The one language of a sheet's rows (an --apply without --lang or --pack)."""
    from biasatlas.pack_review.review import read_sheet
    from biasatlas.pack_review.review_sample import ReviewError

    rows, _ = read_sheet(sheet)
    found = sorted({(r.get("language") or "").strip() for r in rows} - {""})
    if len(found) != 1:
        raise ReviewError(f"{sheet}: rows of {len(found)} languages ({', '.join(found) or 'none'}); give --lang")
    return found[0]
