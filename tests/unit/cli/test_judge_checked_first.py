"""`--judge-model` is checked before anything is asked, as the answering model is (not after an hours-long run)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from biasatlas.cli.main import app

runner = CliRunner()
RUN = ["run", "contact", "--model", "fake:a", "--lang", "en", "--axis", "religion", "--limit", "3",
       "--mode", "generate", "--reader", "judge", "--no-progress"]


@pytest.mark.parametrize("judge", ["local:/nonexistent/judge.gguf", "nosuchbackend:x"])
def test_an_unusable_judge_stops_the_run_before_any_answer_is_asked(tmp_path: Path, judge: str) -> None:
    study = tmp_path / "study"
    result = runner.invoke(app, [*RUN, "--study", str(study), "--judge-model", judge])
    assert result.exit_code == 2, result.output
    assert "judge" in result.output.lower()
    if (study / "biasatlas.db").exists():
        with sqlite3.connect(study / "biasatlas.db") as conn:
            assert conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 0


def test_plan_only_checks_the_judge_too(tmp_path: Path) -> None:
    result = runner.invoke(app, [*RUN, "--study", str(tmp_path / "s"), "--judge-model", "local:/nonexistent/j.gguf",
                                 "--plan-only"])
    assert result.exit_code == 2, result.output
