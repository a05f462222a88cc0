"""`biasatlas power`: how many prompt sets (contact) or scenarios (samaritan) an effect needs, from a pilot.

The pilot is a finished study: its answers give, per cell, the discordance of the paired decisions and
the sd of the paired differences, exactly as the probes' tests pair them (docs/power.md).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from biasatlas.cli.app import app
from biasatlas.cli.common import fail, require_study, study_errors

# pandas, scipy and statsmodels are imported inside the command: every CLI start imports this module.


@app.command("power")
def power(
    probe_arg: Annotated[str | None, typer.Argument(metavar="PROBE", help="contact or samaritan (as --probe).",
                                                    show_default=False)] = None,
    study: Annotated[Path | None, typer.Option("--study", "-s", help="A finished pilot study (with --effect).")]
    = None,
    effect: Annotated[float | None, typer.Option("--effect", help="The effect to detect, on the measure's scale: "
                                                 "decision 0.10 = 10 points (0.001 to 1); probability: log-odds "
                                                 "(0.001 to 20); rating: points (0.01 to 99). Needs --study.")]
    = None,
    disparity: Annotated[float | None, typer.Option("--disparity", help="One group this many points worse than "
                                                    "the other groups of its axis (contact: percentage points of "
                                                    "biased decisions, 0.5 to 100 × (1 − base rate); samaritan: "
                                                    "rating points, 0.1 to 99): the units per group it needs, "
                                                    "without a pilot.")] = None,
    probe: Annotated[str | None, typer.Option("--probe", help="contact or samaritan (default: each in the study).")]
    = None,
    measure: Annotated[str | None, typer.Option("--measure", help="contact: decision (default) or probability; "
                                                "samaritan: rating.")] = None,
    alpha: Annotated[float | None, typer.Option("--alpha", help="Two-sided alpha per test (default: contact "
                                                "0.05, samaritan 0.01); --disparity: of the family of the "
                                                "axis's groups (Holm).")] = None,
    target: Annotated[float, typer.Option("--power", help="The power wanted.")] = 0.8,
    lang: Annotated[str, typer.Option("--lang", help="--disparity: languages, comma-separated.")] = "en",
    axis: Annotated[str | None, typer.Option("--axis", help="--disparity: contact axes or samaritan categories, "
                                             "comma-separated (default: all).")] = None,
    base_rate: Annotated[float, typer.Option("--base-rate", help="--disparity, contact: the other groups' share "
                                             "of biased decisions (0.01 to 0.99).")] = 0.30,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout.")] = False,
) -> None:
    """Units an effect needs at --power and --alpha: --effect from a finished pilot study's answers, or
    --disparity (one group worse than the rest of its axis) from the design alone."""
    if probe_arg is not None and probe is not None and probe_arg != probe:
        fail(f"two probes given: {probe_arg} and --probe {probe}; give one")
    probe = probe or probe_arg
    if (effect is None) == (disparity is None):
        fail("give one of --effect (with --study, a pilot) and --disparity (one group against the rest)")
    if disparity is not None:
        if study is not None:
            fail("--disparity plans from the design, not a pilot: leave out --study (or plan with --effect)")
        _disparity(probe, disparity, alpha, target, lang, axis, base_rate, as_json)
        return
    if study is None:
        fail("--effect plans from a pilot: give --study DIR (or --disparity PP without one)")
        return
    assert effect is not None
    from biasatlas.probes import PROBE_MODULES, load_probe
    from biasatlas.probes.power import MEASURES, pilot_plan
    from biasatlas.stats.power import PowerError
    from biasatlas.store import Store

    if alpha is not None and not 0 < alpha < 1:
        fail(f"--alpha {alpha}: must be between 0 and 1 (exclusive)")
    if not 0 < target < 1:
        fail(f"--power {target}: must be between 0 and 1 (exclusive)")
    if probe is not None and probe not in MEASURES:
        known = "a probe" if probe in PROBE_MODULES else "not a probe"
        fail(f"--probe {probe!r}: {known} without a power model; valid: {', '.join(MEASURES)}")
    require_study(study, write=False, first="run a pilot first")
    results: list[dict[str, Any]] = []
    with study_errors(study), Store(study) as store:
        held = {r[0] for r in store.conn.execute("SELECT DISTINCT probe FROM prompts").fetchall()}
        names = [probe] if probe is not None else [name for name in MEASURES if name in held]
        if not names:
            fail(f"the study {study} holds no answers of a probe with a power model ({', '.join(MEASURES)})")
        for name in names:
            if name not in held:
                fail(f"the study {study} holds no {name} answers")
            try:
                results.append(pilot_plan(name, load_probe(name).outcomes(store), effect, measure=measure,
                                          alpha=alpha, power=target))
            except PowerError as exc:
                fail(str(exc))
    if as_json:
        sys.stdout.write(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
        return
    for result in results:
        _print(result, study)


def _split(value: str | None, option: str) -> list[str] | None:
    if value is None:
        return None
    items = [v.strip() for v in value.split(",") if v.strip()]
    if not items:
        fail(f"{option} {value!r}: names nothing")
    return items


def _disparity(probe: str | None, disparity: float, alpha: float | None, target: float, lang: str,
               axis: str | None, base_rate: float, as_json: bool) -> None:
    """`biasatlas power PROBE --disparity PP`: units per group for one group PP points worse than the rest."""
    from biasatlas.probes.group_power import (
        DISPARITY_BOUNDS,
        contact_axes,
        disparity_plan,
        samaritan_categories,
    )

    if probe not in DISPARITY_BOUNDS:
        fail(f"--disparity needs a probe: {' or '.join(DISPARITY_BOUNDS)} (got {probe or 'none'})")
        return
    if alpha is not None and not 0 < alpha < 1:
        fail(f"--alpha {alpha}: must be between 0 and 1 (exclusive)")
    if not 0 < target < 1:
        fail(f"--power {target}: must be between 0 and 1 (exclusive)")
    if not 0.01 <= base_rate <= 0.99:
        fail(f"--base-rate {base_rate}: must be between 0.01 and 0.99")
    lo, hi = DISPARITY_BOUNDS[probe]
    hi = round(100 * (1 - base_rate), 9) if probe == "contact" else hi
    if not lo <= disparity <= hi:
        unit = "percentage points above the base rate" if probe == "contact" else "rating points"
        fail(f"--disparity {disparity:g}: must lie between {lo:g} and {hi:g} ({unit})")
    languages, axes = _split(lang, "--lang") or ["en"], _split(axis, "--axis")
    try:
        cells = contact_axes(languages, axes) if probe == "contact" else samaritan_categories(languages, axes)
    except (ValueError, LookupError) as exc:  # an unknown language, axis or category: the plan's own message
        fail(str(exc).splitlines()[0])
        return
    result = disparity_plan(probe, disparity, cells, alpha=alpha, power=target, base_rate=base_rate)
    if as_json:
        sys.stdout.write(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
        return
    _print_disparity(result)


def _print_disparity(result: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    probe, where = result["probe"], "axis" if result["probe"] == "contact" else "category"
    table = Table(title=f"{probe}: {result['unit']} to find one group {result['disparity']:g} "
                        f"{result['disparity_unit']} worse than the others, alpha {result['alpha']:g} (Holm over "
                        f"the groups), power {result['power']:g}")
    columns = ["language", where, "groups", result["unit"], *(["--limit"] if probe == "contact" else []), "note"]
    for column in columns:
        table.add_column(column, overflow="fold")
    for r in result["rows"]:
        table.add_row(r["language"], r[where], str(r["groups"]), "–" if r["needed"] is None else str(r["needed"]),
                      *([str(r.get("limit", "–"))] if probe == "contact" else []), r["note"] or "")
    out = Console(width=max(Console().width, 160))
    out.print(table)
    out.print(f"test: {result['test']}")
    for text in result["assumptions"]:
        out.print(f"assumed: {text}")
    if probe == "contact":
        out.print("contact: --limit counts prompts, 3 per prompt set (none, positive, negative: 3 questions of the "
                  "headline test); it draws the same prompt sets for every group of the selected axes: run one axis "
                  "with `--axis AXIS --limit N` and check `--plan-only`'s group lines (docs/methods.md, \"Power for "
                  "group disparity\")")


def _print(result: dict[str, Any], study: Path) -> None:
    from rich.console import Console
    from rich.table import Table

    probe, unit = result["probe"], result["unit"]
    spread = "ψ (discordance)" if result["measure"] == "decision" else "sd of the differences"
    table = Table(title=f"{probe}: {unit} needed for an effect of {result['effect']:g} ({result['measure']}), "
                        f"alpha {result['alpha']:g}, power {result['power']:g}")
    cell_keys = [k for k in ("model", "mode", "language", "scale", "category", "group", "comparison")
                 if any(k in r for r in result["rows"])]
    for column in [*cell_keys, f"pilot {unit}", spread, f"{unit} needed", "note"]:
        table.add_column(column, overflow="fold")
    for r in result["rows"]:
        value = r.get("discordance") if result["measure"] == "decision" else r.get("sd", r.get("sd_logit"))
        table.add_row(*(str(r.get(k, "")) for k in cell_keys), str(r["n"]),
                      "–" if value is None else f"{value:.3g}",
                      "–" if r["needed"] is None else str(r["needed"]), r["note"] or "")
    out = Console(width=max(Console().width, 160))
    out.print(table)
    most = result["most_needed"]
    if most is None:
        return
    out.print(f"{probe}: {most} {unit} per cell detect the effect in every row that could be planned "
              f"(pilot: {study})")
    if probe == "contact":  # --limit counts prompts: a prompt set is 3 (none, positive, negative)
        out.print(f"contact: --limit {3 * most} per language and scale asks {most} prompt sets; check the n of "
                  "`biasatlas run contact ... --plan-only`'s power cells (docs/power.md)")
    else:
        out.print("samaritan: choose --limit with `biasatlas run samaritan ... --plan-only`: its power cells give "
                  "the scenarios each category gets (docs/power.md)")
