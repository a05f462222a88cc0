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


def _damage_pages(db: Path) -> bytes:
    """Overwrite every page but the first (the schema) with garbage: a damaged file, not a truncated one."""
    data = bytearray(db.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    assert len(data) >= 3 * page
    data[page:] = bytes((i * 37 + 11) % 251 for i in range(len(data) - page))
    db.write_bytes(bytes(data))
    return bytes(data)


def test_damaged_database_is_one_line_everywhere_and_run_writes_nothing(tmp_path: Path) -> None:
    study = tmp_path / "s"
    assert runner.invoke(app, [*RUN, "--study", str(study)]).exit_code == 0
    db = study / "biasatlas.db"
    assert not (study / "biasatlas.db-wal").exists()  # checkpointed: the file holds everything
    damaged = _damage_pages(db)
    out = tmp_path / "export"
    for args in ([*RUN, "--seed", "1", "--study", str(study)], ["summary", "--study", str(study)],
                 ["summary", "--json", "--study", str(study)], ["report", "--study", str(study)],
                 ["export", "--study", str(study), "--to", str(out), "--format", "csv"]):
        line = _one_line_error(runner.invoke(app, args))
        assert "damaged" in line and str(db) in line, (args, line)
    assert db.read_bytes() == damaged
    assert not (study / "biasatlas.db-wal").exists() or (study / "biasatlas.db-wal").stat().st_size == 0
    assert not out.exists()


def test_export_of_a_study_from_a_newer_biasatlas_is_one_line(tmp_path: Path) -> None:
    import sqlite3

    study = tmp_path / "s"
    assert runner.invoke(app, [*RUN, "--study", str(study)]).exit_code == 0
    with sqlite3.connect(study / "biasatlas.db") as conn:
        conn.execute("INSERT INTO schema_migrations VALUES (99, 'later')")
    line = _one_line_error(runner.invoke(app, ["export", "--study", str(study), "--to", str(tmp_path / "out")]))
    assert "schema version 99" in line and "upgrade biasatlas" in line
    assert not (tmp_path / "out").exists()


def test_damaged_read_only_study_is_one_line_for_the_readers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    study = tmp_path / "s"
    assert runner.invoke(app, [*RUN, "--study", str(study)]).exit_code == 0
    db = study / "biasatlas.db"
    damaged = _damage_pages(db)
    monkeypatch.setattr("biasatlas.store._writable", lambda path: False)  # as on a read-only mount: no check
    for args in (["summary", "--study", str(study)],
                 ["report", "--study", str(study), "--out", str(tmp_path / "r.html")],
                 ["export", "--study", str(study), "--to", str(tmp_path / "out"), "--format", "csv"]):
        line = _one_line_error(runner.invoke(app, args))
        assert "damaged" in line and str(db) in line, (args, line)
    assert db.read_bytes() == damaged


def test_debias_into_a_damaged_study_is_one_line(tmp_path: Path) -> None:
    study = tmp_path / "s"
    assert runner.invoke(app, [*RUN, "--study", str(study)]).exit_code == 0
    damaged = _damage_pages(study / "biasatlas.db")
    result = runner.invoke(app, ["debias", "--limit", "12", "--no-qa", "--study", str(study)])
    assert result.exit_code == 2, result.output  # after the plan's line ("setting 1 (mixed): ..."), no model loaded
    assert result.output.splitlines()[-1].startswith("error: ") and "damaged" in result.output.splitlines()[-1]
    assert (study / "biasatlas.db").read_bytes() == damaged
