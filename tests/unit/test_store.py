"""The study store: schema versions, read-only studies, what is stored (capped, scrubbed), transactions."""

from __future__ import annotations

import base64
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from biasatlas.backends.fake import FakeBackend
from biasatlas.records import GenerationSettings, Message, Prompt, Request, Response
from biasatlas.runner import run_plan
from biasatlas.store import DB_NAME, MAX_ANSWER_CHARS, MIGRATIONS, Store, StoreError


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


# ---- a read-only study (an archived audit) opens for reading, and nothing in it is written ----
def _files(study: Path) -> dict[str, tuple[int, int, bytes]]:
    return {p.name: (p.stat().st_mtime_ns, p.stat().st_size, p.read_bytes()) for p in sorted(study.iterdir())}


def _study(tmp_path: Path, n: int = 4) -> Path:
    study = tmp_path / "archived"
    with Store(study) as store:
        run_plan(_prompts(n), FakeBackend(), store, GenerationSettings(mode="choice"), progress=False)
    return study


def test_readonly_store_reads_and_refuses_writes_and_leaves_the_database_as_it_was(tmp_path: Path) -> None:
    study = _study(tmp_path)
    before = _files(study)
    with Store(study, readonly=True) as store:
        assert store.readonly
        assert (store.frame()["status"] == "answered").sum() == 4
        assert store.last_run() is not None
        with pytest.raises(StoreError, match="read-only"):
            store.start_run("contact", "x", {}, "0")
        with pytest.raises(sqlite3.OperationalError):  # even a raw write is refused
            store.conn.execute("DELETE FROM responses")
    after = _files(study)
    assert after[DB_NAME] == before[DB_NAME]
    assert set(after) - set(before) <= {DB_NAME + "-wal", DB_NAME + "-shm"}  # what any SQLite reader makes


def _unwritable(monkeypatch: pytest.MonkeyPatch) -> None:
    """As a read-only mount looks to the store (the tests run as root, whom chmod does not stop)."""
    monkeypatch.setattr("biasatlas.store._writable", lambda path: False)


def test_a_study_in_a_read_only_directory_opens_by_itself_and_no_file_is_created_or_touched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    study = _study(tmp_path)
    before = _files(study)
    _unwritable(monkeypatch)
    with Store(study) as store:  # the default falls back to reading only
        assert store.readonly
        assert len(store.frame()) == 4
    assert _files(study) == before


def _study_with_a_live_log(tmp_path: Path, *, with_shm: bool) -> Path:
    """A study copied while a writer had answers in its write-ahead log (an archive of a killed run)."""
    live = _study(tmp_path, n=2)
    store = Store(live)
    store.conn.execute("PRAGMA wal_autocheckpoint=0")
    run_plan(_prompts(6), FakeBackend(), store, GenerationSettings(mode="choice"), progress=False)
    archive = tmp_path / ("with_shm" if with_shm else "wal_only")
    archive.mkdir()
    for suffix in ("", "-wal") + (("-shm",) if with_shm else ()):
        shutil.copyfile(live / (DB_NAME + suffix), archive / (DB_NAME + suffix))
    store.close()
    assert (archive / (DB_NAME + "-wal")).stat().st_size > 0
    return archive


@pytest.mark.parametrize("with_shm", [True, False])
def test_answers_still_in_the_log_of_a_read_only_study_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, with_shm: bool
) -> None:
    archive = _study_with_a_live_log(tmp_path, with_shm=with_shm)
    db_before, wal_before = ((archive / (DB_NAME + s)).read_bytes() for s in ("", "-wal"))
    _unwritable(monkeypatch)
    with Store(archive) as store:
        assert store.response_count() == 6
    assert (archive / DB_NAME).read_bytes() == db_before
    assert (archive / (DB_NAME + "-wal")).read_bytes() == wal_before


def test_readonly_on_a_missing_or_foreign_database_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no study database"):
        Store(tmp_path / "nothing", readonly=True)
    assert not (tmp_path / "nothing").exists()
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / DB_NAME).write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(StoreError, match="not a readable biasatlas database"):
        Store(tmp_path / "foreign", readonly=True)


# ---- what is stored: one answer's size is capped; credentials never reach the study -----------
def _request(text: str = "Q?") -> Request:
    return Request(prompt=Prompt(probe="contact", language="en", messages=(Message(role="user", content=text),)))


def test_one_answer_is_capped_at_256_kib_of_text_and_the_original_length_is_kept(tmp_path: Path) -> None:
    assert MAX_ANSWER_CHARS == 256 * 1024
    request = _request()
    long_text = "é" * (300 * 1024)
    with Store(tmp_path) as store:
        run_id = store.start_run("contact", "m", {}, "0")
        store.record_plan(run_id, "m", [request])
        store.save(Response(key=request.cache_key("m"), backend_id="m", text=long_text, info={"a": 1}), request)
        text, info = store.conn.execute("SELECT text, info_json FROM responses").fetchone()
    assert text == long_text[:MAX_ANSWER_CHARS]
    assert json.loads(info) == {"a": 1, "truncated_from": 300 * 1024}


CANARY = "Zk9canaryPass"


def test_credentials_are_scrubbed_from_errors_info_and_run_records(tmp_path: Path) -> None:
    basic = base64.b64encode(f"alice:{CANARY}".encode()).decode()
    prompts = _prompts(3)
    keys = [Request(prompt=p).cache_key("fake:fake") for p in prompts]

    class Leaky(FakeBackend):
        def _respond(self, requests, choice):
            for request in requests:
                key = request.cache_key(self.id)
                if key == keys[0]:
                    yield Response(key=key, backend_id=self.id,
                                   error=f"401 from http://alice:{CANARY}@h/v1: echoed Authorization: Basic {basic}")
                else:
                    yield Response(key=key, backend_id=self.id, text="Yes",
                                   info={"echo": f"headers {{'Authorization': 'Bearer {CANARY}xyz'}} {basic}"})

    with Store(tmp_path) as store:
        config = {"command": f"biasatlas run contact --base-url http://alice:{CANARY}@h/v1 --http api_key={CANARY}",
                  "http": {"api_key": CANARY}}
        run_plan(prompts, Leaky(), store, GenerationSettings(), config=config, progress=False)
        dump = "\n".join(store.conn.iterdump())
    assert CANARY not in dump and basic not in dump
    assert "***" in dump


