"""A run's plan, keyed chunk by chunk: requests, cache keys, what the study holds, what is left to ask.

Keying a large plan costs about 15 µs a request (the request, its key, the cache lookup): 5,000
prompts are 80 ms before the first request could go out. A backend that takes its requests lazily
(the HTTP backend's workers pull them one by one) gets the first chunk's at once and the rest as
it asks for them (the keying is the same work, so throughput does not change: docs/performance.md).
Other backends (the local one sorts and batches the whole list) get the whole list, keyed first.

Each chunk is handed to ``on_chunk`` (the runner's writer records it) *before* any of its requests
is released, so a chunk's plan is always committed before its answers. :meth:`Plan.finish` keys and
records the rest without asking anything (after an interrupt: the run still records everything it
intended). Keying a chunk twice (an interrupt in the middle of one) records it twice, harmlessly
(``INSERT OR IGNORE``), and never asks a request twice.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence

from biasatlas.records import GenerationSettings, Prompt, Request

#: Requests keyed at a time: the first chunk is keyed before the first request goes out.
CHUNK = 256


class Plan:
    """Every prompt x sample of a run as requests, keyed lazily (see the module's docstring)."""

    def __init__(
        self,
        prompts: Sequence[Prompt],
        settings: GenerationSettings,
        samples: int,
        backend_id: str,
        cached_keys: Callable[[list[str]], set[str]],
        on_chunk: Callable[[list[Request], list[str]], None],
        chunk: int | None = None,
    ) -> None:
        self.prompts, self.settings, self.samples, self.backend_id = prompts, settings, samples, backend_id
        self.planned = len(prompts) * samples
        self._cached_keys, self._on_chunk = cached_keys, on_chunk
        self._chunk = max(1, CHUNK if chunk is None else chunk)
        self.requests: list[Request] = []  # keyed so far, in plan order
        self.keys: list[str] = []  # their cache keys
        self.cached: set[str] = set()  # keys the study already answered
        self.todo: dict[str, Request] = {}  # distinct keys to ask, first request of each
        self._cached_items: dict[int, int] = {}  # chunk start -> its items the study had answered
        self._next = 0  # index of the first item not keyed yet (prompt-major, then sample)

    @property
    def keyed(self) -> bool:
        """Whether every item of the plan has been keyed and handed to ``on_chunk``."""
        return self._next >= self.planned

    @property
    def unkeyed(self) -> int:
        return self.planned - self._next

    def pending(self) -> Iterator[Request]:
        """The requests to ask, in plan order, each distinct key once, keyed a chunk at a time."""
        while not self.keyed:
            yield from self._key_next_chunk()

    def finish(self) -> None:
        """Key and record what is left, asking nothing."""
        while not self.keyed:
            self._key_next_chunk()

    def cached_count(self) -> int:
        """Items (not distinct keys) of the keyed part of the plan that the study had already answered."""
        return sum(self._cached_items.values())

    def _key_next_chunk(self) -> list[Request]:
        # Every step is idempotent up to the index's advance: a chunk interrupted midway is keyed again.
        start = self._next
        stop = min(self.planned, start + self._chunk)
        samples, settings = self.samples, self.settings
        chunk = [
            Request(prompt=self.prompts[i // samples], settings=settings, sample_index=i % samples)
            for i in range(start, stop)
        ]
        keys = [r.cache_key(self.backend_id) for r in chunk]
        unseen = [k for k in dict.fromkeys(keys) if k not in self.todo and k not in self.cached]
        found = self._cached_keys(unseen) if unseen else set()
        self._on_chunk(chunk, keys)  # recorded before any of its requests is released
        self.requests[start:stop] = chunk
        self.keys[start:stop] = keys
        self.cached |= found
        self._cached_items[start] = sum(1 for k in keys if k in self.cached)
        fresh: list[Request] = []
        for request, key in zip(chunk, keys, strict=True):
            if key not in self.cached and key not in self.todo:
                self.todo[key] = request
                fresh.append(request)
        self._next = stop
        return fresh


def anything_to_ask(prompts: Sequence[Prompt], settings: GenerationSettings, samples: int, backend_id: str,
                    cached_keys: Callable[[set[str]], set[str]]) -> bool:
    """Whether any prompt x sample lacks a stored answer (``cached_keys``: the study's answered subset), keyed a
    chunk at a time, stopping at the first chunk with one missing: a fully cached plan is keyed once more
    (~15 µs a request), which lets a run leave a lazily loaded model unloaded."""
    keys = (Request(prompt=p, settings=settings, sample_index=s).cache_key(backend_id)
            for p in prompts for s in range(samples))
    while chunk := list(itertools.islice(keys, CHUNK)):
        unique = set(chunk)
        if len(cached_keys(unique)) < len(unique):
            return True
    return False
