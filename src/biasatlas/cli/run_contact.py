"""`biasatlas run contact`: our templates, or an imported published dataset."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Annotated

import typer

from biasatlas.cli.app import run_app
from biasatlas.cli.common import run_probe_command, show_warning
from biasatlas.cli.design import say_design
from biasatlas.cli.options import RunOptions, run_options, split_values


@run_app.command("contact")
@run_options(named=True)
def run_contact(
    opts: RunOptions,
    axis: Annotated[list[str] | None, typer.Option("--axis", help="Axis (repeat or comma-separate).")] = None,
    scale: Annotated[
        list[str] | None, typer.Option("--scale", help="certainty, likelihood, frequency or all (default: certainty).")
    ] = None,
    action: Annotated[
        list[str] | None,
        typer.Option("--action", help="positive, negative or all (default: all for en, positive for de/is)."),
    ] = None,
    scenario: Annotated[list[str] | None, typer.Option("--scenario", help="Scenario filter.")] = None,
    principle: Annotated[list[str] | None, typer.Option("--principle", help="Key principle filter.")] = None,
    template_set: Annotated[str | None, typer.Option("--template-set", help="Template set (en: a or b).")] = None,
    hb_version: Annotated[str | None, typer.Option("--holistic-bias-version", help="v1.0 or v1.1.")] = None,
    templates: Annotated[
        Path | None, typer.Option("--templates", help="Import a published contact dataset (CSV/XLSX).")
    ] = None,
    descriptors: Annotated[
        Path | None, typer.Option("--descriptors", help="Descriptor list for an imported dataset.")
    ] = None,
    fmt: Annotated[
        str | None, typer.Option("--format", help="Import format: raj (CSV) or rows (3 rows per template).")
    ] = None,
    row_order: Annotated[
        str | None,
        typer.Option("--row-order", help="Cells of a 30-template rows sheet: principle-major (default) or "
                                         "scenario-major."),
    ] = None,
    import_suffix: Annotated[
        str | None,
        typer.Option("--import-suffix", help="Answer instruction of imports: paper (default) or biasatlas."),
    ] = None,
    design: Annotated[
        str | None,
        typer.Option("--design", help="paper: the design the paper fixed (en: Raj et al. 2024; de, is: Ikae et al.): "
                                      "descriptors, scales, actions, system prompt, answer instruction, decoding; "
                                      "printed, and --plan-only gives the paper's counts, cost and time."),
    ] = None,
    balance_groups: Annotated[
        bool | None,
        typer.Option("--balance-groups/--no-balance-groups",
                     help="--limit draws the same prompt sets, on the same questions, for every group of the "
                          "selected axes (the default: the group-vs-rest test pairs groups by question); "
                          "--no-balance-groups: the draw stratified over the design's cells only."),
    ] = None,
) -> None:
    """Ask yes/no-style contact questions under no / positive / negative contact framing.

    Default: choice mode (options scored by log-probability); generate mode: 10 tokens, greedy.
    --limit N draws whole prompt sets (3 prompts each: none, positive, negative contact): the same sets, on the
    same questions, for every group of the selected axes, spread over scale × action × scenario
    (--no-balance-groups, and imported datasets: stratified over language × scale × scenario × principle × action).
    Imports: --action, --axis, --scenario and --principle keep only the matching templates (names normalised:
    "Health care" is healthcare); one --action / --axis describes the rows of a sheet without such a column;
    descriptors that do not fit the grammar of their slot are reported as one-line warnings.
    """
    imports = {k: v for k, v in {"import_row_order": row_order, "import_suffix": import_suffix}.items() if v}
    specific = {"axes": split_values(axis, "--axis"), "scales": split_values(scale, "--scale"),
                "actions": split_values(action, "--action"), "scenarios": split_values(scenario, "--scenario"),
                "principles": split_values(principle, "--principle"), "template_set": template_set,
                "hb_version": hb_version, "templates": templates}
    if design is not None:
        say_design("contact", design, {**opts.probe_values(), **specific})
    with warnings.catch_warnings():
        warnings.showwarning = show_warning
        run_probe_command(
            "contact",
            opts,
            **specific,
            descriptors=descriptors,
            import_format=fmt,
            **({} if balance_groups is None else {"balance_groups": balance_groups}),
            **({"design": design} if design is not None else {}),
            **imports,
        )