# ---- frames carry what the validity table needs ------------------------------------------------
def test_frame_has_the_finish_reason(tmp_path: Path) -> None:
    request = _request()
    with Store(tmp_path) as store:
        run_id = store.start_run("contact", "m", {}, "0")
        store.record_plan(run_id, "m", [request])
        store.save(Response(key=request.cache_key("m"), backend_id="m", text="Once", finish_reason="length"),
                   request)
        assert store.frame()["finish_reason"].tolist() == ["length"]


# ---- answers that arrive together share a transaction -------------------------------------------
def test_answers_arriving_together_share_transactions_and_every_insert_is_inside_one(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        statements: list[str] = []
        store.conn.set_trace_callback(statements.append)
        totals = run_plan(_prompts(300), FakeBackend(), store, GenerationSettings(), progress=False)
        store.conn.set_trace_callback(None)
        assert totals.new == 300 and store.response_count() == 300
    inserts, commits, open_tx = 0, 0, False
    for sql in statements:
        word = sql.split()[0].upper()
        if word == "BEGIN":
            open_tx = True
        elif word in ("COMMIT", "ROLLBACK"):
            open_tx, commits = False, commits + (word == "COMMIT")
        elif sql.startswith("INSERT OR IGNORE INTO responses"):
            assert open_tx, "an answer was committed on its own"
            inserts += 1
    assert 0 < inserts < 300 // 4  # many rows per statement (see the test below)
    assert commits < 300 // 4  # the plan's transaction and a few for the answers


# ---- many rows per INSERT statement -------------------------------------------------------------
def _answers(n: int) -> list[tuple[Response, Request]]:
    requests = [Request(prompt=p, settings=GenerationSettings(mode="choice")) for p in _prompts(n)]
    return [
        (Response(key=r.cache_key("m"), backend_id="m", text=f"A{i}", option_probs={"Yes": 0.25, "No": 0.75},
                  prompt_tokens=i, latency_s=i / 7, info={"n": i}), r)
        for i, r in enumerate(requests)
    ]


def test_a_batch_of_answers_is_a_few_statements_not_one_per_row(tmp_path: Path) -> None:
    # executemany steps (and gives up the GIL) once per row: a hand-over with the event loop per answer
    with Store(tmp_path) as store:
        statements: list[str] = []
        store.conn.set_trace_callback(statements.append)
        store.save_many(_answers(200))
        store.conn.set_trace_callback(None)
        assert store.response_count() == 200
    assert len([s for s in statements if s.startswith("INSERT OR IGNORE INTO responses")]) <= 8


@pytest.mark.parametrize("limit", [None, 40])  # 40: fewer variables than one row of 11 needs, times four
def test_rows_stored_in_chunks_equal_rows_stored_one_by_one(tmp_path: Path, limit: int | None) -> None:
    items = _answers(300)
    items = [*items, (Response(key=items[5][0].key, backend_id="m", text="later"), items[5][1])]  # ignored
    failed = Response(key=items[7][0].key, backend_id="m", error="boom")
    with Store(tmp_path / "chunks") as store:
        if limit is not None:
            store.conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, limit)
        store.save_many([*items, (failed, items[7][1])], run_id=3)
        got = store.conn.execute("SELECT * FROM responses ORDER BY rowid").fetchall()
        errors = store.conn.execute("SELECT key, backend_id, run_id, error FROM errors").fetchall()
    with Store(tmp_path / "rows") as store:  # one statement per row, as executemany stored them
        for response, request in items:
            row = Store._answer_row(response, request, "now")
            store.conn.execute(f"INSERT OR IGNORE INTO responses VALUES ({', '.join('?' * 11)})", row)
        want = store.conn.execute("SELECT * FROM responses ORDER BY rowid").fetchall()
    assert len(got) == 300 and got[5][3] == "A5"
    assert [r[:-1] for r in got] == [r[:-1] for r in want]  # every column but created_at
    assert errors == [(failed.key, "m", 3, "boom")]


def test_the_key_reader_sees_committed_answers_beside_an_open_write_transaction(tmp_path: Path) -> None:
    store = Store(tmp_path)
    requests = [Request(prompt=Prompt(probe="p", language="en", messages=(Message(role="user", content=f"Q{i}"),)))
                for i in range(3)]
    keys = [r.cache_key("m") for r in requests]
    store.save(Response(key=keys[0], backend_id="m", text="A"), requests[0])
    store.save(Response(key=keys[1], backend_id="m", error="failed"), requests[1])  # an error is no answer
    with store.key_reader() as cached:
        assert cached(keys) == {keys[0]}
        store.conn.execute("BEGIN IMMEDIATE")  # the writer mid-transaction: the reader neither waits nor sees it
        row = store._answer_row(Response(key=keys[2], backend_id="m", text="B"), requests[2], "now")
        store.conn.execute(f"INSERT INTO responses VALUES ({', '.join('?' * len(row))})", row)
        assert cached(keys) == {keys[0]}
        store.conn.execute("COMMIT")
        assert cached(keys) == {keys[0], keys[2]}
        assert cached(keys * 400) == {keys[0], keys[2]}  # many keys: chunks under SQLite's parameter limit
    store.close()
