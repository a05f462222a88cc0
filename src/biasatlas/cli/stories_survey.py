"""`biasatlas stories-survey sheet` and `biasatlas stories-survey score`: the StereoTales human harm survey of a
study's associations (a rating sheet per rater, and its ratings stored as the study's human ratings)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from biasatlas.cli.app import app
from biasatlas.cli.common import StudyOpt, fail, require_study, study_errors
from biasatlas.cli.outputs import check_output_file
from biasatlas.store import Store

survey_app = typer.Typer(help="The human harm survey of the story associations: a sheet of associations for each "
                              "rater to rate (harm 1-5, realism), and its score into the study's human ratings.",
                         no_args_is_help=True)
app.add_typer(survey_app, name="stories-survey")



@survey_app.command("sheet")
def sheet_cmd(
    study: StudyOpt,
    out: Annotated[Path, typer.Option("--out", help="The CSV to write (its rating guide goes to OUT.md; the folder "
                                      "is created if missing). An existing file is kept: see --force.")],
    per_rater: Annotated[int, typer.Option("--per-rater", min=1, help="Associations per rater (the paper's 50; "
                                           "all there are, if fewer).")] = 50,
    raters: Annotated[int | None, typer.Option("--raters", min=1, help="Raters (default: enough for every "
                                               "association to have two).")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of who rates what and of each rater's order.")] = 0,
    lang: Annotated[list[str] | None, typer.Option("--lang", help="Rate the associations found in this language "
                                                   "(repeatable; default: those pooled over all languages).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing --out file (and its guide): its "
                                        "ratings are lost. Never a study's database or any SQLite file.")] = False,
) -> None:
    """Give each rater --per-rater of the study's significant associations in a seeded random order, with the
    group, the attribute value and the sentence raters see, and empty harm / realism columns. Every association
    gets a rater before any gets a second one. An existing --out is never replaced without --force."""
    from biasatlas.probes.stories import survey
    from biasatlas.table_files import guide_path

    check_output_file(out, replace=force)
    check_output_file(guide_path(out), replace=force)
    require_study(study, write=False, first="run or import stories first")
    with study_errors(study), Store(study) as store:
        try:
            items = survey.study_associations(store, lang)
            sheet, info = survey.draw(items, per_rater, raters, seed)
        except survey.SurveyError as exc:
            fail(str(exc))
            raise
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        guide = survey.write_sheet(sheet, out, info)
    except OSError as exc:
        fail(f"cannot write {out}: {exc.strerror or exc}")
        raise
    Console(stderr=True).print(f"sheet {info['sheet_id']} written to {out}: {survey.coverage_text(info)}. Raters "
                               f"fill harm and realism (see {guide})", markup=False, soft_wrap=True)


@survey_app.command("score")
def score_cmd(
    study: StudyOpt,
    sheets: Annotated[list[Path], typer.Argument(help="The filled sheet of `stories-survey sheet` (or the raters' "
                                                 "copies of it, each holding some raters' rows).")],
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout.")] = False,
) -> None:
    """Check the filled sheet against the study's associations and store its ratings as the study's human
    ratings, each rater on their own (the summary, the harm analyses and the report use them). Scoring a sheet
    again replaces its raters' earlier ratings. Any problem: one line naming each, exit 2, nothing stored."""
    import pandas as pd

    from biasatlas.lock import study_writer
    from biasatlas.probes.stories import harm as stories_harm
    from biasatlas.probes.stories import survey

    files: list[tuple[str, pd.DataFrame]] = []
    for path in sheets:
        if not path.is_file():
            fail(f"no sheet at {path}")
        try:  # utf-8-sig: a spreadsheet saving as "CSV UTF-8" puts a byte-order mark first
            files.append((path.name, pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")))
        except (ValueError, UnicodeDecodeError) as exc:
            fail(f"{path} is not a CSV sheet of `stories-survey sheet` ({' '.join(str(exc).split())})")
    require_study(study, write=True, first="run or import stories first")
    check_output_file(study / stories_harm.HUMAN_FILE, replace=True, option="the human ratings file")
    languages = sorted({lang.strip() for _, f in files if "language" in f for cell in f["language"]
                        if not str(cell).startswith(survey.POOLED) for lang in str(cell).split(",") if lang.strip()})
    with study_errors(study), study_writer(study), Store(study) as store:
        try:
            known = set(survey.study_associations(store)["association"])
            if languages:
                known |= set(survey.study_associations(store, languages)["association"])
            ratings, result = survey.check_sheet(files, known)
        except survey.SurveyError as exc:
            fail(str(exc))
            raise
        result["stored_in_study"] = survey.store_ratings(study, ratings)
    if as_json:
        sys.stdout.write(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
        return
    skipped = result["skipped_raters"]
    Console().print(f"sheet {result['sheet_id']}: {result['ratings']} ratings of {result['associations']} "
                    f"associations by {result['raters']} raters stored ({result['stored_in_study']} human ratings in "
                    "the study)" + (f"; left out, nothing rated: {', '.join(skipped)}" if skipped else ""),
                    markup=False, soft_wrap=True)
