"""`biasatlas run samaritan` on the shared run options, and `biasatlas samaritan summary`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from biasatlas.cli.main import app
from biasatlas.store import DB_NAME

runner = CliRunner()


def _plan(tmp_path: Path, *args: str) -> dict[str, object]:
    result = runner.invoke(app, ["run", "samaritan", "--study", str(tmp_path), "--plan-only", *args])
    assert result.exit_code == 0, result.output
    plan: dict[str, object] = json.loads(result.stdout)
    return plan


def _keys(value: object) -> list[str]:
    if isinstance(value, dict):
        return [str(k) for k in value] + [k for v in value.values() for k in _keys(v)]
    return []


def test_plan_only_default_has_no_none_keys(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    assert plan["prompts"] == 10300 and plan["languages"] == {"en": 10300}
    assert "None" not in _keys(plan)
    assert not (tmp_path / DB_NAME).exists()  # plan-only calls no model and stores nothing


@pytest.mark.parametrize("langs", [["--lang", "en,de"], ["--lang", "en", "--lang", "de"]])
def test_several_languages_in_one_run(tmp_path: Path, langs: list[str]) -> None:
    plan = _plan(tmp_path, "--category", "age", *langs)
    assert plan["languages"] == {"de": 3296, "en": 3296}
    assert "None" not in _keys(plan)


def test_limit_counts_prompts(tmp_path: Path) -> None:
    plan = _plan(tmp_path, "--category", "gender", "--lang", "en,de", "--limit", "60")
    assert plan["prompts"] == 56  # seven whole scenario rephrasings of 8 prompts
    factors = plan["factors"]
    assert isinstance(factors, dict) and factors["is_control"] == {"False": 49, "True": 7}


def test_seed_changes_the_limit_draw(tmp_path: Path) -> None:
    def scenarios(seed: str) -> object:
        factors = _plan(tmp_path, "--category", "age", "--limit", "40", "--seed", seed)["factors"]
        assert isinstance(factors, dict)
        return factors["scenario"]

    assert scenarios("1") == scenarios("1")
    assert scenarios("1") != scenarios("2")


def test_samples_in_the_plan(tmp_path: Path) -> None:
    plan = _plan(tmp_path, "--category", "age", "--samples", "3")
    assert plan["samples_per_prompt"] == 3 and plan["requests"] == 3 * 3296


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--mode", "choice"], "--mode 'choice' is not valid for samaritan; valid: generate"),
        (["--category", "religion"], "--category 'religion' is not valid for samaritan; valid: race, gender, age"),
        (["--lang", "en,xx"], "--lang 'xx' is not valid for samaritan; valid: "
            "en, de, is, fr, es, it, pt, hi, id, vi, zh, ko"),
        (["--alpha", "2"], "--alpha 2.0: must be between 0 and 1"),
        (["--correction", "fdr"], "--correction 'fdr': valid: bh, by, bonferroni, holm, none"),
        (["--equivalence-margin", "0"], "--equivalence-margin 0.0: must be above 0"),
    ],
)
def test_option_errors_are_one_line(tmp_path: Path, args: list[str], expected: str) -> None:
    result = runner.invoke(app, ["run", "samaritan", "--study", str(tmp_path), "--plan-only", *args])
    assert result.exit_code == 2
    # One error line (rich may wrap it at the console width: compare with whitespace joined).
    assert result.output.startswith("error: ") and "Usage" not in result.output, result.output
    assert expected in " ".join(result.output.split())


@pytest.mark.parametrize(
    ("args", "expected"), [(["--http", "x=y"], "--http"), (["--samples", "0"], "--samples 0"),
                           (["--limit", "0"], "--limit 0")],
)
def test_shared_option_errors_exit_2(tmp_path: Path, args: list[str], expected: str) -> None:
    result = runner.invoke(app, ["run", "samaritan", "--study", str(tmp_path), "--model", "fake:x", *args])
    assert result.exit_code == 2
    assert expected in result.output


def test_run_declares_no_backend_option_itself() -> None:
    import inspect

    from biasatlas.cli import run_samaritan
    from biasatlas.cli.options import SHARED_OPTION_NAMES

    own = set(inspect.signature(run_samaritan.run_samaritan).parameters) - set(SHARED_OPTION_NAMES)
    assert own == {"category", "design", "alpha", "correction", "equivalence_margin"}


def test_summary_without_a_study(tmp_path: Path) -> None:
    result = runner.invoke(app, ["samaritan", "summary", "--study", str(tmp_path / "none")])
    assert result.exit_code == 2 and "no study" in result.output
    bad = runner.invoke(app, ["samaritan", "summary", "--study", str(tmp_path), "--alpha", "0"])
    assert bad.exit_code == 2 and "--alpha 0.0" in bad.output


def test_equivalence_margin_on_run_and_summary(tmp_path: Path) -> None:
    run = runner.invoke(app, ["run", "samaritan", "--study", str(tmp_path), "--model", "fake:m",
                              "--category", "gender", "--limit", "8", "--equivalence-margin", "3"])
    assert run.exit_code == 0, run.output
    recorded = runner.invoke(app, ["samaritan", "summary", "--study", str(tmp_path), "--json"])
    assert json.loads(recorded.stdout)["settings"]["equivalence_margin"] == 3.0
    chosen = runner.invoke(app, ["samaritan", "summary", "--study", str(tmp_path), "--json",
                                 "--equivalence-margin", "1.5"])
    assert json.loads(chosen.stdout)["settings"]["equivalence_margin"] == 1.5
    bad = runner.invoke(app, ["samaritan", "summary", "--study", str(tmp_path), "--equivalence-margin", "-1"])
    assert bad.exit_code == 2 and "--equivalence-margin -1.0: must be above 0" in bad.output
