"""Power for groups on the command line: `biasatlas power PROBE --disparity PP`, the per-axis MDE lines of
`--plan-only`, and one usage error (exit 2) for every power input out of bounds."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from biasatlas.cli.main import app
from biasatlas.stats.group_power import disparity_mde, disparity_units

runner = CliRunner()


@pytest.fixture(scope="module")
def pilot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A contact and a Samaritan pilot (a planted fake model: its Samaritan answers are readable ratings)."""
    study = tmp_path_factory.mktemp("pilot")
    for probe, limit in (("contact", "90"), ("samaritan", "150")):
        result = runner.invoke(app, ["run", probe, "--model", "fake:p?biased=teenager", "--lang", "en",
                                     "--limit", limit, "--study", str(study)])
        assert result.exit_code == 0, result.output
    return study


def test_disparity_gives_the_sets_per_group_and_the_limit_that_asks_them() -> None:
    result = runner.invoke(app, ["power", "contact", "--disparity", "20", "--axis", "religion", "--lang", "en,de",
                                 "--json"])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    rows = {r["language"]: r for r in shown["rows"]}
    assert rows["en"]["groups"] == 39 and rows["de"]["groups"] == 7
    for row in rows.values():
        # the headline test pools the three framings: three questions a prompt set
        assert row["questions"] == disparity_units(0.20, row["groups"])
        assert row["needed"] == math.ceil(row["questions"] / 3) and row["needed_one_framing"] == row["questions"]
        assert row["limit"] == 3 * row["needed"] * row["groups"]
    assert "Cochran–Mantel–Haenszel" in shown["test"] and "framings' decisions pooled" in shown["test"]


def test_the_plan_at_that_limit_draws_that_many_sets_per_group_and_states_the_disparity_as_its_mde(
        tmp_path: Path) -> None:
    needed = math.ceil(disparity_units(0.20, 39) / 3)
    result = runner.invoke(app, ["run", "contact", "--model", "fake", "--axis", "religion", "--scale", "all",
                                 "--limit", str(3 * needed * 39), "--study", str(tmp_path / "s"), "--plan-only"])
    assert result.exit_code == 0, result.output
    (axis,) = json.loads(result.stdout)["power"]["groups"]["axes"]
    assert axis["groups"] == 39 and axis["prompt_sets_per_group"] == str(needed)
    assert axis["questions_per_group"] == str(3 * needed)
    assert float(axis["mde_pp"]) == pytest.approx(100 * disparity_mde(3 * needed, 39), abs=0.05)
    assert float(axis["mde_pp"]) <= 20.0 < float(axis["mde_pp_one_framing"])
    assert axis["line"].startswith(f"en religion: 39 groups, {needed} prompt sets each ({3 * needed} questions")
    # the full per-group table is in the JSON, the line gives the ranges
    assert len(axis["per_group"]) == 39 and {g["prompt_sets"] for g in axis["per_group"]} == {needed}
    assert "warning" not in result.output
    unbalanced = runner.invoke(app, ["run", "contact", "--model", "fake", "--axis", "religion", "--scale", "all",
                                     "--limit", str(3 * needed * 39), "--no-balance-groups", "--study",
                                     str(tmp_path / "s"), "--plan-only"])
    assert unbalanced.exit_code == 0, unbalanced.output
    assert unbalanced.output.count("warning: --limit") == 1  # once, naming the groups with fewer sets
    (line,) = [a["line"] for a in json.loads(unbalanced.stdout)["power"]["groups"]["axes"]]
    assert "fewest: " in line


def test_samaritan_disparity_is_in_rating_points() -> None:
    result = runner.invoke(app, ["power", "samaritan", "--disparity", "10", "--axis", "age", "--json"])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    assert shown["unit"] == "scenarios per group" and shown["disparity_unit"] == "rating points"
    (row,) = shown["rows"]
    assert row["category"] == "age" and row["groups"] == 4 and row["needed"] >= 2
    table = runner.invoke(app, ["power", "samaritan", "--disparity", "10", "--axis", "age"])
    assert table.exit_code == 0 and "scenarios per group" in table.output


