"""The `biasatlas stories` group (import, judge and ratings attach to it from cli/run_stories.py) and
`biasatlas stories compare`: a study's associations against the published StereoTales list."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from biasatlas.cli.app import app
from biasatlas.cli.common import AlphaOpt, StudyOpt, check_analysis_options, fail
from biasatlas.store import Store

# this module imports nothing from cli/run_stories.py, which imports the group from here (no cycle)
stories_app = typer.Typer(help="Story probe extras: import published stories, judge harm, human ratings, "
                          "compare with the published list.", no_args_is_help=True)
app.add_typer(stories_app, name="stories")


def open_store(study: Path) -> Store:
    """The study's store; a one-line error when there is none."""
    from biasatlas.cli.common import require_study

    require_study(study, write=False, first="run `biasatlas run stories` first")
    return Store(study)


@stories_app.command("compare")
def compare_cmd(
    published: Annotated[Path, typer.Option("--published", help="The published human-study list (questions.json); "
                                            "it ships with no licence, so you supply it.")],
    study: StudyOpt,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout.")] = False,
    alpha: AlphaOpt = None,
    resamples: Annotated[int, typer.Option("--resamples", min=1, help="Monte Carlo resamples (reference).")] = 500_000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the Monte Carlo Fisher tests.")] = 42,
    min_lift: Annotated[float, typer.Option("--min-lift")] = 2.0,
    pool_languages: Annotated[
        bool, typer.Option("--pool-languages", help="Pool the study's languages in each model x template slice "
                           "(the paper's global aggregation); default: each language apart.")
    ] = False,
) -> None:
    """Which published associations each slice (model x prompt template, x language where the study has
    several) reproduces (its fraction and lift beside the published ones), which it does not and why an
    entry cannot be tested, and which new ones it adds; unmapped published entries are listed."""
    from biasatlas.probes.stories import profiles as profiles_module
    from biasatlas.probes.stories.compare import compare, read_published
    from biasatlas.stats.associations import AssociationConfig

    check_analysis_options(alpha, None)
    try:
        entries, problems = read_published(published)
    except ValueError as exc:
        fail(str(exc))
        return
    config = AssociationConfig(alpha=0.05 if alpha is None else alpha, resamples=resamples, seed=seed,
                               min_lift=min_lift)
    store = open_store(study)
    try:
        profiles, _ = profiles_module.load_profiles(store)
    finally:
        store.close()
    if profiles.empty:
        fail(f"{study}: no extracted story profiles to compare (run `biasatlas run stories` or `stories import`)")
    out = compare(profiles, entries, config, per_language=not pool_languages)
    if problems:
        out["published"]["problems"] = problems
    if as_json:
        sys.stdout.write(json.dumps(out, indent=2, ensure_ascii=False, default=str) + "\n")
        return
    _print(out, Console())


def _print(out: dict[str, Any], console: Console) -> None:
    pub = out["published"]
    unmapped = "; ".join(f"{u['question_id']} {u['why']}" for u in pub["unmapped"])
    console.print(f"published list: {pub['entries']} entries, {pub['mapped']} mapped to the bundled keys, "
                  f"{len(pub['unmapped'])} not" + (f": {unmapped}" if unmapped else ""))
    for sl in out["slices"]:
        untestable = "; ".join(f"{n} {why}" for why, n in sl["untestable"].items())
        console.print(f"{_label(sl)}: {sl['reproduced']} reproduced of {sl['published_testable']} testable published "
                      f"associations; {sl['new']} new ({sl['held']} held in all)"
                      + (f"; not testable: {untestable}" if untestable else ""))
    table = Table(title="Published associations (fraction and lift: slice / published)")
    for col in ("slice", "A = a", "B = b", "reproduced", "fraction", "lift"):
        table.add_column(col)
    for r in out["rows"]:
        table.add_row(
            _label(r),
            f"{r['base_attribute']} = {r['base_value']}",
            f"{r['compared_attribute']} = {r['compared_value']}",
            "yes" if r["reproduced"] else ("not testable" if r["why"] else "no"),
            f"{_fmt(r['fraction'])} / {_fmt(r['published_fraction'])}",
            f"{_fmt(r['lift'])} / {_fmt(r['published_lift'])}",
        )
    console.print(table)


def _label(row: dict[str, Any]) -> str:
    """A slice as text: model, template, language."""
    return f"{row['model']} / {row['template']} / {row['language']}"


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"
