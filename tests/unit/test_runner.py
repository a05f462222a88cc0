"""The runner and store together: caching, error handling, and resume after an interruption."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

import pytest

from biasatlas import __version__
from biasatlas.backends.fake import FakeBackend
from biasatlas.records import GenerationSettings, Message, Prompt
from biasatlas.runner import library_versions, run_plan
from biasatlas.store import Store


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
    real = metadata.version

    def version(name: str) -> str:
        if name == "torch":  # an HTTP-only install
            raise metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(metadata, "version", version)
    versions = library_versions()
    assert versions["torch"] is None
    assert versions["transformers"] == real("transformers")
