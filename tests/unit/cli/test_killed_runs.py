"""`summary` and `export` after a run was killed (or while one is still writing): no traceback; the run
reads as interrupted, with what is pending and the command that resumes it."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import openai_stub as stub_mod  # tests/integration/servers/, on pytest's pythonpath (pyproject.toml)
import pytest
from typer.testing import CliRunner

from biasatlas.cli.main import app
from biasatlas.cli.pending import unfinished_runs
from biasatlas.store import DB_NAME, Store

runner = CliRunner()
RUN = ["run", "contact", "--model", "fake:x", "--lang", "en", "--axis", "ability"]
BIASATLAS = str(Path(sys.executable).parent / "biasatlas")


def _kill_the_last_run(study: Path, unanswered: int, noted: bool = True) -> int:
    """Make the study's last run look as a SIGKILL leaves it: no end, only the plan's size in its totals
    (``noted``; an older biasatlas left none), ``unanswered`` of its answers not yet stored; returns how
    many of its items are pending."""
    with sqlite3.connect(study / DB_NAME) as conn:
        run_id, totals = conn.execute("SELECT run_id, totals_json FROM runs ORDER BY run_id DESC").fetchone()
        start = json.dumps({"planned": json.loads(totals)["planned"], "status": "running"}) if noted else None
        conn.execute("UPDATE runs SET finished_at = NULL, totals_json = ?, status = 'running' WHERE run_id = ?",
                     (start, run_id))
        conn.execute("DELETE FROM responses WHERE key IN (SELECT key FROM run_items WHERE run_id = ? AND key NOT IN"
                     " (SELECT key FROM run_items WHERE run_id < ?) LIMIT ?)", (run_id, run_id, unanswered))
        return int(conn.execute("SELECT COUNT(*) FROM run_items i LEFT JOIN responses r ON r.key = i.key"
                                " WHERE i.run_id = ? AND r.key IS NULL", (run_id,)).fetchone()[0])


def _as_typed(*args: str) -> int:
    """Run the CLI in-process as the console script would: the run records ``sys.argv`` as its resume command
    (in a test it would be pytest's, which differs between a plain and an xdist run)."""
    from unittest import mock

    with mock.patch.object(sys, "argv", ["biasatlas", *args]):
        return runner.invoke(app, list(args)).exit_code


def _study(tmp_path: Path, noted: bool = True) -> tuple[Path, int]:
    study = tmp_path / "s"
    assert _as_typed(*RUN, "--limit", "6", "--study", str(study)) == 0
    assert _as_typed(*RUN, "--limit", "30", "--study", str(study)) == 0
    return study, _kill_the_last_run(study, 12, noted)


@pytest.mark.parametrize("noted", [True, False])
def test_summary_after_a_killed_run_says_interrupted_pending_and_resume(tmp_path: Path, noted: bool) -> None:
    study, pending = _study(tmp_path, noted)
    result = runner.invoke(app, ["summary", "--study", str(study)])
    assert result.exit_code == 0, result.output
    line = next(line for line in result.output.splitlines() if line.startswith("unfinished"))
    at_least = "" if noted else "at least "  # an older biasatlas did not note the plan's size
    assert f"run 2 of contact on fake:x interrupted, {at_least}{pending} pending" in line
    assert f"Resume with: biasatlas {' '.join(RUN)} --limit 30 --study {study}" in line
    assert "last run None" not in result.output and "last run 2: planned 30" in result.output
    data = json.loads(runner.invoke(app, ["summary", "--study", str(study), "--json"]).output)
    assert data["contact"]["last_run"]["status"] == "interrupted"
    assert [(r["status"], r["pending"]) for r in data["unfinished_runs"]] == [("interrupted", pending)]


def test_export_after_a_killed_run_exports_it(tmp_path: Path) -> None:
    study, _ = _study(tmp_path)
    result = runner.invoke(app, ["export", "--study", str(study), "--to", str(tmp_path / "out"), "--format", "csv"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "answers_contact.csv").is_file()


def test_report_after_a_killed_run_shows_it_interrupted(tmp_path: Path) -> None:
    study, _ = _study(tmp_path)
    result = runner.invoke(app, ["report", "--study", str(study)])
    assert result.exit_code == 0, result.output
    runs = next((study / "report_files").glob("*-runs*.csv")).read_text(encoding="utf-8").splitlines()
    assert ",interrupted," in runs[2] and ",complete," in runs[1]  # the report's table of runs


def _count(db: Path, sql: str) -> int:
    try:
        with sqlite3.connect(db) as conn:
            return int(conn.execute(sql).fetchone()[0])
    except sqlite3.Error:
        return 0


def test_sigkill_mid_run_then_summary_counts_what_the_resume_asks(tmp_path: Path) -> None:
    """The real thing: a run SIGKILLed before it recorded all of its plan (a chunk at a time), then
    `summary`: the pending count is what the resume then asks (not only the recorded part's)."""
    study = tmp_path / "study"
    db = study / DB_NAME
    env = {**os.environ, "OPENAI_API_KEY": ""}
    with stub_mod.start_stub("--delay", "0.05") as server:
        args = ["run", "contact", "--study", str(study), "--model", "openai:stub-model", "--base-url", server.url,
                "--limit", "600", "--mode", "generate", "--structured", "off"]
        proc = subprocess.Popen([BIASATLAS, *args, "--concurrency", "2"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env=env)
        deadline = time.monotonic() + 60
        while _count(db, "SELECT COUNT(*) FROM responses") < 10 and time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert _count(db, "SELECT COUNT(*) FROM run_items") < 600  # killed before its whole plan was recorded
        with Store(study) as store:  # what `summary` prints (test_summary_after_a_killed_run_...)
            unfinished = unfinished_runs(store)
        resumed = subprocess.run([BIASATLAS, *args, "--concurrency", "64"], capture_output=True, text=True, env=env,
                                 timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    with sqlite3.connect(db) as conn:
        totals = json.loads(conn.execute("SELECT totals_json FROM runs ORDER BY run_id DESC").fetchone()[0])
    assert [(r["status"], r["planned"], r["pending"]) for r in unfinished] == [
        ("interrupted", 600, totals["new"] + totals["failed"])]
