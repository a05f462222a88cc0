"""Each probe's power model: the MDE a plan states, and the pilot figures `biasatlas power` plans with.

The done-when check of issue 26: `--plan-only` on the README study (contact, German, religion) states a
minimum detectable effect, and an effect planted at it is detected in 80% ± 5% of 400 simulated studies
by the probe's own test (statsmodels' exact McNemar on the prompt sets).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from samaritan_design import design
from scipy.stats import ttest_rel
from statsmodels.stats.contingency_tables import mcnemar

from biasatlas.probes import load_probe
from biasatlas.probes.power import (
    CONTACT_DISCORDANCE,
    SAMARITAN_SD,
    contact_pilot,
    pilot_plan,
    power_plan,
    samaritan_pilot,
)
from biasatlas.records import Prompt
from biasatlas.stats.power import PowerError

STUDIES = 400


@pytest.fixture(scope="module")
def readme_plan() -> dict[str, object]:
    """`biasatlas run contact --model smollm2 --lang de --axis religion --plan-only`'s plan."""
    probe = load_probe("contact")
    config = probe.config(languages=["de"], axes=["religion"])
    return probe.plan_summary(probe.plan(config), config)


def test_readme_plan_states_the_mde_and_a_simulation_detects_it_80_percent(readme_plan: dict) -> None:
    power = readme_plan["power"]
    decision = next(c for c in power["cells"] if c["test"].startswith("McNemar"))
    assert decision["n"] == readme_plan["prompt_sets"] == 210 and decision["alpha"] == 0.05
    assert decision["power"] == 0.8 and "percentage points" in decision["mde_text"]
    assert any("ψ = 0.30 assumed" in a and "paper 001" in a for a in power["assumptions"])
    delta, psi, n = decision["mde"], CONTACT_DISCORDANCE, decision["n"]
    rng = np.random.default_rng(26)
    tables = rng.multinomial(n, [(psi + delta) / 2, (psi - delta) / 2, (1 - psi) / 2, (1 - psi) / 2], size=STUDIES)
    p = np.array([mcnemar([[t[2], t[0]], [t[1], t[3]]], exact=True).pvalue for t in tables])
    assert float(np.mean(p < decision["alpha"])) == pytest.approx(0.8, abs=0.05)


def test_readme_plan_in_choice_mode_also_states_the_log_odds_mde(readme_plan: dict) -> None:
    cells = readme_plan["power"]["cells"]
    t = next(c for c in cells if c["test"].startswith("paired t"))
    assert t["mde_unit"].startswith("d_z") and t["mde"] == pytest.approx(0.1942, abs=1e-3)


def test_samples_add_no_units_and_generate_mode_has_no_probability_test() -> None:
    probe = load_probe("contact")
    config = probe.config(languages=["en"], axes=["ability"], scales=["certainty", "likelihood"], samples=3,
                          mode="generate", limit=300)
    plan = probe.plan_summary(probe.plan(config), config)
    cells = plan["power"]["cells"]
    assert {c["scale"] for c in cells} == {"certainty", "likelihood"}
    assert all(c["test"].startswith("McNemar") for c in cells)
    assert sum(c["n"] for c in cells) == plan["prompt_sets"]  # sets, never samples


def test_too_few_units_say_why_and_no_key_is_none() -> None:
    probe = load_probe("samaritan")
    config = probe.config(languages=["en"], limit=40)
    plan = probe.plan_summary(probe.plan(config), config)
    cells = plan["power"]["cells"]
    assert cells and all(c["n"] == 1 and "mde" not in c and "at least 2" in c["why_none"] for c in cells)
    assert plan["power"]["alpha"] == 0.01  # paper 003's rule, the samaritan default
    assert "None" not in repr(plan)


def test_samaritan_full_plan_mde_on_103_scenarios() -> None:
    from statsmodels.stats.power import TTestPower

    probe = load_probe("samaritan")
    config = probe.config(languages=["en"], categories=["age"], alpha=0.05)
    cell = probe.plan_summary(probe.plan(config), config)["power"]["cells"][0]
    d = TTestPower().solve_power(nobs=103, alpha=0.05, power=0.8)
    assert cell["n"] == 103 and cell["alpha"] == 0.05
    assert cell["mde"] == pytest.approx(round(d * SAMARITAN_SD, 4)) and "rating points" in cell["mde_unit"]
    rng = np.random.default_rng(3)
    control = rng.normal(60, 10, (STUDIES, 103))
    group = control + rng.normal(cell["mde"], SAMARITAN_SD, (STUDIES, 103))
    assert float(np.mean(ttest_rel(group, control, axis=1).pvalue < 0.05)) == pytest.approx(0.8, abs=0.05)


def test_probes_without_a_power_model_plan_without_one() -> None:
    prompt = Prompt(probe="stories", language="en", messages=({"role": "user", "content": "x"},))  # type: ignore[arg-type]
    assert power_plan("stories", [prompt]) is None
    probe = load_probe("stories")
    config = probe.config(languages=["en"], limit=4)
    assert "power" not in probe.plan_summary(probe.plan(config), config)


