"""`biasatlas power --study DIR --effect X`: units needed from a pilot study, and its one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from biasatlas.cli.main import app
from biasatlas.probes import load_probe
from biasatlas.probes.power import pilot_plan
from biasatlas.store import Store

runner = CliRunner()


@pytest.fixture(scope="module")
def pilot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A contact pilot answered by the scripted fake backend (seeded options: decisions that move)."""
    study = tmp_path_factory.mktemp("pilot")
    result = runner.invoke(app, ["run", "contact", "--model", "fake:a", "--lang", "en", "--limit", "90",
                                 "--study", str(study)])
    assert result.exit_code == 0, result.output
    return study


def test_json_gives_the_units_the_pilot_plan_gives(pilot: Path) -> None:
    result = runner.invoke(app, ["power", "--study", str(pilot), "--effect", "0.2", "--json"])
    assert result.exit_code == 0, result.output
    (shown,) = json.loads(result.stdout)
    with Store(pilot) as store:
        expected = pilot_plan("contact", load_probe("contact").outcomes(store), 0.2)
    assert shown == json.loads(json.dumps(expected))
    rows = shown["rows"]
    assert {r["comparison"] for r in rows} == {"positive vs none", "negative vs none"}
    assert all(r["n"] == 30 and r["needed"] > 30 for r in rows if r["discordance"])


def test_table_names_the_unit_and_the_probability_measure(pilot: Path) -> None:
    result = runner.invoke(app, ["power", "--study", str(pilot), "--effect", "0.5", "--measure", "probability",
                                 "--alpha", "0.01", "--power", "0.9"])
    assert result.exit_code == 0, result.output
    assert "prompt sets needed" in result.output and "alpha 0.01, power 0.9" in result.output
    assert "sd of the differences" in result.output


@pytest.mark.parametrize(("args", "message"), [
    (["--probe", "stories"], "without a power model"),
    (["--probe", "nosuch"], "not a probe"),
    (["--probe", "samaritan"], "holds no samaritan answers"),
    (["--measure", "rating"], "not one of contact's"),
    (["--effect", "0"], "non-zero"),
    (["--effect", "12"], "between -1 and 1"),
    (["--alpha", "2"], "--alpha 2.0"),
    (["--power", "1"], "--power 1.0"),
])
def test_errors_are_one_line(pilot: Path, args: list[str], message: str) -> None:
    base = ["power", "--study", str(pilot), "--effect", "0.1"]
    result = runner.invoke(app, [*base, *args])
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output


def test_no_study_and_an_empty_study(tmp_path: Path) -> None:
    result = runner.invoke(app, ["power", "--study", str(tmp_path / "none"), "--effect", "0.1"])
    assert result.exit_code == 2 and "no study at" in result.output
    Store(tmp_path).close()  # an empty study: the schema, no answers
    result = runner.invoke(app, ["power", "--study", str(tmp_path), "--effect", "0.1"])
    assert result.exit_code == 2 and "no answers of a probe with a power model" in result.output


def test_readme_study_plan_only_prints_a_minimum_detectable_effect(tmp_path: Path) -> None:
    """The README's command with --plan-only (no model is loaded) prints the MDE per cell; the MDE itself is
    checked against a simulation in tests/unit/probes/test_power.py."""
    study = tmp_path / "de-religion"
    result = runner.invoke(app, ["run", "contact", "--model", "smollm2", "--lang", "de", "--axis", "religion",
                                 "--study", str(study), "--plan-only"])
    assert result.exit_code == 0, result.output
    power = json.loads(result.stdout)["power"]
    decision = power["cells"][0]
    assert (decision["language"], decision["scale"], decision["n"]) == ("de", "certainty", 210)
    assert decision["mde"] == pytest.approx(0.1085, abs=5e-4) and decision["alpha"] == 0.05
    assert decision["mde_text"].startswith("10.9 percentage points")
    assert power["power"] == 0.8 and any("ψ = 0.30 assumed" in a for a in power["assumptions"])
    assert not study.exists()
