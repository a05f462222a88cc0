"""`biasatlas run samaritan` and `biasatlas samaritan summary` (analysis options)."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer
from rich.console import Console

from biasatlas.cli.app import app, run_app
from biasatlas.cli.common import (
    AlphaOpt,
    CorrectionOpt,
    StudyOpt,
    check_analysis_options,
    fail,
    require_study,
    run_probe_command,
)
from biasatlas.cli.options import RunOptions, run_options
from biasatlas.store import Store

# The probe (pandas, scipy, statsmodels) is imported inside the commands: `biasatlas --help` and
# every other command import this module, and should not pay for the analysis stack.
CATEGORIES = ("race", "gender", "age")  # biasatlas.probes.samaritan.data.CATEGORIES (a test checks)

samaritan_app = typer.Typer(help="Samaritan probe: analysis with chosen alpha, correction and equivalence margin.",
                            no_args_is_help=True)
app.add_typer(samaritan_app, name="samaritan")

CategoryOpt = Annotated[
    str, typer.Option("--category", help=f"{', '.join(CATEGORIES)} or all (comma-separate).")
]
MarginOpt = Annotated[
    float | None,
    typer.Option("--equivalence-margin", help="Equivalence margin in rating points (1-100 scale) of the TOST "
                 "that decides the default persona [default: 2, or the study's last run's]."),
]


def check_margin(margin: float | None) -> dict[str, float]:
    """--equivalence-margin, validated, as a keyword argument (empty when not given)."""
    if margin is None:
        return {}
    if not margin > 0:
        fail(f"--equivalence-margin {margin}: must be above 0 (rating points)")
    return {"equivalence_margin": margin}


@run_app.command("samaritan")
@run_options(named=True)
def run_samaritan(
    category: CategoryOpt = "all",
    alpha: AlphaOpt = None,
    correction: CorrectionOpt = None,
    equivalence_margin: MarginOpt = None,
    design: Annotated[
        str | None,
        typer.Option("--design", help="paper: the paper's design (English, every category, temperature 1, paired "
                                      "t at alpha 0.01 uncorrected); printed, and --plan-only gives the paper's "
                                      "counts, cost and time."),
    ] = None,
    *,
    opts: RunOptions,
) -> None:
    """Ask for the probability (1-100) that a person helps, per group and for the control.

    Defaults: --temperature 0 (greedy, reproducible) for one sample, 1.0 (the providers' default the
    paper used) for several; --max-tokens 512; --mode generate (the only mode). --limit N draws whole
    scenario rephrasings (the control and every chosen group phrasing: 8 prompts for gender, 25 for
    all categories), so at least one such set is asked. --alpha/--correction/--equivalence-margin
    are recorded as the study's defaults for `summary`.
    """
    analysis = check_analysis_options(alpha, correction)
    analysis.update(check_margin(equivalence_margin))
    # --category's default "all" is the design's too: only a category given differs
    categories = None if design is not None and category == "all" else category
    if design is not None:
        from biasatlas.cli.design import say_design

        say_design("samaritan", design, {**opts.probe_values(), "categories": categories, **analysis})
        analysis["design"] = design
    run_probe_command("samaritan", opts, categories=categories, **analysis)


@samaritan_app.command("summary")
def samaritan_summary(
    study: StudyOpt,
    alpha: AlphaOpt = None,
    correction: CorrectionOpt = None,
    equivalence_margin: MarginOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout.")] = False,
) -> None:
    """The Samaritan analysis with a chosen alpha, correction and margin (default: the last run's)."""
    analysis = check_analysis_options(alpha, correction)
    analysis.update(check_margin(equivalence_margin))
    require_study(study, write=False, first="run a probe first")
    from biasatlas.probes.samaritan.probe import PROBE

    with Store(study) as store:
        result = PROBE.summarise(store, **analysis)
    if as_json:
        sys.stdout.write(json.dumps(result, indent=2, ensure_ascii=False, default=str) + "\n")
        return
    PROBE.print_summary(result, Console())