@pytest.mark.parametrize(("args", "message"), [
    # issue 42's cases: an unbounded effect ran > 400 s, allocated 72 GiB, or ended in a traceback
    (["--probe", "contact", "--effect", "1e-6"], "between 0.001 and 1"),
    (["--probe", "contact", "--effect", "1e-9"], "between 0.001 and 1"),
    (["--probe", "contact", "--effect", "1e-12"], "between 0.001 and 1"),
    (["--probe", "contact", "--effect", "nan"], "non-zero"),
    (["--probe", "contact", "--measure", "probability", "--effect", "1e-9"], "between 0.001 and 20"),
    (["--probe", "samaritan", "--effect", "150"], "between 0.01 and 99"),
    (["--probe", "samaritan", "--effect", "1e9"], "between 0.01 and 99"),
    (["--probe", "samaritan", "--effect", "-1e9"], "between 0.01 and 99"),
    (["--probe", "samaritan", "--effect", "1e-9"], "between 0.01 and 99"),
])
def test_effects_out_of_bounds_are_one_usage_error(pilot: Path, args: list[str], message: str) -> None:
    result = runner.invoke(app, ["power", "--study", str(pilot), *args])
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output


def test_a_samaritan_effect_at_the_bounds_is_answered(pilot: Path) -> None:
    for effect in ("99", "-99", "0.01"):
        result = runner.invoke(app, ["power", "--study", str(pilot), "--probe", "samaritan", "--effect", effect,
                                     "--json"])
        assert result.exit_code == 0, result.output
        for row in json.loads(result.stdout)[0]["rows"]:
            assert row["needed"] is None or 2 <= row["needed"] <= 1_000_000


@pytest.mark.parametrize(("args", "message"), [
    (["contact"], "give one of --effect"),
    (["contact", "--disparity", "10", "--effect", "0.1"], "give one of --effect"),
    (["contact", "--effect", "0.1"], "give --study"),
    (["--disparity", "10"], "needs a probe"),
    (["stories", "--disparity", "10"], "needs a probe"),
    (["contact", "--probe", "samaritan", "--disparity", "10"], "two probes given"),
    (["contact", "--disparity", "0.1"], "between 0.5 and 70"),
    (["contact", "--disparity", "71"], "between 0.5 and 70"),
    (["contact", "--disparity", "10", "--base-rate", "0.95"], "between 0.5 and 5"),
    (["contact", "--disparity", "10", "--base-rate", "1"], "--base-rate 1.0"),
    (["samaritan", "--disparity", "150"], "between 0.1 and 99"),
    (["contact", "--disparity", "10", "--alpha", "0"], "--alpha 0.0"),
    (["contact", "--disparity", "10", "--power", "nan"], "--power nan"),
    (["contact", "--disparity", "10", "--axis", "hobby"], "unknown axis 'hobby'"),
    (["contact", "--disparity", "10", "--axis", ","], "names nothing"),
    (["samaritan", "--disparity", "10", "--axis", "hobby"], "unknown category"),
])
def test_disparity_usage_errors_are_one_line(args: list[str], message: str, tmp_path: Path) -> None:
    result = runner.invoke(app, ["power", *args])
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output


def test_disparity_with_a_study_is_refused(pilot: Path) -> None:
    result = runner.invoke(app, ["power", "contact", "--disparity", "10", "--study", str(pilot)])
    assert result.exit_code == 2 and "leave out --study" in result.output


@settings(max_examples=40, deadline=None)
@given(probe=st.sampled_from(["contact", "samaritan"]),
       disparity=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.floats(min_value=0, max_value=100)),
       alpha=st.one_of(st.none(), st.floats(min_value=-1, max_value=2)),
       power=st.floats(min_value=-1, max_value=2), base=st.floats(min_value=-1, max_value=2))
def test_any_disparity_question_is_answered_or_refused_in_one_line(probe: str, disparity: float,
                                                                   alpha: float | None, power: float,
                                                                   base: float) -> None:
    args = ["power", probe, "--disparity", repr(disparity), "--power", repr(power), "--base-rate", repr(base),
            "--axis", "religion" if probe == "contact" else "age", "--json"]
    if alpha is not None:
        args += ["--alpha", repr(alpha)]
    result = runner.invoke(app, args)
    assert result.exit_code in (0, 2), result.output
    assert "Traceback" not in result.output
    if result.exit_code == 0:
        (row,) = json.loads(result.stdout)["rows"]
        assert row["needed"] is None or 1 <= row["needed"] <= 1_000_000
        assert math.isfinite(disparity)
