"""`biasatlas readers sample` and `biasatlas readers score`: the human reading audit of a study."""

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

readers_app = typer.Typer(help="The human reading audit: draw answers to label by hand, score the labels.",
                          no_args_is_help=True)
app.add_typer(readers_app, name="readers")


def _study(study: Path, *, write: bool) -> Store:
    require_study(study, write=write, first="run a probe first")
    return Store(study)


@readers_app.command("sample")
def sample_cmd(
    study: StudyOpt,
    out: Annotated[Path, typer.Option("--out", help="The CSV to write (its labelling guide goes to OUT.md; the "
                                      "folder is created if missing). An existing file is kept: see --force.")],
    n: Annotated[int, typer.Option("--n", min=1, help="Answers to draw (all there are, if fewer).")] = 200,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the draw.")] = 0,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing --out file (and its guide): its "
                                        "labels are lost. Never a study's database or any SQLite file.")] = False,
) -> None:
    """Draw N answers stratified by probe x language x reader label (unreadable included), with the question,
    the answer and an empty human_label column to fill in. An existing --out is never replaced without --force
    (a filled labels file is hours of work)."""
    from biasatlas.reading_audit import sample, write_sample
    from biasatlas.table_files import guide_path

    check_output_file(out, replace=force)
    check_output_file(guide_path(out), replace=force)
    with study_errors(study):
        store = _study(study, write=False)
        frame = sample(store, n, seed)
    if frame.empty:
        fail("the study holds no answer of free text to check (contact or samaritan, generate mode)")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        guide = write_sample(frame, out)
    except OSError as exc:
        fail(f"cannot write {out}: {exc.strerror or exc}")
        raise
    strata = frame.groupby(["probe", "language", "reader_label"]).size()
    Console(stderr=True).print(f"{len(frame)} answers from {len(strata)} probe x language x label cells written "
                               f"to {out}; fill human_label (see {guide})", markup=False, soft_wrap=True)


