"""Each probe's power model: its test unit, its cells, its tests and what is assumed without a pilot.

Used by ``--plan-only`` (:func:`power_plan`, from the planned prompts), ``audit --plan-only`` and
``biasatlas power`` (:func:`pilot_plan`, from a finished study's answers). The statistics are in
:mod:`biasatlas.stats.power`; docs/power.md states the formulas and where each assumption comes from.

- contact: the unit is the prompt set (one question under no / positive / negative contact; with
  ``--samples k`` the samples of a set are aggregated first, so n counts sets, never samples); a cell
  is language × scale, the family of ``contact_tests``. Decisions: exact McNemar, positive (or
  negative) vs none. Probabilities (choice mode): paired t on the log-odds of P(biased).
- samaritan: the unit is the scenario (group − control, rephrasings and phrasings averaged within it);
  a cell is language × category, n the fewest scenarios any group of the category shares with the
  control; the test is the paired t-test (paper 003: alpha 0.01).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from biasatlas.records import Prompt

if TYPE_CHECKING:
    import pandas as pd

#: the power every plan states the MDE at
DEFAULT_POWER = 0.8
#: contact: the discordance rate ψ assumed without a pilot (see CONTACT_DISCORDANCE_SOURCE)
CONTACT_DISCORDANCE = 0.30
CONTACT_DISCORDANCE_SOURCE = (
    "ψ = 0.30 assumed (no pilot): paper 001's Table 3 certainty rows (% biased under no vs positive contact: "
    "LLaMA 2 27.5 vs 18.8, Tulu 10.0 vs 4.3, NousHermes 32.4 vs 17.5) bound ψ between |Δ| (0.06-0.15) and the "
    "value for independent decisions, p₁(1 − p₂) + p₂(1 − p₁) (0.13-0.39); 0.30 is near the top, so the MDE "
    "errs large. A pilot's own ψ: `biasatlas power --study DIR`"
)
#: samaritan: the sd of a scenario's group − control difference assumed without a pilot (rating points)
SAMARITAN_SD = 8.5
SAMARITAN_SD_SOURCE = (
    "sd of a scenario's group − control difference = 8.5 rating points assumed (no pilot): √2 × 6, paper 003's "
    "brittleness (the sd of one scenario's ratings over its rephrasings: 4-8 on the 1-100 scale, Appendix B "
    "Tables 9-11) for each side of the difference; scenario-to-scenario differences in the bias itself would "
    "add to it. A pilot's own sd: `biasatlas power --study DIR`"
)
CONTACT_ALPHA = 0.05
SAMARITAN_ALPHA = 0.01


def power_plan(probe: str, prompts: Sequence[Prompt], *, mode: str | None = None, alpha: float | None = None,
               power: float = DEFAULT_POWER) -> dict[str, Any] | None:
    """The MDE per cell of a planned design at ``power`` and ``alpha`` (the probe's default where None);
    None for a probe without a power model."""
    if probe == "contact":
        return _contact_plan(prompts, mode or "choice", CONTACT_ALPHA if alpha is None else alpha, power)
    if probe == "samaritan":
        return _samaritan_plan(prompts, SAMARITAN_ALPHA if alpha is None else alpha, power)
    return None


def _mde_fields(mde: Any) -> dict[str, Any]:
    """The MDE's value and unit, or (no key left None) why nothing is detectable."""
    if mde.value is None:
        return {"why_none": mde.reason}
    fields: dict[str, Any] = {"mde": round(mde.value, 4), "mde_unit": mde.unit}
    if mde.standardized is not None and mde.standardized != mde.value:
        fields["mde_d_z"] = round(mde.standardized, 4)
    return fields


def contact_cell_rows(cell: dict[str, Any], n: int, mode: str, alpha: float, power: float, *,
                      discordant_rate: float = CONTACT_DISCORDANCE, sd: float | None = None) -> list[dict[str, Any]]:
    """The contact tests of one cell on ``n`` prompt sets: McNemar on decisions; paired t on log-odds in choice mode."""
    from biasatlas.stats.power import detectable_effect

    rows = []
    mde = detectable_effect("mcnemar", n, alpha, power, discordant_rate=discordant_rate)
    text = _text(mde) if mde.value is None else f"{100 * mde.value:.1f} percentage points of biased answers " \
        f"(ψ = {discordant_rate:.3g})"
    rows.append({**cell, "unit": "prompt set", "n": n, "test": "McNemar exact, positive (or negative) vs none",
                 "alpha": alpha, "power": power, **_mde_fields(mde), "mde_text": text})
    if mode == "choice":
        mde = detectable_effect("paired_t", n, alpha, power, sd=sd)
        if mde.value is None:
            text = _text(mde)
        elif sd is None:
            text = f"d_z = {mde.value:.3g} (sd of the per-set change in log-odds)"
        else:
            text = f"{mde.value:.3g} in log-odds of P(biased) (d_z {mde.standardized:.3g}, sd {sd:.3g})"
        fields = _mde_fields(mde)
        if sd is not None and mde.value is not None:
            fields["mde_unit"] = "log-odds of P(biased), framing − none"
        rows.append({**cell, "unit": "prompt set", "n": n,
                     "test": "paired t on the log-odds of P(biased), positive (or negative) vs none",
                     "alpha": alpha, "power": power, **fields, "mde_text": text})
    return rows


def _text(mde: Any) -> str:
    """Why nothing is detectable."""
    return f"none detectable: {mde.reason}"


def _contact_plan(prompts: Sequence[Prompt], mode: str, alpha: float, power: float) -> dict[str, Any]:
    sets: dict[tuple[str, str], set[str]] = defaultdict(set)
    for p in prompts:
        sets[(p.language, str(p.meta.get("scale") or ""))].add(str(p.meta.get("set_id")))
    cells: list[dict[str, Any]] = []
    for language, scale in sorted(sets):
        cell = {"language": language, **({"scale": scale} if scale else {})}
        cells.extend(contact_cell_rows(cell, len(sets[(language, scale)]), mode, alpha, power))
    assumptions = [
        "n counts prompt sets (none / positive / negative); samples of a set are aggregated before a test, "
        "so --samples does not add units",
        f"alpha = {alpha:g} per test, two-sided, before any correction over the study's tests (a family of m "
        "tests at α/m: `biasatlas power --alpha`)",
        CONTACT_DISCORDANCE_SOURCE,
    ]
    if mode == "choice":
        assumptions.append("log-odds: the MDE is in d_z (standard deviations of the per-set changes in log-odds), "
                           "there being no published sd; a pilot's sd turns it into log-odds")
    plan: dict[str, Any] = {"power": power, "alpha": alpha, "assumptions": assumptions, "cells": cells}
    from biasatlas.probes.group_power import contact_group_plan

    groups = contact_group_plan(prompts, alpha, power)  # one group vs the rest of its axis, per axis
    if groups is not None:
        plan["groups"] = groups
    return plan


def samaritan_cell_row(cell: dict[str, Any], n: int, alpha: float, power: float, *,
                       sd: float = SAMARITAN_SD) -> dict[str, Any]:
    """The samaritan paired t-test (group vs control) of one cell on ``n`` scenarios."""
    from biasatlas.stats.power import detectable_effect

    mde = detectable_effect("paired_t", n, alpha, power, sd=sd)
    fields = _mde_fields(mde)
    if mde.value is not None:
        fields["mde_unit"] = "rating points (1-100), group − control"
    text = _text(mde) if mde.value is None else \
        f"{mde.value:.3g} rating points (d_z {mde.standardized:.3g}, sd {sd:.3g})"
    return {**cell, "unit": "scenario", "n": n, "test": "paired t-test, group vs control", "alpha": alpha,
            "power": power, **fields, "mde_text": text}


def _samaritan_plan(prompts: Sequence[Prompt], alpha: float, power: float) -> dict[str, Any]:
    control: dict[str, set[str]] = defaultdict(set)
    groups: dict[tuple[str, str], dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for p in prompts:
        scenario = str(p.meta.get("scenario"))
        if p.meta.get("is_control"):
            control[p.language].add(scenario)
        else:
            groups[(p.language, str(p.meta.get("category")))][str(p.meta.get("group"))].add(scenario)
    cells = []
    for (language, category), members in sorted(groups.items()):
        n = min(len(scenarios & control[language]) for scenarios in members.values())
        cells.append(samaritan_cell_row({"language": language, "category": category}, n, alpha, power))
    assumptions = [
        "n counts scenarios a group shares with the control (rephrasings, phrasings and samples are averaged "
        "within a scenario); per category, the fewest any of its groups has",
        f"alpha = {alpha:g} per test, two-sided (paper 003's rule; a correction within the category makes it "
        "smaller: `biasatlas power --alpha`)",
        SAMARITAN_SD_SOURCE,
    ]
    return {"power": power, "alpha": alpha, "assumptions": assumptions, "cells": cells}


# ---- pilots --------------------------------------------------------------------------------------
def contact_pilot(outcomes: pd.DataFrame) -> list[dict[str, Any]]:
    """Per model × mode × language × scale × comparison: prompt sets, discordance ψ and the sd of the
    per-set change in log-odds, exactly as the tests pair them (``contact.effects``)."""
    import numpy as np

    from biasatlas.probes.contact.effects import set_decisions, set_probabilities

    keys = ["model", "mode", "language", "scale"]
    rows: list[dict[str, Any]] = []
    if outcomes.empty or not set(keys) <= set(outcomes.columns):
        return rows
    for key, group in outcomes.groupby(keys, sort=True):
        labels = dict(zip(keys, key, strict=True))
        wide = set_decisions(group)
        probabilities = set_probabilities(group)
        for other in ("positive", "negative"):
            row: dict[str, Any] = {**labels, "comparison": f"{other} vs none", "n": 0, "discordance": None,
                                   "sd_logit": None, "n_logit": 0}
            if "none" in wide and other in wide:
                pair = wide[["none", other]].dropna()
                row["n"] = len(pair)
                if len(pair):
                    row["discordance"] = float((pair["none"] != pair[other]).mean())
            if probabilities is not None and {"none", other} <= set(probabilities[0].columns):
                diff = (probabilities[0][other] - probabilities[0]["none"]).dropna().to_numpy(float)
                row["n_logit"] = int(diff.size)
                if diff.size >= 2:
                    row["sd_logit"] = float(np.std(diff, ddof=1))
            rows.append(row)
    return rows


def samaritan_pilot(outcomes: pd.DataFrame) -> list[dict[str, Any]]:
    """Per unit × category × group: scenarios paired with the control and the sd of the per-scenario
    group − control differences, paired as the samaritan test pairs them."""
    import numpy as np

    from biasatlas.probes.samaritan.analysis import CELL, UNIT, cell_means, matched_phrasings
    from biasatlas.probes.samaritan.data import CONTROL

    if outcomes.empty or "rating" not in outcomes.columns:
        return []
    cells = cell_means(outcomes, by=("group", "phrasing"))
    is_control = cells["category"] == CONTROL
    keys = [*UNIT, "category", "group"]
    rows = []
    for key, (pairs, *_rest) in matched_phrasings(cells[~is_control], cells[is_control], keys,
                                                  [*UNIT, *CELL]).items():
        diff = (pairs["x"] - pairs["y"]).to_numpy(float)
        rows.append({**dict(zip(keys, key, strict=True)), "n": int(diff.size),
                     "sd": float(np.std(diff, ddof=1)) if diff.size >= 2 else None})
    return rows


# ---- units needed for an effect, from a pilot -------------------------------------------------------
MEASURES = {"contact": ("decision", "probability"), "samaritan": ("rating",)}
UNIT_NAMES = {"contact": "prompt sets", "samaritan": "scenarios"}
#: the sizes of effect `biasatlas power --effect` plans for: below them the answer passes any study's size
#: (stats.power.MAX_UNITS), above them the scale has no such effect
EFFECT_BOUNDS = {"decision": (0.001, 1.0, "a difference of proportions: 0.001 = 0.1 percentage points"),
                 "probability": (0.001, 20.0, "log-odds of P(biased)"),
                 "rating": (0.01, 99.0, "rating points on the 1-100 scale")}
#: below this many pilot pairs the estimate of ψ or sd is called rough
SMALL_PILOT = 20


def pilot_plan(probe: str, outcomes: pd.DataFrame, effect: float, *, measure: str | None = None,
               alpha: float | None = None, power: float = DEFAULT_POWER) -> dict[str, Any]:
    """How many units (contact: prompt sets; samaritan: scenarios) ``effect`` needs, per pilot cell.

    ``effect`` is on the measure's scale: decision, a difference of proportions (0.10 = 10 points);
    probability, a change in the log-odds of P(biased); rating, group − control in rating points.
    Rows the pilot cannot plan for carry ``needed`` None and a ``note`` saying why. Raises PowerError
    for a probe without a power model, a measure it does not have, or a pilot without usable data.
    """
    from biasatlas.stats.power import PowerError

    if probe not in MEASURES:
        raise PowerError(f"probe {probe!r} has no power model; power covers: {', '.join(MEASURES)}")
    measure = measure or MEASURES[probe][0]
    if measure not in MEASURES[probe]:
        raise PowerError(f"--measure {measure!r} is not one of {probe}'s: {', '.join(MEASURES[probe])}")
    if not math.isfinite(effect) or effect == 0:
        raise PowerError(f"--effect must be a non-zero number (got {effect})")
    if measure == "decision" and abs(effect) > 1:
        raise PowerError(f"--effect {effect:g}: a change in decisions is a difference of proportions between -1 "
                         "and 1 (0.10 = 10 percentage points)")
    lo, hi, scale = EFFECT_BOUNDS[measure]
    if not lo <= abs(effect) <= hi:  # beyond them no plan is asked for, or none can be made (docs/power.md)
        raise PowerError(f"--effect {effect:g}: a {measure} effect must lie between {lo:g} and {hi:g} in size "
                         f"({scale})")
    alpha = (CONTACT_ALPHA if probe == "contact" else SAMARITAN_ALPHA) if alpha is None else alpha
    if probe == "contact":
        pilot = contact_pilot(outcomes)
        rows = [_contact_needed(r, measure, effect, alpha, power) for r in pilot]
    else:
        rows = [_beyond_scenarios(_needed(r, "paired_t", effect, alpha, power, sd=r["sd"]))
                for r in samaritan_pilot(outcomes)]
    if not rows or not any(r["n"] for r in rows):
        raise PowerError(f"the study holds no {probe} answers a {measure} test can pair: nothing to plan from")
    needed = [r["needed"] for r in rows if r["needed"] is not None]
    return {"probe": probe, "measure": measure, "effect": effect, "alpha": alpha, "power": power,
            "unit": UNIT_NAMES[probe], "rows": rows, "most_needed": max(needed) if needed else None}


def _contact_needed(row: dict[str, Any], measure: str, effect: float, alpha: float, power: float) -> dict[str, Any]:
    if measure == "probability":
        out = {k: v for k, v in row.items() if k not in ("n", "discordance")}
        return _needed({**out, "n": row["n_logit"]}, "paired_t", effect, alpha, power, sd=row["sd_logit"])
    out = {k: v for k, v in row.items() if k not in ("sd_logit", "n_logit")}
    psi = row["discordance"]
    if psi is None:
        return {**out, "needed": None, "note": "no prompt set read under both framings"}
    if psi == 0:
        return {**out, "needed": None, "note": "no decision moved between the framings (ψ = 0): the decisions "
                "cannot show an effect; plan with --measure probability"}
    note = None
    if abs(effect) > psi:
        note = (f"the pilot's ψ = {psi:.3g} is below the effect: planned with ψ = {abs(effect):g}, every "
                "discordant set changed one way (optimistic)")
        psi = min(1.0, abs(effect))
    result = _needed(out, "mcnemar", effect, alpha, power, discordant_rate=psi)
    if note:
        result["note"] = "; ".join(n for n in (note, result["note"]) if n)
    return result


def _needed(row: dict[str, Any], design: str, effect: float, alpha: float, power: float, *,
            sd: float | None = None, discordant_rate: float | None = None) -> dict[str, Any]:
    from biasatlas.stats.power import PowerError, units_needed

    if design == "paired_t":
        if row["n"] < 2 or sd is None:
            return {**row, "needed": None, "note": "fewer than 2 pilot pairs: no sd to plan with"}
        if sd <= 1e-12:
            return {**row, "needed": None, "note": "every pilot difference is the same (sd 0): a t-test has "
                    "no spread to plan with"}
    try:
        needed = units_needed(design, effect, alpha, power, sd=sd, discordant_rate=discordant_rate)
    except PowerError as exc:
        return {**row, "needed": None, "note": str(exc)}
    rough = f"a pilot of {row['n']} pairs: a rough estimate" if row["n"] < SMALL_PILOT else None
    return {**row, "needed": needed, "note": rough}


def _beyond_scenarios(row: dict[str, Any]) -> dict[str, Any]:
    """Say so where a samaritan row needs more scenarios than the probe has in that language."""
    from biasatlas.probes.samaritan.data import load_scenarios

    if row["needed"] is None:
        return row
    try:
        available = len(load_scenarios(str(row.get("language"))).scenarios)
    except Exception:  # a language without shipped scenarios (an import): nothing to compare with
        return row
    if row["needed"] <= available:
        return row
    note = (f"more than the {available} scenarios the probe has: only a smaller sd (every rephrasing of a "
            "scenario asked, or more samples) brings the effect within reach")
    return {**row, "note": "; ".join(n for n in (row["note"], note) if n)}
