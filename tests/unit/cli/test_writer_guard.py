"""No writer writes over a study database, any SQLite file or a study's own files; `readers sample --out`
keeps an existing labels file unless --force. Each refusal is one line, exit 2, and the target is untouched."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from biasatlas.backends.fake import FakeBackend
from biasatlas.cli.main import app
from biasatlas.records import Request

runner = CliRunner()


def _one_line_error(result) -> str:  # type: ignore[no-untyped-def]
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    return " ".join(lines[0].split())


def _answer(self: FakeBackend, request: Request) -> str:
    return "Yes." if int(request.prompt.id, 16) % 2 else "No."


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("guard") / "study"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(FakeBackend, "_answer", _answer)
        result = runner.invoke(app, ["run", "contact", "--study", str(path), "--model", "fake:x", "--lang", "en",
                                     "--mode", "generate", "--limit", "10", "--no-progress"])
    assert result.exit_code == 0, result.output
    return path


def test_readers_sample_keeps_a_filled_labels_file_unless_forced(study: Path, tmp_path: Path) -> None:
    out = tmp_path / "labels.csv"
    sample = ["readers", "sample", "--study", str(study), "--n", "4", "--out", str(out)]
    assert runner.invoke(app, sample).exit_code == 0
    out.write_text(out.read_text(encoding="utf-8") + "89 human labels\n", encoding="utf-8")
    before = out.read_bytes()
    line = _one_line_error(runner.invoke(app, sample))
    assert "exists" in line and "--force" in line and out.read_bytes() == before
    assert runner.invoke(app, [*sample, "--force"]).exit_code == 0
    assert out.read_bytes() != before


def test_readers_sample_creates_the_parent_folder(study: Path, tmp_path: Path) -> None:
    out = tmp_path / "new" / "deeper" / "labels.csv"
    result = runner.invoke(app, ["readers", "sample", "--study", str(study), "--n", "3", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert out.is_file() and (out.parent / "labels.csv.md").is_file()


@pytest.mark.parametrize("command", [
    ["readers", "sample", "--n", "3", "--force"],
    ["report", "--no-files"],
])
def test_no_writer_replaces_the_study_database(study: Path, command: list[str]) -> None:
    db = study / "biasatlas.db"
    before = db.read_bytes()
    line = _one_line_error(runner.invoke(app, [*command, "--study", str(study), "--out", str(db)]))
    assert "database" in line and db.read_bytes() == before
    with sqlite3.connect(db) as conn:  # still the study
        assert conn.execute("SELECT count(*) FROM runs").fetchone()[0] >= 1


@pytest.mark.parametrize("command", [
    ["readers", "sample", "--n", "3", "--force"],
    ["report", "--no-files"],
])
def test_no_writer_replaces_any_sqlite_file_nor_a_study_file(study: Path, tmp_path: Path, command: list[str]) -> None:
    other = tmp_path / "notes.csv"  # any SQLite file, whatever its name
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE t (x)")
    before = other.read_bytes()
    line = _one_line_error(runner.invoke(app, [*command, "--study", str(study), "--out", str(other)]))
    assert "SQLite" in line and other.read_bytes() == before
    lock = study / ".writer.lock"
    existed = lock.exists()
    line = _one_line_error(runner.invoke(app, [*command, "--study", str(study), "--out", str(lock)]))
    assert "study" in line and lock.exists() == existed


def test_guard_refuses_what_it_must_and_passes_the_rest(tmp_path: Path) -> None:
    import typer

    from biasatlas.cli.outputs import check_output_file

    plain = tmp_path / "plain.csv"
    check_output_file(plain, replace=False)  # a new file: fine
    plain.write_text("a,b\n")
    check_output_file(plain, replace=True)
    with pytest.raises(typer.Exit):
        check_output_file(plain, replace=False)
    with pytest.raises(typer.Exit):
        check_output_file(tmp_path, replace=True)  # a directory
    for name in ("biasatlas.db", "biasatlas.db-wal", "biasatlas.db-shm", "biasatlas.db-journal", ".writer.lock"):
        with pytest.raises(typer.Exit):
            check_output_file(tmp_path / name, replace=True)


def test_folder_writers_refuse_a_file_as_their_folder(study: Path, tmp_path: Path) -> None:
    db = study / "biasatlas.db"
    before = db.read_bytes()
    jsonl = tmp_path / "in.jsonl"
    jsonl.write_text("")
    for command in (["batch", "run", "--in", str(jsonl), "--out", str(db), "--base-url", "http://127.0.0.1:9/v1"],
                    ["leakage", "export", "--study", str(study), "--out", str(db)]):
        line = _one_line_error(runner.invoke(app, command))
        assert "not a folder" in line
    assert db.read_bytes() == before


def test_leakage_aggregate_never_writes_over_a_database(study: Path, tmp_path: Path) -> None:
    db = study / "biasatlas.db"
    before = db.read_bytes()
    ratings = tmp_path / "ratings.json"
    ratings.write_text("{}")
    line = _one_line_error(runner.invoke(app, ["leakage", "aggregate", str(ratings), "--lang", "en", "--out", str(db)]))
    assert "SQLite" in line and db.read_bytes() == before
