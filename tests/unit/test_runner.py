"""The runner and store together: caching, error handling, and resume after an interruption."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from biasatlas import __version__
from biasatlas.backends.base import BackendStopped
from biasatlas.backends.fake import FakeBackend
from biasatlas.records import GenerationSettings, Message, Prompt
from biasatlas.runner import installed_version, library_versions, run_plan
from biasatlas.store import DB_NAME, Store


def _prompts(n: int) -> list[Prompt]:
    return [
        Prompt(probe="contact", language="en", messages=(Message(role="user", content=f"Question {i}?"),),
               options=("Yes", "No"), meta={"i": i})
        for i in range(n)
    ]


def test_second_run_is_fully_cached(tmp_path: Path) -> None:
    store = Store(tmp_path)
    first = run_plan(_prompts(20), FakeBackend(), store, GenerationSettings(), progress=False)
    assert (first.planned, first.cached, first.new, first.failed) == (20, 0, 20, 0)
    backend = FakeBackend()
    second = run_plan(_prompts(20), backend, store, GenerationSettings(), progress=False)
    assert (second.cached, second.new) == (20, 0)
    assert backend.calls == []


def test_same_question_in_two_cells_is_asked_once(tmp_path: Path) -> None:
    prompts = [
        Prompt(probe="contact", language="en", messages=(Message(role="user", content="Same?"),), meta={"cell": c})
        for c in ("a", "b")
    ]
    backend = FakeBackend()
    totals = run_plan(prompts, backend, Store(tmp_path), GenerationSettings(), progress=False)
    assert len(backend.calls) == 1
    assert totals.new == 2  # both planned items are answered


def test_resume_after_interrupt_keeps_answers_and_adds_no_duplicates(tmp_path: Path) -> None:
    store = Store(tmp_path)
    with pytest.raises(KeyboardInterrupt):
        run_plan(_prompts(30), FakeBackend(interrupt_after=12), store, GenerationSettings(), progress=False)
    assert store.response_count() == 12
    run = store.last_run()
    assert run is not None and run["status"] == "interrupted"
    backend = FakeBackend()
    totals = run_plan(_prompts(30), backend, store, GenerationSettings(), progress=False)
    assert (totals.cached, totals.new) == (12, 18)
    assert len(backend.calls) == 18
    assert store.response_count() == 30
    dupes = store.conn.execute("SELECT key, COUNT(*) FROM responses GROUP BY key HAVING COUNT(*) > 1").fetchall()
    assert dupes == []
    frame = store.frame(probe="contact")
    assert len(frame) == 30 and (frame["status"] == "answered").all()


def test_errors_are_recorded_not_cached_and_retried(tmp_path: Path) -> None:
    store = Store(tmp_path)
    prompts = _prompts(5)
    failing = FakeBackend(fail_keys={_key(prompts[2])})
    totals = run_plan(prompts, failing, store, GenerationSettings(), progress=False)
    assert (totals.new, totals.failed) == (4, 1)
    assert store.error_count() == 1
    assert store.frame()["status"].value_counts().to_dict() == {"answered": 4, "failed": 1}
    retry = FakeBackend()
    again = run_plan(prompts, retry, store, GenerationSettings(), progress=False)
    assert (again.cached, again.new, again.failed) == (4, 1, 0)
    assert len(retry.calls) == 1


def _key(prompt: Prompt) -> str:
    from biasatlas.records import Request

    return Request(prompt=prompt).cache_key("fake:fake")


def test_store_reopens_with_schema(tmp_path: Path) -> None:
    Store(tmp_path).close()
    store = Store(tmp_path)
    assert store.schema_version >= 1


def test_every_run_records_settings_backend_and_library_versions(tmp_path: Path) -> None:
    store = Store(tmp_path)
    settings = GenerationSettings(max_tokens=7, temperature=0.5, top_p=0.9, seed=3)
    run_plan(_prompts(2), FakeBackend(), store, settings, progress=False)
    run = store.last_run()
    assert run is not None
    config = run["config"]
    assert config["settings"] == settings.model_dump()
    assert config["backend"] == {"backend": "fake", "scripted": False}
    versions = config["versions"]
    assert versions["biasatlas"] == __version__
    assert set(versions) >= {"python", "torch", "transformers"}
    assert versions["transformers"] == metadata.version("transformers")


def test_a_library_that_is_not_installed_is_recorded_as_none(monkeypatch: pytest.MonkeyPatch) -> None:
    real = metadata.distribution

    def distribution(name: str) -> metadata.Distribution:
        if name == "torch":  # an HTTP-only install
            raise metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(metadata, "distribution", distribution)
    versions = library_versions()
    assert versions["torch"] is None
    assert versions["transformers"] == metadata.version("transformers")


def test_installed_version_reads_what_importlib_metadata_reads_for_every_installed_distribution() -> None:
    names = sorted({d.metadata["Name"] for d in metadata.distributions() if d.metadata["Name"]})
    assert len(names) > 50  # the whole environment, not a handful
    assert {name: installed_version(name) for name in names} == {name: metadata.version(name) for name in names}
    assert installed_version("no-such-distribution-biasatlas") is None


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ("Metadata-Version: 2.1\nName: demo\nVersion: 1.2.3\n", "1.2.3"),
        ("Metadata-Version: 2.1\nName: demo\nversion: 4.0rc1\n", "4.0rc1"),  # field names ignore case
        ("Metadata-Version: 2.1\nName: demo\nVersion:   2.0.post1\n", "2.0.post1"),
        # the description after the blank line may say "Version:" too: only the headers count
        ("Metadata-Version: 2.1\nName: demo\nVersion: 0.9\n\nVersion: 5.0 (in the description)\n", "0.9"),
        ("Metadata-Version: 2.1\nName: demo\nSummary: no version header\n\nVersion: 5.0\n", None),
    ],
)
def test_installed_version_takes_the_version_header_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, headers: str, expected: str | None
) -> None:
    info = tmp_path / "demo-0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(headers, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert installed_version("demo") == expected == metadata.version("demo")


# ---- a backend that stops the run (a circuit breaker opened) ------------------------------------
class _Stopping(FakeBackend):
    """Answers ``after`` requests, then stops the run as a tripped circuit breaker does."""

    def __init__(self, after: int) -> None:
        super().__init__()
        self.after = after

    def _respond(self, requests, choice):
        for i, response in enumerate(super()._respond(requests, choice)):
            if i == self.after:
                raise BackendStopped("401 unauthorized on 3 requests in a row: check the API key")
            yield response


def test_a_stopped_backend_ends_the_run_stopped_keeping_what_it_answered(tmp_path: Path) -> None:
    store = Store(tmp_path)
    totals = run_plan(_prompts(20), _Stopping(after=7), store, GenerationSettings(), progress=False)
    assert totals.status == "stopped"
    assert totals.info["stop_reason"] == "401 unauthorized on 3 requests in a row: check the API key"
    assert (totals.planned, totals.new, totals.failed, totals.pending) == (20, 7, 0, 13)
    assert store.response_count() == 7
    run = store.last_run()
    assert run is not None and run["status"] == "stopped"
    assert run["totals"]["info"]["stop_reason"].startswith("401 unauthorized")
    backend = FakeBackend()
    again = run_plan(_prompts(20), backend, store, GenerationSettings(), progress=False)
    assert (again.status, again.cached, again.new) == ("complete", 7, 13) and len(backend.calls) == 13


# ---- batched commits: acknowledged means committed, and the plan comes first ---------------------
def test_every_answer_reported_as_stored_is_in_the_database_at_that_moment(tmp_path: Path) -> None:
    reported: list[tuple[int, int, int]] = []
    db = tmp_path / DB_NAME

    def on_commit(answered: int, failed: int) -> None:  # seen from another connection, as after a SIGKILL
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            stored = conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
        reported.append((answered, failed, stored))

    prompts = _prompts(200)
    store = Store(tmp_path)
    totals = run_plan(prompts, FakeBackend(fail_keys={_key(prompts[5])}), store, GenerationSettings(),
                      progress=False, on_commit=on_commit, commit_every=16, commit_within_s=0.001)
    assert len(reported) >= 200 // 16
    assert all(answered <= stored for answered, _, stored in reported)
    assert [r[0] for r in reported] == sorted(r[0] for r in reported)
    assert reported[-1][:2] == (totals.new, totals.failed) == (199, 1)


def test_the_plan_is_committed_before_any_answer(tmp_path: Path) -> None:
    store = Store(tmp_path)
    statements: list[str] = []
    store.conn.set_trace_callback(statements.append)
    run_plan(_prompts(50), FakeBackend(), store, GenerationSettings(), progress=False)
    store.conn.set_trace_callback(None)
    first_answer = next(i for i, s in enumerate(statements) if s.startswith("INSERT OR IGNORE INTO responses"))
    plan = max(i for i, s in enumerate(statements) if s.startswith("INSERT OR IGNORE INTO run_items"))
    assert plan < next(i for i in range(plan, len(statements)) if statements[i] == "COMMIT") < first_answer


def test_a_store_that_fails_mid_run_stops_the_run_with_its_error(tmp_path: Path) -> None:
    store = Store(tmp_path)
    real = store.save_many
    calls = 0

    def failing(items, run_id=None):
        nonlocal calls
        calls += 1
        if calls == 2:
            raise sqlite3.OperationalError("database or disk is full")
        real(items, run_id)

    store.save_many = failing
    with pytest.raises(sqlite3.OperationalError, match="disk is full"):
        run_plan(_prompts(100), FakeBackend(), store, GenerationSettings(), progress=False,
                 commit_every=10, commit_within_s=0.0)
    run = store.last_run()
    assert run is not None and run["status"] == "interrupted"
    assert store.response_count() == run["totals"]["new"] >= 1  # the first batch, acknowledged


_CHILD = """
import sys, time
from biasatlas.backends.fake import FakeBackend
from biasatlas.records import GenerationSettings, Message, Prompt
from biasatlas.runner import run_plan
from biasatlas.store import Store

