"""The study store's schema: studies made by earlier versions open, newer ones are refused."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from biasatlas.backends.fake import FakeBackend
from biasatlas.records import GenerationSettings, Message, Prompt
from biasatlas.runner import run_plan
from biasatlas.store import DB_NAME, MIGRATIONS, Store, StoreError


def _prompts(n: int) -> list[Prompt]:
    return [
        Prompt(probe="contact", language="en", messages=(Message(role="user", content=f"Q{i}?"),),
               options=("Yes", "No"), meta={"i": i})
        for i in range(n)
    ]


def _first_version_study(study: Path) -> None:
    """A study database as biasatlas 0.2.0 wrote it: migration 1 only, one run, one answer."""
    study.mkdir(parents=True)
    conn = sqlite3.connect(study / DB_NAME)
    conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT)")
    conn.executescript(MIGRATIONS[0])
    conn.execute("INSERT INTO schema_migrations VALUES (1, '2025-01-01T00:00:00+00:00')")
    conn.commit()
    conn.close()


def test_a_study_from_the_first_schema_opens_and_keeps_its_answers(tmp_path: Path) -> None:
    study = tmp_path / "old"
    _first_version_study(study)
    with Store(study) as store:
        run_plan(_prompts(3), FakeBackend(), store, GenerationSettings(), progress=False)
    with Store(study) as store:
        assert store.schema_version == len(MIGRATIONS)
        backend = FakeBackend()
        totals = run_plan(_prompts(3), backend, store, GenerationSettings(), progress=False)
        assert (totals.cached, totals.new, backend.calls) == (3, 0, [])
        assert (store.frame()["status"] == "answered").all()


def test_migrations_are_applied_once(tmp_path: Path) -> None:
    Store(tmp_path).close()
    with Store(tmp_path) as store:
        rows = store.conn.execute("SELECT version FROM schema_migrations ORDER BY version").fetchall()
        assert [r[0] for r in rows] == list(range(1, len(MIGRATIONS) + 1))


def test_a_study_from_a_newer_biasatlas_is_refused_in_one_line(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        run_plan(_prompts(2), FakeBackend(), store, GenerationSettings(), progress=False)
        store.conn.execute("INSERT INTO schema_migrations VALUES (?, 'later')", (len(MIGRATIONS) + 1,))
    with pytest.raises(StoreError) as caught:
        Store(tmp_path)
    message = str(caught.value)
    assert "\n" not in message
    assert f"schema version {len(MIGRATIONS) + 1}" in message and "upgrade biasatlas" in message
    # the refused database is left as it was
    conn = sqlite3.connect(tmp_path / DB_NAME)
    assert conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 2
    conn.close()
