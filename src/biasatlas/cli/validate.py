"""`biasatlas validate`: run the shipped positive controls here and print, per probe, planted vs found."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from biasatlas.cli.app import app
from biasatlas.cli.common import check_study, fail

# The controls (pandas, scipy, torch) are imported inside the command: every CLI start imports this module.
NOT_CHECKED = ("leakage",)


def _row(probe: str, role: str, verdict: dict[str, Any]) -> list[str]:
    found = verdict.get("found") or {}
    effect = found.get("effect")
    shown = "—" if effect is None else (f"{100 * effect:+.0f} pp [{100 * found['ci_low']:+.0f}, "
                                         f"{100 * found['ci_high']:+.0f}], p(BH) {found['p_adj']:.2g}")
    found_text = "found" if verdict["detected"] else "not found"
    if "headline_group" in verdict:  # contact: the group the probe's own group-disparity headline names
        found_text += f"; headline: {verdict['headline_group'] or 'no group differs'}"
    return [probe, role, verdict["language"], verdict["planted"], found_text,
            shown, f"{len(verdict['false_flags'])} of {verdict['untouched']} (≤ {verdict['false_flag_bound']})"]


@app.command("validate")
def validate(
    study: Annotated[Path | None, typer.Option("--study", "-s", help="Keep the answers in this study "
                                                "directory (default: a temporary one, removed afterwards).")] = None,
    cells: Annotated[int, typer.Option("--cells", min=3, help="Held-out template cells per language (x7 groups "
                                       "x3 framings prompts each, per model).")] = 3,
    base: Annotated[bool, typer.Option("--base/--no-base", help="Also ask the base model, which must not show "
                                       "the planted effect.")] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print the verdicts as JSON.")] = False,
) -> None:
    """Run the positive controls (adapters of the embedded model with a planted bias) on this machine's
    local backend and print, per probe, the planted group and what the probe found. Exit 1 when a planted
    bias is missed, an untouched group is flagged too often, or the base model shows the planted effect."""
    from biasatlas.backends.base import BackendError
    from biasatlas.backends.extras import require

    if study is not None:  # a study that cannot be written is refused before any model is loaded
        check_study(study, write=True)
    try:
        require("local", "biasatlas validate (runs the embedded model with the control adapters)")
    except BackendError as exc:
        fail(str(exc))
    from biasatlas.controls.common.adapters import adapter_dir
    from biasatlas.lock import study_writer

    adapter = adapter_dir("contact")
    if not (adapter / "adapter_config.json").is_file():
        fail(f"no control adapter at {adapter} (rebuild with scripts/build_controls.py)", 1)
    with tempfile.TemporaryDirectory(prefix="biasatlas-validate-") as tmp:
        where = study or Path(tmp)
        # one writer at a time, as `run` does: a second validate of this study waits (one line says for whom),
        # then finds the first one's answers in the cache instead of asking everything again
        with study_writer(where), study_writer(where / "stories"):
            ok, results, samaritan, samaritan_rows, stories_results, stories_rows = _controls(
                where, adapter, cells, base)
    if as_json:
        sys.stdout.write(json.dumps({"contact": results, "samaritan": samaritan, "stories": stories_results,
                                     "passed": ok,
                                     "not_checked": list(NOT_CHECKED)}, indent=2) + "\n")
    else:
        table = Table(title="Positive controls: planted vs found")
        for column in ("probe", "model", "language", "planted group", "found", "effect (95% CI)",
                       "untouched flagged"):
            table.add_column(column)
        for role, result in results.items():
            for v in result["verdicts"]:
                table.add_row(*_row("contact", "base + control" if role == "adapter" else "base", v))
        for row in [*samaritan_rows, *stories_rows]:  # Samaritan effect: group − control rating (1-100 points)
            table.add_row(*row)
        from rich.console import Console

        Console().print(table)
        Console().print("effect: contact = share of biased answers, planted − other groups (pp); "
                        "samaritan = group − control rating (1-100 scale)")
        Console().print("[bold green]controls passed[/]" if ok else "[bold red]controls FAILED[/]")
        Console().print(f"no control shipped yet for: {', '.join(NOT_CHECKED)} (docs/validation.md)")
    if not ok:
        raise typer.Exit(1)


def _controls(where: Path, adapter: Path, cells: int, base: bool) -> tuple[
        bool, dict[str, Any], dict[str, Any], list[list[str]], dict[str, Any], list[list[str]]]:
    """Run the three controls into ``where``: (passed, contact, samaritan, its rows, stories, its rows)."""
    from biasatlas.backends.options import BackendOptions
    from biasatlas.controls import load_control
    from biasatlas.controls.common.adapters import BASE_MODEL

    roles = [("adapter", BackendOptions(model=BASE_MODEL, adapter=str(adapter)))]
    if base:
        roles.append(("base", BackendOptions(model=BASE_MODEL)))
    results: dict[str, Any] = {}
    ok = True
    for role, options in roles:
        check = load_control("contact", "check").check_contact(options, where, cells=cells)
        verdicts = [v.as_dict() for v in check.verdicts]
        results[role] = {"prompts": check.prompts, "verdicts": verdicts}
        # base + adapter must pass; the base model must not show the planted bias
        passed = check.passed if role == "adapter" else not any(v["detected"] for v in verdicts)
        ok = ok and passed
    try:
        samaritan, samaritan_rows, samaritan_ok = load_control("samaritan", "validate").validate(where, base=base)
    except FileNotFoundError as exc:
        fail(str(exc), 1)
    ok = ok and samaritan_ok
    stories_results, stories_ok, stories_rows = load_control("stories", "validate").validate_stories(
        where / "stories", base)
    ok = ok and stories_ok
    return ok, results, samaritan, samaritan_rows, stories_results, stories_rows
