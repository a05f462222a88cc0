"""A cache that lives for one report build: each probe's summary is computed once, whoever asks first.

The overview's headline and a probe's own section both read the probe's summary; before this cache each
computed it (the contact summary is most of a report's time). Outside a build nothing is kept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")

_CACHE: ContextVar[dict[str, Any] | None] = ContextVar("biasatlas_report_cache", default=None)


@contextmanager
def build_cache() -> Iterator[None]:
    """Keep what :func:`cached` computes until the block ends (one report build); nested blocks share it."""
    if _CACHE.get() is not None:
        yield
        return
    token = _CACHE.set({})
    try:
        yield
    finally:
        _CACHE.reset(token)


def release() -> None:
    """Forget what this build computed (its sections are made; the summaries need not live while the page and
    its files are written: a third of a 50-model report's memory)."""
    cache = _CACHE.get()
    if cache is not None:
        cache.clear()


def cached(key: str, compute: Callable[[], T]) -> T:
    """``compute()`` once per build under ``key``; outside a build it is computed every time (nothing kept)."""
    cache = _CACHE.get()
    if cache is None:
        return compute()
    if key not in cache:
        cache[key] = compute()
    value: T = cache[key]
    return value


def probe_summary(name: str, summarise: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The probe's summary (default alpha and correction) of this build: the same dict for every reader,
    which must not change it."""
    return cached(f"summary:{name}", summarise)