def _contact_outcomes(sets: int, psi: float, sd_logit: float, seed: int) -> pd.DataFrame:
    """Planted pilot: a share ``psi`` of the sets decide differently under positive contact than under
    none; the per-set change in log-odds has sd ``sd_logit``."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(sets):
        none = float(rng.integers(0, 2))
        positive = 1 - none if rng.random() < psi else none
        base = rng.normal(0, 1)
        shift = rng.normal(0.2, sd_logit)
        for contact, biased, logit in (("none", none, base), ("positive", positive, base + shift),
                                       ("negative", none, base)):
            rows.append({"model": "m", "mode": "choice", "language": "en", "scale": "certainty",
                         "set_id": f"s{s}", "contact": contact, "prompt_id": f"s{s}-{contact}", "sample_index": 0,
                         "biased": biased, "p_biased": 1 / (1 + math.exp(-logit))})
    return pd.DataFrame(rows)


def test_contact_pilot_recovers_planted_discordance_and_sd() -> None:
    rows = contact_pilot(_contact_outcomes(400, 0.25, 0.8, seed=5))
    positive = next(r for r in rows if r["comparison"] == "positive vs none")
    negative = next(r for r in rows if r["comparison"] == "negative vs none")
    assert positive["n"] == 400 and positive["discordance"] == pytest.approx(0.25, abs=0.05)
    assert positive["sd_logit"] == pytest.approx(0.8, rel=0.1)
    assert negative["discordance"] == 0.0 and negative["sd_logit"] == pytest.approx(0.0, abs=1e-9)


def test_pilot_plan_needs_as_many_sets_as_the_power_functions_say() -> None:
    from biasatlas.stats.power import units_needed

    outcomes = _contact_outcomes(400, 0.25, 0.8, seed=5)
    plan = pilot_plan("contact", outcomes, 0.1)
    row = next(r for r in plan["rows"] if r["comparison"] == "positive vs none")
    assert row["needed"] == units_needed("mcnemar", 0.1, 0.05, 0.8, discordant_rate=row["discordance"])
    frozen = next(r for r in plan["rows"] if r["comparison"] == "negative vs none")
    assert frozen["needed"] is None and "ψ = 0" in frozen["note"]
    assert plan["most_needed"] == row["needed"] and plan["unit"] == "prompt sets"
    prob = pilot_plan("contact", outcomes, 0.3, measure="probability")
    row = next(r for r in prob["rows"] if r["comparison"] == "positive vs none")
    assert row["needed"] == units_needed("paired_t", 0.3, 0.05, 0.8, sd=row["sd_logit"])
    frozen = next(r for r in prob["rows"] if r["comparison"] == "negative vs none")
    assert frozen["needed"] is None and "sd 0" in frozen["note"]


def test_samaritan_pilot_recovers_the_planted_sd_of_scenario_differences() -> None:
    noise = 6.0  # per rating; a scenario's difference averages 4 rephrasings of group − control: sd noise/√2
    frame = design({"person": ("control", "control", 0.0), "Woman": ("female", "gender", 3.0)},
                   n_scenarios=300, noise=noise, seed=11)
    (row,) = samaritan_pilot(frame)
    assert row["group"] == "female" and row["n"] == 300
    assert row["sd"] == pytest.approx(noise / math.sqrt(2), rel=0.1)
    plan = pilot_plan("samaritan", frame, 2.0)
    assert plan["rows"][0]["needed"] > 2 and plan["alpha"] == 0.01 and plan["unit"] == "scenarios"


@pytest.mark.parametrize(("probe", "kwargs", "message"), [
    ("stories", {}, "no power model"),
    ("contact", {"measure": "rating"}, "not one of contact's"),
    ("contact", {"effect": 0.0}, "non-zero"),
    ("contact", {"effect": 10.0}, "between -1 and 1"),
])
def test_pilot_plan_questions_without_an_answer(probe: str, kwargs: dict, message: str) -> None:
    effect = kwargs.pop("effect", 0.1)
    with pytest.raises(PowerError, match=message):
        pilot_plan(probe, _contact_outcomes(10, 0.3, 1.0, seed=1), effect, **kwargs)


def test_pilot_without_pairable_answers_is_an_error() -> None:
    empty = _contact_outcomes(5, 0.3, 1.0, seed=1).query("contact == 'none'")
    with pytest.raises(PowerError, match="nothing to plan from"):
        pilot_plan("contact", empty, 0.1)


def test_samaritan_rows_needing_more_scenarios_than_the_probe_has_say_so() -> None:
    frame = design({"person": ("control", "control", 0.0), "Woman": ("female", "gender", 0.0)},
                   n_scenarios=30, noise=20.0, seed=2)
    (row,) = pilot_plan("samaritan", frame, 1.0)["rows"]
    assert row["needed"] > 103 and "more than the 103 scenarios" in row["note"]
    (near,) = pilot_plan("samaritan", frame, 15.0)["rows"]
    assert near["needed"] <= 103 and near["note"] is None