class Slow(FakeBackend):
    def _respond(self, requests, choice):
        for response in super()._respond(requests, choice):
            time.sleep(0.002)
            yield response

prompts = [Prompt(probe="contact", language="en", messages=(Message(role="user", content=f"Q{i}?"),))
           for i in range(3000)]
run_plan(prompts, Slow(), Store(sys.argv[1]), GenerationSettings(), progress=False,
         on_commit=lambda answered, failed: print(answered, flush=True))
"""


def test_sigkill_loses_no_answer_that_was_acknowledged(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    acknowledged, deadline = 0, time.monotonic() + 120
    while acknowledged < 300 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        assert line, "the run ended before it could be killed"
        acknowledged = int(line)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with sqlite3.connect(tmp_path / DB_NAME) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        stored = conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    assert acknowledged >= 300
    assert stored >= acknowledged


# ---- a backend that takes its requests lazily (the HTTP one): the plan is keyed while it asks -----------
class LazyFake(FakeBackend):
    """FakeBackend pulling its requests one by one, as the HTTP backend's workers do."""

    takes_requests_lazily = True

    def __init__(self, on_pull: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.on_pull = on_pull

    def _respond(self, requests: Any, choice: bool) -> Any:
        def pulled() -> Any:
            for request in requests:
                if self.on_pull is not None:
                    self.on_pull(request)
                yield request

        return super()._respond(pulled(), choice)


def test_a_lazy_backend_gets_its_first_request_before_the_plan_is_keyed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import biasatlas.planning as planning

    monkeypatch.setattr(planning, "CHUNK", 16)
    keyed_at_first_pull: list[int] = []
    store = Store(tmp_path)
    statements: list[str] = []
    before = Store.record_plan

    def record_plan(self: Store, *args: Any) -> Any:
        statements.append("plan")
        return before(self, *args)

    monkeypatch.setattr(Store, "record_plan", record_plan)

    def on_pull(request: Any) -> None:
        if not keyed_at_first_pull:
            keyed_at_first_pull.append(len(statements))

    backend = LazyFake(on_pull=on_pull)
    totals = run_plan(_prompts(200), backend, store, GenerationSettings(mode="choice"), progress=False)
    assert (totals.status, totals.planned, totals.new, totals.cached) == ("complete", 200, 200, 0)
    assert len(backend.calls) == 200
    assert len(statements) == 200 // 16 + 1  # the plan recorded a chunk at a time...
    assert keyed_at_first_pull[0] < len(statements)  # ...and the first request asked before the last chunk
    items = store.conn.execute("SELECT COUNT(*) FROM run_items WHERE run_id = ?", (totals.run_id,)).fetchone()[0]
    assert items == 200


def test_with_a_lazy_backend_no_answer_is_committed_before_its_plan(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import biasatlas.planning as planning

    monkeypatch.setattr(planning, "CHUNK", 8)
    db = tmp_path / DB_NAME
    orphans: list[int] = []

    def on_commit(answered: int, failed: int) -> None:  # seen from another connection, as after a SIGKILL
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            orphans.append(conn.execute(
                "SELECT COUNT(*) FROM responses r WHERE NOT EXISTS (SELECT 1 FROM run_items i WHERE i.key = r.key)"
            ).fetchone()[0])

    totals = run_plan(_prompts(300), LazyFake(), Store(tmp_path), GenerationSettings(mode="choice"), progress=False,
                      on_commit=on_commit, commit_every=5, commit_within_s=0.0)
    assert totals.new == 300 and len(orphans) >= 300 // 5 // 2
    assert set(orphans) == {0}


def test_a_lazy_run_interrupted_early_still_records_its_whole_plan_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import biasatlas.planning as planning

    monkeypatch.setattr(planning, "CHUNK", 10)
    # the last five ask the first five's questions again, in other design cells (other meta)
    prompts = _prompts(95) + [p.model_copy(update={"meta": {"i": 1000 + i}}) for i, p in enumerate(_prompts(5))]
    store = Store(tmp_path)
    with pytest.raises(KeyboardInterrupt):
        run_plan(prompts, LazyFake(interrupt_after=12), store, GenerationSettings(mode="choice"), progress=False)
    run = store.last_run()
    assert run is not None and run["status"] == "interrupted"
    items = store.conn.execute("SELECT COUNT(*) FROM run_items WHERE run_id = ?", (run["run_id"],)).fetchone()[0]
    assert items == 100  # every item planned, though 12 were asked
    # counted per planned item: the 12 answered keys are 17 items (five asked in two cells)
    assert (run["totals"]["planned"], run["totals"]["new"], run["totals"]["pending"]) == (100, 17, 83)
    again = LazyFake()
    totals = run_plan(prompts, again, store, GenerationSettings(mode="choice"), progress=False)
    assert (totals.status, totals.cached, totals.new) == ("complete", 17, 83)
    assert len(again.calls) == 83 and len({r.cache_key(again.id) for r in again.calls}) == 83


def test_a_store_that_fails_mid_lazy_run_stops_it_with_its_error_and_records_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import biasatlas.planning as planning

    monkeypatch.setattr(planning, "CHUNK", 10)
    store = Store(tmp_path)
    real = store.save_many
    calls = 0

    def failing(items: Any, run_id: Any = None) -> None:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise sqlite3.OperationalError("database or disk is full")
        real(items, run_id)

    store.save_many = failing  # type: ignore[method-assign]
    backend = LazyFake()
    with pytest.raises(sqlite3.OperationalError, match="disk is full"):
        run_plan(_prompts(100), backend, store, GenerationSettings(mode="choice"), progress=False,
                 commit_every=5, commit_within_s=0.0)
    run = store.last_run()
    assert run is not None and run["status"] == "interrupted"
    assert store.response_count() == run["totals"]["new"] >= 1  # the first batch, acknowledged
    assert len(backend.calls) < 100  # it stopped asking


def test_an_interrupt_stops_a_backend_looping_in_its_own_thread_before_the_plan_is_finished(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The HTTP backend under Jupyter runs its loop in a thread that pulls requests by itself: after
    Ctrl-C in the runner it must stop pulling before the rest of the plan is recorded."""
    import asyncio

    import biasatlas.planning as planning
    import biasatlas.runner as runner
    from biasatlas.backends.http.bridge import stream
    from biasatlas.backends.http.loops import LoopThread
    from biasatlas.records import Response

    monkeypatch.setattr(planning, "CHUNK", 10)
    pulled: list[str] = []

    class ThreadedLazy:
        id = "fake:threaded"
        takes_requests_lazily = True

        def __init__(self) -> None:
            self.loop = LoopThread()

        def score_choices(self, requests: Any) -> Any:
            async def handle(request: Any) -> Response:
                pulled.append(request.prompt.text)
                await asyncio.sleep(0.001)
                return Response(key=request.cache_key(self.id), backend_id=self.id, text="Yes")

            return stream(self.loop, requests, handle, 4)

        generate = score_choices

        def close(self) -> None:
            self.loop.stop()

    real_put = runner._Writer.put
    seen = 0

    def put(self: Any, response: Any, request: Any) -> None:
        nonlocal seen
        seen += 1
        if seen == 20:
            raise KeyboardInterrupt  # Ctrl-C lands in the runner's own loop body
        real_put(self, response, request)

    monkeypatch.setattr(runner._Writer, "put", put)
    real_finish = planning.Plan.finish
    during_finish: list[int] = []

    def finish(self: Any) -> None:  # slowed, so a backend still pulling would be seen pulling
        during_finish.append(len(pulled))
        time.sleep(0.1)
        real_finish(self)
        during_finish.append(len(pulled))

    monkeypatch.setattr(planning.Plan, "finish", finish)
    backend = ThreadedLazy()
    store = Store(tmp_path)
    try:
        with pytest.raises(KeyboardInterrupt):
            run_plan(_prompts(500), backend, store, GenerationSettings(mode="choice"), progress=False)
        asked = len(pulled)
        time.sleep(0.2)
        assert len(pulled) == asked < 500  # nothing asked after run_plan returned...
        assert during_finish[0] == during_finish[1] == asked  # ...nor while the rest of the plan was recorded
        run = store.last_run()
        assert run is not None and run["status"] == "interrupted"
        items = store.conn.execute("SELECT COUNT(*) FROM run_items WHERE run_id = ?", (run["run_id"],)).fetchone()[0]
        assert items == 500
    finally:
        backend.close()


def test_a_rerun_that_finds_every_answer_is_recorded_as_nothing_to_ask(tmp_path: Path) -> None:
    store = Store(tmp_path)
    assert run_plan(_prompts(5), FakeBackend(), store, GenerationSettings(), progress=False).status == "complete"
    again = run_plan(_prompts(5), FakeBackend(), store, GenerationSettings(), progress=False)
    assert (again.status, again.planned, again.cached, again.new) == ("nothing to ask", 5, 5, 0)
    assert list(store.runs()["status"]) == ["complete", "nothing to ask"]
    partly = run_plan(_prompts(6), FakeBackend(), store, GenerationSettings(), progress=False)
    assert (partly.status, partly.new) == ("complete", 1)  # one question was asked: an ordinary run


class _Unloaded(FakeBackend):
    """A backend that loads its model only when asked to (as a local model does)."""

    def __init__(self) -> None:
        super().__init__()
        self.loaded = False

    def load(self) -> None:
        self.loaded = True

    def describe(self) -> dict[str, Any]:
        return {"backend": "fake", "loaded": self.loaded}


def test_a_lazily_loading_backend_is_loaded_before_its_run_is_recorded_only_when_something_is_asked(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path)
    first = _Unloaded()
    run_plan(_prompts(300), first, store, GenerationSettings(), progress=False)  # more than one chunk of keys
    assert first.loaded
    cached = _Unloaded()
    assert run_plan(_prompts(300), cached, store, GenerationSettings(), progress=False).status == "nothing to ask"
    assert not cached.loaded and cached.calls == []
    one_more = _Unloaded()
    run_plan(_prompts(301), one_more, store, GenerationSettings(), progress=False)  # the missing one is last
    assert one_more.loaded and len(one_more.calls) == 1
    configs = [json.loads(c)["backend"]["loaded"] for c in store.runs()["config_json"]]
    assert configs == [True, False, True]  # each record describes the backend as it ran
