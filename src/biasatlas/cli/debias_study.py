"""`biasatlas debias-study sheet` and `biasatlas debias-study score`: the human fluency / relevance study of
debiasing (paper 001, Table 5)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from biasatlas.cli.app import app
from biasatlas.cli.common import StudyOpt, fail, require_study, study_errors
from biasatlas.cli.outputs import check_output_file
from biasatlas.store import Store

study_app = typer.Typer(help="The human study of debiasing: a blinded sheet of QA answers before and after, to "
                             "rate for fluency and relevance by two annotators, and its score (counts, kappa).",
                        no_args_is_help=True)
app.add_typer(study_app, name="debias-study")



@study_app.command("sheet")
def sheet_cmd(
    study: StudyOpt,
    out: Annotated[Path, typer.Option("--out", help="The CSV to write (its rating guide goes to OUT.md; the folder "
                                      "is created if missing). An existing file is kept: see --force.")],
    n: Annotated[int, typer.Option("--n", min=1, help="Pairs to draw (all there are, if fewer).")] = 100,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the draw and of the A/B order.")] = 0,
    setting: Annotated[str | None, typer.Option("--setting", help="The setting whose QA answers to draw "
                                                "(needed when the study holds several).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing --out file (and its guide): its "
                                        "ratings are lost. Never a study's database or any SQLite file.")] = False,
) -> None:
    """Draw N QA questions answered before and after debiasing, each with its two answers as A and B in a random
    order, and empty fluency / relevance columns for two annotators. Which answer is A is kept in the study (the
    key), not in the sheet. An existing --out is never replaced without --force (a rated sheet is hours of work)."""
    from biasatlas.lock import study_writer
    from biasatlas.probes.debias import human_study as hs
    from biasatlas.table_files import guide_path

    check_output_file(out, replace=force)
    check_output_file(guide_path(out), replace=force)
    require_study(study, write=True, first="run `biasatlas debias` first")
    with study_errors(study), study_writer(study), Store(study) as store:
        try:
            comparison = hs.qa_comparison(store, setting)
            sheet, key = hs.draw(hs.qa_pairs(store, comparison), comparison, n, seed)
        except hs.StudySheetError as exc:
            fail(str(exc))
            raise
        new = hs.store_key(store, key)  # the key first: a sheet whose key is lost can never be scored
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        guide = hs.write_sheet(sheet, out)
    except OSError as exc:
        fail(f"cannot write {out}: {exc.strerror or exc}")
        raise
    Console(stderr=True).print(
        f"{len(sheet)} pairs of {comparison['setting']} (sheet {key['sheet_id']}{'' if new else ', drawn before'}) "
        f"written to {out}; two annotators fill fluency_1, relevance_1, fluency_2, relevance_2 (see {guide})",
        markup=False, soft_wrap=True)


@study_app.command("score")
def score_cmd(
    study: StudyOpt,
    sheets: Annotated[list[Path], typer.Argument(help="The rated sheet(s) of `debias-study sheet` (one per "
                                                 "annotator's copy, or one with both annotators' columns).")],
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout.")] = False,
) -> None:
    """Check the rated sheet(s) against the study's key, store the score in the study (the debias summary carries
    it) and print Table 5's counts (before, after, both good, both bad) per criterion and Cohen's kappa between
    the two annotators. Any problem: one line naming each, exit 2, nothing stored."""
    import hashlib

    import pandas as pd

    from biasatlas.lock import study_writer
    from biasatlas.probes.debias import human_study as hs
    from biasatlas.probes.debias.human_study_score import check_sheets, score

    files: list[tuple[str, pd.DataFrame]] = []
    for path in sheets:
        if not path.is_file():
            fail(f"no sheet at {path}")
        try:  # utf-8-sig: a spreadsheet saving as "CSV UTF-8" puts a byte-order mark first
            files.append((path.name, pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")))
        except (ValueError, UnicodeDecodeError) as exc:
            fail(f"{path} is not a CSV sheet of `debias-study sheet` ({' '.join(str(exc).split())})")
    require_study(study, write=True, first="run `biasatlas debias` first")
    with study_errors(study), study_writer(study), Store(study) as store:
        try:
            key, ratings = check_sheets(hs.keys(store), files)
        except hs.StudySheetError as exc:
            fail(str(exc))
            raise
        result = score(key, ratings)
        sources = [{"file": p.name, "sha256": hashlib.sha256(p.read_bytes()).hexdigest()} for p in sheets]
        result["run_id"] = hs.store_score(store, result, sources)
    if as_json:
        sys.stdout.write(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
        return
    print_score(result, Console())


def print_score(result: dict[str, Any], console: Any) -> None:
    """Table 5's layout: one row per criterion and annotator (and where both agree), the paper's row beside."""
    from biasatlas.probes.debias.human_study import COLUMNS_OF_TABLE, CRITERIA
    from biasatlas.probes.debias.human_study_score import kappa_text

    table = Table(title=f"Human study of {result['setting']} ({result['before_model']} -> {result['after_model']}, "
                        f"{result['n']} pairs): which answer is fluent / relevant")
    for column in ("criterion", "rated by", *COLUMNS_OF_TABLE, "Cohen's kappa"):
        table.add_column(column)
    for c in CRITERIA:
        part = result["criteria"][c]
        for who in ("annotator_1", "annotator_2", "agreed"):
            table.add_row(c, who.replace("_", " ") if who != "agreed" else f"both agree ({part['disagreed']} "
                          "disagree)", *(str(part[who][col]) for col in COLUMNS_OF_TABLE),
                          kappa_text(part["kappa"]) if who == "agreed" else "")
        paper = result["paper"][c]
        table.add_row(c, "Raj et al., 2024 (100 items)", *(str(paper[col]) for col in COLUMNS_OF_TABLE), "")
    console.print(table)
    console.print(f"Both criteria together: {kappa_text(result['kappa_pooled'])} "
                  f"(Raj et al., 2024: 0.76); stored in the "
                  f"study as run {result.get('run_id')}", markup=False)
