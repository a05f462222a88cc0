"""The Samaritan summary, the leakage analyses and the stories commands (associations, judge, compare) check a
study path as every other command does (require_study): a file, a damaged database and a missing study are
one line each, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from biasatlas.cli.main import app
from biasatlas.store import DB_NAME

COMMANDS = {
    "samaritan summary": (["samaritan", "summary"], "run a probe first"),
    "leakage fit": (["leakage", "fit"], "run `biasatlas run leakage` first"),
    "associations": (["associations"], "run `biasatlas run stories` first"),
}


@pytest.mark.parametrize("name", COMMANDS)
def test_a_missing_study_names_what_to_run_first(tmp_path: Path, name: str) -> None:
    args, first = COMMANDS[name]
    result = CliRunner().invoke(app, [*args, "--study", str(tmp_path / "none")])
    assert result.exit_code == 2, result.output
    assert f"no study at {tmp_path / 'none'}" in result.output and first in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("name", COMMANDS)
def test_a_file_or_a_damaged_database_is_one_line(tmp_path: Path, name: str) -> None:
    args, _ = COMMANDS[name]
    (tmp_path / "file").write_text("x", encoding="utf-8")
    result = CliRunner().invoke(app, [*args, "--study", str(tmp_path / "file")])
    assert result.exit_code == 2 and "is a file, not a directory" in result.output, result.output
    (tmp_path / "damaged").mkdir()
    (tmp_path / "damaged" / DB_NAME).write_bytes(b"not a database at all" * 100)
    result = CliRunner().invoke(app, [*args, "--study", str(tmp_path / "damaged")])
    assert result.exit_code == 2 and "is not a readable biasatlas database" in result.output, result.output
    assert "Traceback" not in result.output
