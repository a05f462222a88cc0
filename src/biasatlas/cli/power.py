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
from biasatlas.cli.common import StudyOpt, check_study, fail, study_errors

# pandas, scipy and statsmodels are imported inside the command: every CLI start imports this module.


@app.command("power")
def power(
    study: StudyOpt,
    effect: Annotated[float, typer.Option("--effect", help="The effect to detect, on the measure's scale: "
                                          "decision 0.10 = 10 points; probability: log-odds; rating: points.")],
    probe: Annotated[str | None, typer.Option("--probe", help="contact or samaritan (default: each in the study).")]
    = None,
    measure: Annotated[str | None, typer.Option("--measure", help="contact: decision (default) or probability; "
                                                "samaritan: rating.")] = None,
    alpha: Annotated[float | None, typer.Option("--alpha", help="Two-sided alpha per test (default: contact "
                                                "0.05, samaritan 0.01).")] = None,
    target: Annotated[float, typer.Option("--power", help="The power wanted.")] = 0.8,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout.")] = False,
) -> None:
    """Units an effect of --effect needs at --power and --alpha, from a finished pilot study's answers."""
    from biasatlas.probes import PROBE_MODULES, load_probe
    from biasatlas.probes.power import MEASURES, pilot_plan
    from biasatlas.stats.power import PowerError
    from biasatlas.store import DB_NAME, Store

    if alpha is not None and not 0 < alpha < 1:
        fail(f"--alpha {alpha}: must be between 0 and 1 (exclusive)")
    if not 0 < target < 1:
        fail(f"--power {target}: must be between 0 and 1 (exclusive)")
    if probe is not None and probe not in MEASURES:
        known = "a probe" if probe in PROBE_MODULES else "not a probe"
        fail(f"--probe {probe!r}: {known} without a power model; valid: {', '.join(MEASURES)}")
    check_study(study, write=False)
    if not (study / DB_NAME).exists():
        fail(f"no study at {study} (expected {study / DB_NAME}); run a pilot first")
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
