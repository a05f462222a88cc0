"""``--design paper`` on the run commands: what it sets is printed; a value it fixes otherwise is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from biasatlas.cli.design import say_design
from biasatlas.cli.main import app

runner = CliRunner()


def test_say_design_prints_every_value_the_design_sets(capsys: pytest.CaptureFixture[str]) -> None:
    say_design("contact", "paper", {"languages": ["de", "is"], "limit": 30})
    err = capsys.readouterr().err
    assert err.startswith("design paper sets: --lang de,is (Ikae et al.); --axis nationality,religion; ")
    assert "--temperature 0.3" in err and "Wähle zwischen Ja und Nein" in err


def test_run_contact_design_refuses_what_the_paper_fixes_otherwise(tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", "contact", "--design", "paper", "--scale", "certainty", "--model", "fake:a",
                                 "--plan-only", "--study", str(tmp_path / "s")])
    assert result.exit_code == 2
    assert "--design paper: --scale certainty differs from Raj et al. 2024's design" in result.output
    bad = runner.invoke(app, ["run", "contact", "--design", "theirs", "--model", "fake:a", "--plan-only",
                              "--study", str(tmp_path / "s")])
    assert bad.exit_code == 2 and "--design 'theirs': valid: paper" in bad.output


def test_run_samaritan_design_prints_the_papers_rule_and_refuses_another(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    say_design("samaritan", "paper", {"categories": None, "alpha": 0.01})
    err = capsys.readouterr().err
    assert "--temperature 1.0" in err and "paired t-test at --alpha 0.01, --correction none" in err
    result = runner.invoke(app, ["run", "samaritan", "--design", "paper", "--correction", "holm", "--model",
                                 "fake:a", "--plan-only", "--study", str(tmp_path / "s")])
    assert result.exit_code == 2 and "--correction holm differs from the paper's design (none)" in result.output
