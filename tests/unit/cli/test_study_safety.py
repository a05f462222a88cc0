"""Study paths that cannot be used give one line and exit 2; nothing is written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from biasatlas.cli.main import app

runner = CliRunner()
RUN = ["run", "contact", "--model", "fake:x", "--lang", "en", "--axis", "ability", "--limit", "6"]


def _one_line_error(result) -> str:  # type: ignore[no-untyped-def]
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    return lines[0]


def test_run_into_a_file(tmp_path: Path) -> None:
    target = tmp_path / "study"
    target.write_text("not a study")
    line = _one_line_error(runner.invoke(app, [*RUN, "--study", str(target)]))
    assert "is a file" in line
    assert target.read_text() == "not a study"


def test_truncated_database(tmp_path: Path) -> None:
    study = tmp_path / "s"
    assert runner.invoke(app, [*RUN, "--study", str(study)]).exit_code == 0
    db = study / "biasatlas.db"
    data = db.read_bytes()
    db.write_bytes(b"garbage" + data[7:50])
    for args in (["summary", "--study", str(study)], ["report", "--study", str(study)], [*RUN, "--study", str(study)]):
        line = _one_line_error(runner.invoke(app, args))
        assert "not a readable biasatlas database" in line


def test_report_path_is_a_directory(tmp_path: Path) -> None:
    study = tmp_path / "s"
    assert runner.invoke(app, [*RUN, "--study", str(study)]).exit_code == 0
    (study / "report.html").mkdir()
    line = _one_line_error(runner.invoke(app, ["report", "--study", str(study)]))
    assert "report.html" in line and "--out" in line


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write to read-only files")
def test_run_into_a_read_only_study(tmp_path: Path) -> None:
    study = tmp_path / "s"
    assert runner.invoke(app, [*RUN, "--study", str(study)]).exit_code == 0
    os.chmod(study / "biasatlas.db", 0o444)
    os.chmod(study, 0o555)
    try:
        line = _one_line_error(runner.invoke(app, [*RUN, "--seed", "1", "--study", str(study)]))
        assert "read-only" in line
    finally:
        os.chmod(study, 0o755)
