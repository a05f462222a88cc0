"""A run's plan keyed chunk by chunk: each distinct key asked once, each chunk recorded before its
requests are released, the rest recorded by ``finish`` after an interrupt, cached keys never asked."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pytest

from biasatlas.planning import Plan, anything_to_ask
from biasatlas.records import GenerationSettings, Message, Prompt, Request

BACKEND = "fake:plan"


def _prompts(texts: Iterable[str]) -> list[Prompt]:
    return [
        Prompt(probe="contact", language="en", messages=(Message(role="user", content=t),), options=("Yes", "No"),
               meta={"i": i})
        for i, t in enumerate(texts)
    ]


class Recorder:
    """on_chunk and the cache lookup of a Plan, with the order of events."""

    def __init__(self, cached: Iterable[str] = (), fail_first_chunk: bool = False) -> None:
        self.cached = set(cached)
        self.events: list[tuple[str, object]] = []
        self.recorded: list[tuple[list[Request], list[str]]] = []
        self.fail_first_chunk = fail_first_chunk
        self.lookups: list[list[str]] = []

    def lookup(self, keys: list[str]) -> set[str]:
        self.lookups.append(list(keys))
        return {k for k in keys if k in self.cached}

    def on_chunk(self, requests: list[Request], keys: list[str]) -> None:
        if self.fail_first_chunk:
            self.fail_first_chunk = False
            raise KeyboardInterrupt  # Ctrl-C while the chunk is being recorded
        self.recorded.append((requests, keys))
        self.events.append(("recorded", tuple(keys)))


def key(prompt: Prompt, sample: int = 0, settings: GenerationSettings | None = None) -> str:
    return Request(prompt=prompt, settings=settings or GenerationSettings(), sample_index=sample).cache_key(BACKEND)


def test_every_distinct_key_once_in_plan_order_across_chunks() -> None:
    # The same question in design cells that fall in different chunks: asked once, where it first appears.
    prompts = _prompts(["A?", "B?", "A?", "C?", "B?", "D?", "A?"])
    rec = Recorder()
    plan = Plan(prompts, GenerationSettings(), 1, BACKEND, rec.lookup, rec.on_chunk, chunk=2)
    asked = [r.prompt.text for r in plan.pending()]
    assert asked == ["A?", "B?", "C?", "D?"]
    assert plan.keyed and plan.unkeyed == 0
    assert len(plan.requests) == len(plan.keys) == plan.planned == 7
    assert plan.keys == [key(p) for p in prompts]
    assert [len(r) for r, _ in rec.recorded] == [2, 2, 2, 1]  # every item recorded, the repeats included


def test_samples_are_prompt_major_as_build_requests_makes_them() -> None:
    from biasatlas.runner import build_requests

    prompts = _prompts(["A?", "B?", "C?"])
    settings = GenerationSettings(temperature=0.7)
    rec = Recorder()
    plan = Plan(prompts, settings, 3, BACKEND, rec.lookup, rec.on_chunk, chunk=4)
    list(plan.pending())
    expected = build_requests(prompts, settings, 3)
    assert [(r.prompt.id, r.sample_index) for r in plan.requests] == [(r.prompt.id, r.sample_index) for r in expected]
    assert plan.keys == [r.cache_key(BACKEND) for r in expected]


def test_a_chunk_is_recorded_before_any_of_its_requests_is_released() -> None:
    prompts = _prompts([f"Q{i}?" for i in range(10)])
    rec = Recorder()
    plan = Plan(prompts, GenerationSettings(), 1, BACKEND, rec.lookup, rec.on_chunk, chunk=3)
    for request in plan.pending():
        rec.events.append(("asked", request.cache_key(BACKEND)))
    recorded_at: dict[str, int] = {}
    for i, (kind, what) in enumerate(rec.events):
        if kind == "recorded":
            for k in what:  # type: ignore[union-attr]
                recorded_at.setdefault(k, i)
        else:
            assert recorded_at.get(what, len(rec.events)) < i, f"asked before its chunk was recorded: {what}"
    # and lazily: the second chunk is keyed only once the first chunk's requests have been taken
    kinds = [kind for kind, _ in rec.events]
    assert kinds[:5] == ["recorded", "asked", "asked", "asked", "recorded"]


def test_what_the_study_holds_is_not_asked_and_is_counted_per_item() -> None:
    prompts = _prompts(["A?", "B?", "A?", "C?"])
    rec = Recorder(cached={key(prompts[0])})
    plan = Plan(prompts, GenerationSettings(), 1, BACKEND, rec.lookup, rec.on_chunk, chunk=2)
    assert [r.prompt.text for r in plan.pending()] == ["B?", "C?"]
    assert plan.cached_count() == 2  # "A?" twice: two planned items
    # a key already known (cached or asked) is not looked up again
    assert all(key(prompts[0]) not in keys for keys in rec.lookups[1:])


def test_finish_records_the_rest_and_asks_nothing() -> None:
    prompts = _prompts([f"Q{i}?" for i in range(10)])
    rec = Recorder()
    plan = Plan(prompts, GenerationSettings(), 1, BACKEND, rec.lookup, rec.on_chunk, chunk=4)
    pending = plan.pending()
    taken = [next(pending) for _ in range(2)]  # then Ctrl-C
    pending.close()
    plan.finish()
    assert plan.keyed
    assert sorted(k for _, keys in rec.recorded for k in keys) == sorted(key(p) for p in prompts)
    assert len(taken) == 2


def test_a_chunk_interrupted_while_recorded_is_keyed_again_by_finish() -> None:
    prompts = _prompts([f"Q{i}?" for i in range(5)])
    rec = Recorder(fail_first_chunk=True)
    plan = Plan(prompts, GenerationSettings(), 1, BACKEND, rec.lookup, rec.on_chunk, chunk=3)
    with pytest.raises(KeyboardInterrupt):
        next(plan.pending())
    assert plan.unkeyed == 5 and not plan.requests
    plan.finish()
    assert [len(r) for r, _ in rec.recorded] == [3, 2]
    assert plan.keys == [key(p) for p in prompts] and plan.planned == 5


def test_an_empty_plan() -> None:
    rec = Recorder()
    plan = Plan([], GenerationSettings(), 1, BACKEND, rec.lookup, rec.on_chunk)
    assert list(plan.pending()) == [] and plan.keyed and plan.cached_count() == 0 and not rec.recorded


def test_anything_to_ask_stops_at_the_first_chunk_with_a_missing_answer() -> None:
    settings = GenerationSettings()
    prompts = _prompts(f"Q{i}" for i in range(600))  # three chunks of 256 keys
    keys = [Request(prompt=p, settings=settings, sample_index=s).cache_key("fake:x") for p in prompts for s in (0, 1)]
    asked: list[int] = []

    def cached(stored: set[str]) -> Callable[[set[str]], set[str]]:
        def lookup(wanted: set[str]) -> set[str]:
            asked.append(len(wanted))
            return wanted & stored
        return lookup

    assert anything_to_ask(prompts, settings, 2, "fake:x", cached(set(keys))) is False
    assert sum(asked) == len(keys) == 1200  # every key looked up once
    asked.clear()
    assert anything_to_ask(prompts, settings, 2, "fake:x", cached(set(keys[:-1]))) is True  # the last one missing
    asked.clear()
    assert anything_to_ask(prompts, settings, 2, "fake:x", cached(set(keys[1:]))) is True  # the first one missing
    assert len(asked) == 1  # found in the first chunk: the rest is not keyed
    assert anything_to_ask(prompts, settings, 2, "fake:y", cached(set(keys))) is True  # another model's answers
