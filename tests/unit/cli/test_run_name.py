"""`biasatlas run PROBE --name TEXT`: the model's display name in the study, its summary and its report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from biasatlas.cli.main import app
from biasatlas.display import display_names
from biasatlas.store import Store

runner = CliRunner()
NAME = "SmolLM2 <135M> base"


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("named") / "study"
    result = runner.invoke(app, ["run", "contact", "--study", str(path), "--model", "fake:alpha", "--name", NAME,
                                 "--lang", "en", "--axis", "religion", "--limit", "6", "--no-progress"])
    assert result.exit_code == 0, result.output
    assert runner.invoke(app, ["report", "--study", str(path)]).exit_code == 0
    return path


def test_the_name_is_stored_as_the_models_display_name(study: Path) -> None:
    with Store(study) as store:
        assert display_names(store.conn) == {"fake:alpha": NAME}
        config = json.loads(store.runs()["config_json"].iloc[-1])
    assert config["display_name"] == NAME and "audit" not in config


def test_the_summary_names_the_model(study: Path) -> None:
    result = runner.invoke(app, ["summary", "--study", str(study), "--json"])
    assert result.exit_code == 0, result.output
    assert NAME in result.stdout


def test_the_report_names_the_model(study: Path) -> None:
    page = (study / "report.html").read_text(encoding="utf-8")
    assert "SmolLM2 &lt;135M&gt; base" in page and NAME not in page  # shown, and escaped
    runs = next((study / "report_files").glob("*-runs-*.csv")).read_text(encoding="utf-8")
    assert NAME in runs


def test_every_run_command_takes_name() -> None:
    root: Any = typer.main.get_command(app)
    for name, command in root.commands["run"].commands.items():
        assert "name" in {p.name for p in command.params}, name


@pytest.mark.parametrize("value", ["", "   "])
def test_an_empty_name_is_a_usage_error(value: str, tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", "contact", "--study", str(tmp_path / "s"), "--model", "fake:a",
                                 "--name", value, "--limit", "3"])
    assert result.exit_code == 2 and "--name" in result.output
    assert not (tmp_path / "s").exists()
