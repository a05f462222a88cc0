"""A run killed before it could record its end (SIGKILL, power loss) or still being written by another
process reads as such from the store: its status, and what it planned, answered and left pending."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from biasatlas.backends.fake import FakeBackend
from biasatlas.lock import LOCK_NAME
from biasatlas.records import GenerationSettings, Message, Prompt
from biasatlas.runner import run_plan
from biasatlas.store import Store


def _prompts(n: int) -> list[Prompt]:
    return [
        Prompt(probe="contact", language="en", messages=(Message(role="user", content=f"Question {i}?"),),
               options=("Yes", "No"), meta={"i": i})
        for i in range(n)
    ]


def _killed(study: Path, monkeypatch: pytest.MonkeyPatch, *, first: int = 10, planned: int = 40,
            answered: int = 15) -> int:
    """A finished run of ``first`` prompts, then a run of ``planned`` killed after ``answered`` new answers:
    it never records its end (finish_run never runs, as under SIGKILL). Returns the killed run's id."""
    with Store(study) as store:
        run_plan(_prompts(first), FakeBackend(), store, GenerationSettings(), progress=False)
    with Store(study) as store, monkeypatch.context() as patch:
        patch.setattr(Store, "finish_run", lambda *args, **kwargs: None)
        with pytest.raises(KeyboardInterrupt):
            run_plan(_prompts(planned), FakeBackend(interrupt_after=answered), store, GenerationSettings(),
                     progress=False, config={"command": "biasatlas run contact --limit 40"})
        return int(store.conn.execute("SELECT MAX(run_id) FROM runs").fetchone()[0])


def test_a_killed_run_reads_as_interrupted_with_its_pending_count(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    run_id = _killed(tmp_path, monkeypatch)
    with Store(tmp_path) as store:
        status, finished = store.conn.execute("SELECT status, finished_at FROM runs WHERE run_id = ?",
                                              (run_id,)).fetchone()
        assert (status, finished) == ("running", None)  # as a killed run leaves the database
        last = store.last_run()
        runs = store.runs()
    assert last is not None and last["run_id"] == run_id
    assert last["status"] == "interrupted"
    totals = last["totals"]
    assert (totals["run_id"], totals["planned"], totals["cached"], totals["new"], totals["failed"],
            totals["pending"]) == (run_id, 40, 10, 15, 0, 15)
    assert totals["status"] == "interrupted" and totals["info"]["killed"] is True
    assert runs["status"].tolist() == ["complete", "interrupted"]
    assert all(isinstance(v, str) for v in runs["totals_json"])


def test_a_killed_run_of_an_older_biasatlas_has_no_totals_at_all(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    run_id = _killed(tmp_path, monkeypatch)
    with Store(tmp_path) as store:
        store.conn.execute("UPDATE runs SET totals_json = NULL WHERE run_id = ?", (run_id,))
        last = store.last_run()
    assert last is not None and last["status"] == "interrupted"
    assert (last["totals"]["planned"], last["totals"]["pending"]) == (40, 15)  # its whole plan was recorded


def test_a_killed_run_counts_what_it_had_not_recorded_of_its_plan_as_pending(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The plan is recorded a chunk at a time: a run killed early has recorded only its first chunks.
    run_id = _killed(tmp_path, monkeypatch, first=0, planned=40, answered=5)
    with Store(tmp_path) as store:
        store.conn.execute("DELETE FROM run_items WHERE run_id = ? AND rowid NOT IN (SELECT rowid FROM run_items"
                           " WHERE run_id = ? ORDER BY rowid LIMIT 8)", (run_id, run_id))
        last = store.last_run()
    assert last is not None and (last["totals"]["planned"], last["totals"]["new"], last["totals"]["pending"]) == (
        40, 5, 35)


def test_a_run_another_process_is_writing_reads_as_running(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    _killed(tmp_path, monkeypatch)
    with open(tmp_path / LOCK_NAME, "a+") as held:  # the writer lock, as a live run holds it
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        held.write(str(os.getpid()))
        held.flush()
        with Store(tmp_path) as store:
            last = store.last_run()
    assert last is not None and last["status"] == "running" and last["totals"]["pending"] == 15
    assert last["totals"]["info"]["writer"] == str(os.getpid())


def test_a_finished_study_reads_as_before(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        run_plan(_prompts(5), FakeBackend(), store, GenerationSettings(), progress=False)
        last = store.last_run()
    assert last is not None and last["status"] == "complete"
    assert (last["totals"]["planned"], last["totals"]["new"], last["totals"]["pending"]) == (5, 5, 0)
