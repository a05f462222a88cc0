"""Every `biasatlas run PROBE` command (and `biasatlas debias`) takes the same shared options."""

from __future__ import annotations

from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from biasatlas.cli.main import app
from biasatlas.cli.option_table import NAMED
from biasatlas.cli.options import SHARED_OPTION_NAMES

runner = CliRunner()


def _root() -> Any:
    command = typer.main.get_command(app)
    assert hasattr(command, "commands")  # a group (typer may bundle its own click)
    return command


def _run_commands() -> dict[str, Any]:
    root = _root()
    run = root.commands["run"]
    commands = dict(run.commands)
    commands["debias"] = root.commands["debias"]
    return commands


def test_every_probe_has_a_run_command() -> None:
    from biasatlas.probes import PROBE_MODULES

    run_names = set(_run_commands())
    assert set(PROBE_MODULES) <= run_names


@pytest.mark.parametrize("name", sorted(_run_commands()))
def test_run_command_takes_every_shared_option(name: str) -> None:
    command = _run_commands()[name]
    params = {p.name: p for p in command.params}
    shared = [opt for opt in SHARED_OPTION_NAMES if name != "debias" or opt not in NAMED]  # --name: run PROBE
    missing = [opt for opt in shared if opt not in params]
    assert not missing, f"`run {name}` lacks shared options {missing}"
    # declared once: the same flags and help everywhere
    reference = _run_commands()["contact"]
    ref = {p.name: p for p in reference.params}
    for opt in shared:
        assert params[opt].opts == ref[opt].opts, (name, opt)
        assert getattr(params[opt], "help", None) == getattr(ref[opt], "help", None), (name, opt)


@pytest.mark.parametrize("name", ["contact", "samaritan", "stories", "leakage"])
def test_plan_only_accepts_comma_separated_languages_and_limit(name: str, tmp_path) -> None:
    langs = {"contact": "en,de", "samaritan": "en,de", "stories": "en,fr", "leakage": "en,ru"}[name]
    # samaritan keeps a scenario rephrasing's control and 24 group prompts together (25 a unit)
    limit = 100 if name == "samaritan" else 40
    result = runner.invoke(app, ["run", name, "--study", str(tmp_path / "s"), "--lang", langs,
                                 "--limit", str(limit), "--plan-only"])
    assert result.exit_code == 0, result.output
    import json

    plan = json.loads(result.stdout)
    assert set(plan["languages"]) == set(langs.split(","))
    assert 0 < plan["prompts"] <= limit
    assert "None" not in result.stdout


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--limit", "-5"], "--limit"),
        (["--samples", "0"], "--samples"),
        (["--max-tokens", "0"], "--max-tokens"),
        (["--temperature", "-3"], "--temperature"),
        (["--mode", "sing"], "--mode"),
        (["--http", "bogus"], "--http"),
        (["--lang", "xx"], "--lang"),
        (["--lang", ","], "--lang"),  # issue 42.16: an empty list silently meant the default languages
        (["--lang", " , "], "--lang"),
        (["--axis", ","], "--axis"),
    ],
)
def test_bad_option_is_one_line_exit_2(args: list[str], needle: str, tmp_path) -> None:
    result = runner.invoke(app, ["run", "contact", "--study", str(tmp_path / "s"), *args, "--plan-only"])
    assert result.exit_code == 2, result.output
    assert needle in result.output


def test_version() -> None:
    from biasatlas import __version__

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.strip() == f"biasatlas {__version__}"


def test_stories_judge_takes_a_fleet(tmp_path) -> None:
    """`stories judge` asks for the fleet name with several --base-url, so it must take --fleet."""
    from biasatlas.store import Store

    study = tmp_path / "s"
    Store(study).close()
    urls = ["--base-url", "http://127.0.0.1:9/v1", "--base-url", "http://127.0.0.1:10/v1"]
    result = runner.invoke(app, ["stories", "judge", "--study", str(study), *urls])
    assert result.exit_code == 2 and "--fleet" in result.output, result.output
    result = runner.invoke(app, ["stories", "judge", "--study", str(study), *urls, "--fleet", "pool"])
    assert result.exit_code == 2, result.output
    assert "no such option" not in result.output.lower() and "extracted story profiles" in result.output
