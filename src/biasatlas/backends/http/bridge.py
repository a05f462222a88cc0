"""Run async work on an event loop and hand results to synchronous code as they finish.

The runner is synchronous and commits each Response the moment it gets it. Work is pulled from
the input lazily by a fixed pool of ``concurrency`` workers, so 200,000 requests never become
200,000 tasks, and what waits to be stored is bounded too.

A semaphore of ``concurrency + buffer`` slots, taken before a request is pulled and given back
when the consumer takes its result, bounds what is in flight plus what waits. Two ways to run the
loop, same results:

* :class:`InlineLoop` (the default): the consumer's own thread runs the loop whenever it asks
  for the next result and nothing is ready. No second thread competes for the GIL, and nothing
  runs behind the caller's back.
* :class:`LoopThread`: a background thread runs the loop, for callers whose thread already runs
  one (Jupyter). Results cross threads in batches (one wake-up per batch, not per result), which
  keeps the GIL hand-overs few; throughput measured the same as inline on 2 cores.
Both live in :mod:`.loops`, which also picks the event loop (uvloop where installed).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import gc
import math
import queue
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Iterator
from typing import Any, TypeVar

from biasatlas.backends.http.loops import InlineLoop, LoopThread

T = TypeVar("T")
R = TypeVar("R")

_DONE = object()

#: The collector's first-generation threshold while a run streams (CPython's default is 700).
GC_YOUNG_THRESHOLD = 20_000
_gc_depth = [0]
_gc_saved: list[Any] = []  # (threshold, whether quiet_gc froze) while inside
_gc_lock = threading.Lock()


@contextlib.contextmanager
def quiet_gc() -> Iterator[None]:
    """Fewer and cheaper garbage collections while requests stream; restored on exit.

    Thousands of answers a second allocate enough to trigger a young collection every few dozen
    answers, and full collections rescan every object the process holds (the CLI's imports: some
    170,000), measured at 10-15 % of the client's CPU at concurrency 128. Inside, the objects alive
    on entry are frozen (``gc.freeze``: no collection scans them; not when someone else froze
    some already) and the young threshold is raised; cyclic garbage is still collected, in larger
    batches. Nested and concurrent uses share one setting; the last to leave restores it.
    """
    with _gc_lock:
        _gc_depth[0] += 1
        if _gc_depth[0] == 1:
            _gc_saved[:] = [gc.get_threshold(), gc.get_freeze_count() == 0]
            if _gc_saved[1]:
                gc.freeze()
            young, *older = gc.get_threshold()
            gc.set_threshold(max(young, GC_YOUNG_THRESHOLD), *older)
    try:
        yield
    finally:
        with _gc_lock:
            _gc_depth[0] -= 1
            if _gc_depth[0] == 0:
                threshold, froze = _gc_saved
                gc.set_threshold(*threshold)
                if froze:
                    gc.unfreeze()


class Deadlines:
    """Per-request deadlines with one timer per slice of time, not one per request.

    ``async with deadlines.limit():`` is ``asyncio.timeout(seconds)`` (a block that runs past its
    deadline is cancelled and raises TimeoutError; any other cancellation passes through), but
    the blocks whose deadlines fall in the same ``slack``-second slice share one timer: a timer
    per request (a handle, a heap entry, its cancellation) cost ~10 µs, 3 % of a request's client
    CPU at 2,500 requests a second. A deadline is met up to ``slack`` late (a 50th of it, at most 1 s).
    Used on one event loop only.
    """

    def __init__(self, seconds: float, slack: float | None = None) -> None:
        self.seconds = seconds
        self.slack = slack if slack is not None else min(1.0, seconds / 50)
        self._slices: dict[int, set[_Limit]] = {}

    def limit(self) -> _Limit:
        return _Limit(self)

    def _enter(self, limit: _Limit, loop: asyncio.AbstractEventLoop) -> int:
        index = math.ceil((loop.time() + self.seconds) / self.slack)
        found = self._slices.get(index)
        if found is None:
            found = self._slices[index] = set()
            loop.call_at(index * self.slack, self._expire, index)
        found.add(limit)
        return index

    def _expire(self, index: int) -> None:
        for limit in self._slices.pop(index, ()):
            limit.expired = True
            limit.task.cancel()


class _Limit:
    """One block under a :class:`Deadlines` (as ``asyncio.Timeout``, its cancellation bookkeeping included)."""

    __slots__ = ("cancelling", "deadlines", "expired", "index", "task")

    def __init__(self, deadlines: Deadlines) -> None:
        self.deadlines = deadlines
        self.expired = False

    async def __aenter__(self) -> None:
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("Deadlines.limit() must be used inside a task")
        self.task = task
        self.cancelling = task.cancelling()
        self.index = self.deadlines._enter(self, asyncio.get_running_loop())

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        found = self.deadlines._slices.get(self.index)
        if found is not None:
            found.discard(self)
        # As asyncio.Timeout: our cancellation becomes TimeoutError unless someone else cancelled too.
        if self.expired and self.task.uncancel() <= self.cancelling and exc_type is asyncio.CancelledError:
            raise TimeoutError from exc


class Slots:
    """``asyncio.Semaphore``'s ``acquire``/``release`` (first come, first served), one step per release.

    ``asyncio.Semaphore.release`` scans its waiters for one not yet woken: the consumer gives back
    a batch of slots in a row while the loop is not running, so the k-th release of a batch steps
    over k-1 woken waiters (quadratic in the batch; ~4 % of the client's CPU at concurrency 128 when
    answers come at once). Here a release hands its slot to the first waiter still waiting.
    """

    __slots__ = ("free", "waiters")

    def __init__(self, free: int) -> None:
        self.free = free
        self.waiters: deque[asyncio.Future[None]] = deque()  # free > 0 only while this is empty

    async def acquire(self) -> None:
        if self.free > 0:
            self.free -= 1
            return
        waiter = asyncio.get_running_loop().create_future()
        self.waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():  # handed a slot, then cancelled: pass it on
                self.release()
            raise  # (a cancelled waiter left in the queue is skipped by release)

    def release(self) -> None:
        while self.waiters:
            waiter = self.waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        self.free += 1


def stream(
    runner: InlineLoop | LoopThread,
    items: Iterable[T],
    handle: Callable[[T], Awaitable[R]],
    concurrency: int,
    buffer: int | None = None,
) -> Iterator[R]:
    """Yield ``await handle(item)`` for every item, in completion order, with bounded concurrency.

    ``handle`` should not raise for one item (return an error value instead); if it does, the
    stream stops and the exception is raised here. Closing the iterator early (or an exception in
    the consumer, Ctrl-C included) cancels the requests in flight.
    """
    slots = concurrency + (concurrency if buffer is None else buffer)
    if isinstance(runner, InlineLoop):
        results = _stream_inline(runner, items, handle, concurrency, slots)
    else:
        results = _stream_thread(runner, items, handle, concurrency, slots)
    return _quietly(results)


def _quietly(results: Iterator[R]) -> Iterator[R]:
    """``results`` with :func:`quiet_gc` from the first result asked to the last (closing this
    closes ``results``: ``yield from`` passes it on)."""
    with quiet_gc():
        yield from results


def _stream_inline(
    runner: InlineLoop,
    items: Iterable[T],
    handle: Callable[[T], Awaitable[R]],
    concurrency: int,
    n_slots: int,
) -> Iterator[R]:
    loop = runner.loop
    source = iter(items)
    slots = Slots(n_slots)
    ready: deque[R] = deque()
    waiter: list[asyncio.Future[None] | None] = [None]
    alive = [concurrency]

    def wake(*_: object) -> None:
        w = waiter[0]
        if w is not None and not w.done():
            w.set_result(None)

    async def worker() -> None:
        while True:
            await slots.acquire()
            try:
                item = next(source)
            except StopIteration:
                slots.release()
                return
            ready.append(await handle(item))
            wake()

    def finished(_: object) -> None:
        alive[0] -= 1
        wake()

    tasks = [loop.create_task(worker()) for _ in range(concurrency)]
    for task in tasks:
        task.add_done_callback(finished)
    try:
        while True:
            while ready:
                slots.release()  # the loop is not running: safe to call from here
                yield ready.popleft()
            if alive[0] == 0:
                for task in tasks:
                    task.result()  # re-raise a failure of the workers
                return
            waiter[0] = wait = loop.create_future()
            loop.run_until_complete(wait)
    finally:
        pending = [t for t in tasks if not t.done()]
        for task in pending:
            task.cancel()
        if pending and not loop.is_running():
            with contextlib.suppress(BaseException):
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        for task in tasks:  # a worker that Ctrl-C hit mid-step holds the KeyboardInterrupt: retrieve it,
            if task.done() and not task.cancelled():  # or asyncio prints "Task exception was never retrieved"
                task.exception()


def _stream_thread(
    runner: LoopThread,
    items: Iterable[T],
    handle: Callable[[T], Awaitable[R]],
    concurrency: int,
    n_slots: int,
) -> Iterator[R]:
    loop = runner.loop
    out: queue.SimpleQueue[Any] = queue.SimpleQueue()
    source = iter(items)
    slots = Slots(n_slots)

    async def worker() -> None:
        while True:
            await slots.acquire()
            try:
                item = next(source)
            except StopIteration:
                slots.release()
                return
            out.put(await handle(item))

    async def main() -> None:
        tasks = [asyncio.create_task(worker()) for _ in range(concurrency)]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def release(n: int) -> None:
        for _ in range(n):
            slots.release()

    future: concurrent.futures.Future[None] = asyncio.run_coroutine_threadsafe(main(), loop)
    future.add_done_callback(lambda _: out.put(_DONE))
    try:
        while True:
            # Take everything that is ready, free that many slots in one wake-up of the loop.
            batch = [out.get()]
            while True:
                try:
                    batch.append(out.get_nowait())
                except queue.Empty:
                    break
            done = batch[-1] is _DONE
            results = batch[:-1] if done else batch
            if results and not done:
                loop.call_soon_threadsafe(release, len(results))
            yield from results
            if done:
                future.result()  # re-raise a failure of the workers
                return
    finally:
        if not future.done():
            future.cancel()
            with contextlib.suppress(concurrent.futures.CancelledError, concurrent.futures.TimeoutError):
                future.exception(timeout=10)