@readers_app.command("score")
def score_cmd(
    study: StudyOpt,
    labels: Annotated[Path, typer.Argument(help="The CSV of `readers sample` with human_label filled.")],
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout.")] = False,
) -> None:
    """Check the labels against the study, store the score in it, and print accuracy per label (Wilson 95% CI),
    Cohen's kappa, the confusion table and whether reading errors differ between groups."""
    import pandas as pd

    from biasatlas.lock import study_writer
    from biasatlas.readers.scoring import score
    from biasatlas.reading_audit import AuditError, check_labels, file_digest, store_score

    if not labels.is_file():
        fail(f"no labels file at {labels}")
    try:
        # the columns the score reads: the question and answer texts are most of a large file's bytes
        frame = pd.read_csv(labels, dtype=str, keep_default_na=False, encoding="utf-8", usecols=_score_columns)
    except (ValueError, UnicodeDecodeError) as exc:
        fail(f"{labels} is not a CSV file of `readers sample` ({' '.join(str(exc).split())})")
        raise
    if "sample_index" in frame.columns:
        frame["sample_index"] = pd.to_numeric(frame["sample_index"], errors="coerce").fillna(-1).astype(int)
    require_study(study, write=True, first="run a probe first")
    with study_errors(study), study_writer(study), Store(study) as store:
        try:
            result = score(check_labels(store, frame))
            if result["overall"]["n"] == 0:  # every answer labelled two ways: nothing left to score
                raise AuditError("no answer left to score: every answer has conflicting labels "
                                 f"({len(result['labels_file']['conflicts'])} answers)")
        except AuditError as exc:
            fail(f"{labels}: {exc}")
            raise
        run_id = store_score(store, result, labels.name, file_digest(labels))
    result["run_id"] = run_id
    _print_file(result["labels_file"])
    if as_json:
        sys.stdout.write(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
        return
    _print(result, Console())


def _score_columns(name: str) -> bool:
    """The labels file's columns that ``readers score`` reads."""
    from biasatlas.reading_audit import SCORED_COLUMNS

    return name in SCORED_COLUMNS


SHOWN_CONFLICTS = 10  # answers labelled two ways named one by one (--json lists them all)


def _print_file(held: dict[str, Any]) -> None:
    """What the labels file held beyond one row per answer (stderr: --json stays clean)."""
    err = Console(stderr=True, soft_wrap=True)
    if held["repeated_rows"]:
        err.print(f"note: {held['repeated_rows']} of {held['rows']} rows repeat an answer with the same label: "
                  "each answer counted once", markup=False)
    for conflict in held["conflicts"][:SHOWN_CONFLICTS]:
        err.print(f"warning: answer {conflict['answer_key']} ({conflict['probe']}, sample ids "
                  f"{', '.join(conflict['sample_ids'])}) is labelled {' and '.join(conflict['labels'])}: "
                  "left out of the score", markup=False)
    if len(held["conflicts"]) > SHOWN_CONFLICTS:
        err.print(f"warning: {len(held['conflicts']) - SHOWN_CONFLICTS} more answers with conflicting labels "
                  "left out (--json lists them all)", markup=False)


def _pct(cell: dict[str, Any]) -> str:
    if cell.get("accuracy_pct") is None:
        return "–"
    low, high = cell["ci"]
    return f"{cell['accuracy_pct']:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"


def _study_line(cell: dict[str, Any], where: str = "") -> str | None:
    """The study-level estimate's line: the accuracy a reader of the whole study meets."""
    study = cell.get("study_level")
    if not study:
        return None
    low, high = study["ci"]
    return (f"Study-level accuracy{where} (each reader-label stratum weighted by its share of the study's "
            f"{study['answers']:,} answers): {study['accuracy_pct']:.1f}% [{100 * low:.1f}, {100 * high:.1f}] "
            "(Wilson 95% CI on the effective n): the study's reading accuracy")


def _print(result: dict[str, Any], console: Console) -> None:
    overall = result["overall"]
    console.print(f"Sample accuracy, read as the human read them: {overall['correct']} of {overall['n']}, "
                  f"{_pct(overall)} (Wilson 95% CI; the sample gives each reader label an equal share, so this "
                  f"is not the study's figure); stored in the study as run {result['run_id']}", markup=False)
    line = _study_line(overall)
    if line:
        console.print(line, markup=False)
    for probe, part in result["probes"].items():
        console.rule(probe)
        line = _study_line(part, f" of {probe}")
        if line:
            console.print(f"Sample accuracy of {probe}: {part['correct']} of {part['n']}, {_pct(part)}; {line}",
                          markup=False)
        table = Table(title="Sample accuracy by the reader's label (Wilson 95% CI)")
        for column in ("reader label", "n", "correct", "accuracy"):
            table.add_column(column)
        for row in [*part["by_reader_label"], *({"reader_label": f"reader: {r['reader']}", **r}
                                                 for r in part["by_reader"])]:
            table.add_row(str(row["reader_label"]), str(row["n"]), str(row["correct"]), _pct(row))
        console.print(table)
        k = part["kappa"]
        console.print("Cohen's kappa (reader vs human): " + (
            "undefined (a reader gave one label only)" if k["kappa"] is None else
            f"{k['kappa']:.2f} [95% CI {k['kappa_ci'][0]:.2f}, {k['kappa_ci'][1]:.2f}] on {k['n']} answers"))
        confusion = Table(title="Confusion: reader (rows) x human (columns)")
        humans = sorted({c["human"] for c in part["confusion"]})
        confusion.add_column("reader")
        for h in humans:
            confusion.add_column(h)
        for r in sorted({c["reader"] for c in part["confusion"]}):
            counts = {c["human"]: c["n"] for c in part["confusion"] if c["reader"] == r}
            confusion.add_row(r, *(str(counts.get(h, 0)) for h in humans))
        console.print(confusion)
        groups = part["groups"]
        if groups["test"] is None:
            console.print(f"Reading errors by group: {groups.get('note', 'no test')}", markup=False)
        else:
            verdict = "differs between groups" if groups["differs"] else "does not differ detectably between groups"
            console.print(f"Reading errors by group: {groups['test']}, p = {groups['p_value']:.3g}: the error rate "
                          f"{verdict}" + (f" ({groups['note']})" if groups.get("note") else ""), markup=False)
            worst = sorted(groups["groups"], key=lambda g: -g["error_pct"])[:5]
            console.print("  highest error rates: " + ", ".join(f"{g['group']} {g['error_pct']}% of {g['n']}"
                                                                 for g in worst), markup=False)
