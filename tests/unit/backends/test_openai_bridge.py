"""The sync/async bridge: completion order, bounded look-ahead, cancellation, in both loop modes and on
both event loops (uvloop, the default where installed, and the standard library's)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from biasatlas.backends.http.bridge import Slots, stream
from biasatlas.backends.http.loops import InlineLoop, LoopThread, make_runner


@pytest.fixture(params=["inline-uvloop", "inline-asyncio", "thread-uvloop", "thread-asyncio"])
def runner(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[InlineLoop | LoopThread]:
    kind, loop = request.param.split("-")
    monkeypatch.setenv("BIASATLAS_EVENT_LOOP", loop)
    r = make_runner(kind)
    yield r
    r.stop()


def test_every_item_once_in_completion_order(runner: InlineLoop | LoopThread) -> None:
    done: list[int] = []

    async def handle(i: int) -> int:
        while i == 0 and len(done) < 49:  # the first item finishes last
            await asyncio.sleep(0.001)
        done.append(i)
        return i

    out = list(stream(runner, range(50), handle, concurrency=8))
    assert sorted(out) == list(range(50))
    assert out[-1] == 0


def test_input_is_taken_lazily(runner: InlineLoop | LoopThread) -> None:
    pulled = []

    def source() -> Iterator[int]:
        for i in range(100_000):
            pulled.append(i)
            yield i

    async def handle(i: int) -> int:
        await asyncio.sleep(0)
        return i

    it = stream(runner, source(), handle, concurrency=4, buffer=4)
    first = [next(it) for _ in range(3)]
    assert len(first) == 3
    # Only the workers' share and the bounded buffer were taken (the thread mode frees the slots of
    # a batch of results at once, so at most twice the slots), not 100,000 requests.
    assert len(pulled) <= 2 * (4 + 4)
    it.close()  # cancels what is in flight


def test_closing_early_cancels_work(runner: InlineLoop | LoopThread) -> None:
    started: list[int] = []
    finished: list[int] = []

    async def handle(i: int) -> int:
        started.append(i)
        await asyncio.sleep(0.01 if i == 0 else 30)
        finished.append(i)
        return i

    it = stream(runner, range(10), handle, concurrency=3)
    assert next(it) == 0
    it.close()
    assert finished == [0]
    # the loop is usable again afterwards
    assert list(stream(runner, range(3), lambda i: asyncio.sleep(0, result=i), concurrency=2)) != []


def test_a_failing_handler_surfaces(runner: InlineLoop | LoopThread) -> None:
    async def handle(i: int) -> int:
        if i == 5:
            raise ValueError("boom")
        return i

    with pytest.raises(ValueError, match="boom"):
        list(stream(runner, range(10), handle, concurrency=2))


def test_auto_picks_a_thread_inside_a_running_loop() -> None:
    async def inside() -> InlineLoop | LoopThread:
        return make_runner("auto")

    r = asyncio.run(inside())
    try:
        assert isinstance(r, LoopThread)
    finally:
        r.stop()
    r2 = make_runner("auto")
    assert isinstance(r2, InlineLoop)
    r2.stop()


# ---- garbage collection while streaming ---------------------------------------------------------
def test_quiet_gc_raises_the_young_threshold_and_freezes_then_restores(runner: InlineLoop | LoopThread) -> None:
    import gc

    from biasatlas.backends.http.bridge import GC_YOUNG_THRESHOLD

    before, frozen_before = gc.get_threshold(), gc.get_freeze_count()
    seen: list[tuple[tuple[int, int, int], int]] = []

    async def handle(i: int) -> int:
        return i

    for _ in stream(runner, range(3), handle, concurrency=2):
        seen.append((gc.get_threshold(), gc.get_freeze_count()))
    assert seen and all(t[0] == max(before[0], GC_YOUNG_THRESHOLD) and f > frozen_before for t, f in seen)
    assert gc.get_threshold() == before and gc.get_freeze_count() == frozen_before
    # closed early, or nested in another: restored once the outermost ends
    outer = stream(runner, range(5), handle, concurrency=2)
    next(outer)
    assert list(stream(runner, range(3), handle, concurrency=2)) and gc.get_threshold()[0] >= GC_YOUNG_THRESHOLD
    outer.close()
    assert gc.get_threshold() == before and gc.get_freeze_count() == frozen_before


def test_quiet_gc_leaves_someone_elses_frozen_objects_frozen() -> None:
    import gc

    from biasatlas.backends.http.bridge import quiet_gc

    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with quiet_gc():
            pass
        assert gc.get_freeze_count() > frozen - 100  # not unfrozen (a few frozen objects may be freed)
    finally:
        gc.unfreeze()


# ---- request deadlines ----------------------------------------------------------------------------
def test_deadlines_time_out_a_slow_request_and_only_it() -> None:
    from biasatlas.backends.http.bridge import Deadlines

    async def main() -> list[str]:
        deadlines = Deadlines(0.2)

        async def one(delay: float) -> str:
            try:
                async with deadlines.limit():
                    await asyncio.sleep(delay)
                return "ok"
            except TimeoutError:
                return "timeout"

        loop = asyncio.get_running_loop()
        started = loop.time()
        out = await asyncio.gather(one(0.01), one(5), one(0.05), one(5))
        assert 0.2 <= loop.time() - started < 0.2 + deadlines.slack + 0.5
        assert not deadlines._slices  # nothing left behind
        return out

    assert asyncio.run(main()) == ["ok", "timeout", "ok", "timeout"]


def test_deadlines_pass_on_a_cancellation_that_is_not_theirs() -> None:
    from biasatlas.backends.http.bridge import Deadlines

    async def main() -> None:
        deadlines = Deadlines(10)

        async def slow() -> None:
            async with deadlines.limit():
                await asyncio.sleep(5)

        task = asyncio.create_task(slow())
        await asyncio.sleep(0.01)
        task.cancel()  # the stream closing, Ctrl-C: not a timeout
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not any(deadlines._slices.values())

    asyncio.run(main())


def test_a_deadline_met_before_the_cancellation_lands_is_still_a_timeout_only_inside() -> None:
    """A request that catches its own cancellation and carries on outlives the block, not the task."""
    from biasatlas.backends.http.bridge import Deadlines

    async def main() -> str:
        deadlines = Deadlines(0.05)
        try:
            async with deadlines.limit():
                await asyncio.sleep(1)
        except TimeoutError:
            pass
        await asyncio.sleep(0.01)  # the task is not cancelled any more
        return "went on"

    assert asyncio.run(main()) == "went on"


# ---- the slots that bound what is in flight ------------------------------------------------------
def test_slots_bound_holders_and_wake_waiters_first_come_first_served() -> None:
    async def main() -> list[str]:
        slots, order = Slots(2), []

        async def holder(name: str) -> None:
            await slots.acquire()
            order.append(name)

        tasks = [asyncio.create_task(holder(n)) for n in "abcde"]
        await asyncio.sleep(0)
        assert order == ["a", "b"] and slots.free == 0
        for _ in range(3):  # given back in a row while nothing runs, as the consumer does
            slots.release()
        await asyncio.gather(*tasks)
        slots.release()
        slots.release()
        assert slots.free == 2 and not slots.waiters
        return order

    assert asyncio.run(main()) == list("abcde")


def test_a_cancelled_waiter_is_skipped_and_a_slot_handed_to_one_cancelled_is_passed_on() -> None:
    async def main() -> None:
        slots, got = Slots(0), []

        async def waiter(name: str) -> None:
            await slots.acquire()
            got.append(name)

        a, b, c = (asyncio.create_task(waiter(n)) for n in "abc")
        await asyncio.sleep(0)
        a.cancel()  # cancelled while waiting: skipped by the next release
        await asyncio.sleep(0)
        slots.release()  # goes to b
        c.cancel()
        slots.release()  # c's future is cancelled too: nobody waits, the slot is kept
        d = asyncio.create_task(waiter("d"))
        await asyncio.sleep(0)
        await asyncio.gather(a, b, c, d, return_exceptions=True)
        assert got == ["b", "d"] and slots.free == 0

        e = asyncio.create_task(waiter("e"))
        await asyncio.sleep(0)
        slots.release()  # handed to e, which is cancelled before it runs: the slot goes to f
        e.cancel()
        f = asyncio.create_task(waiter("f"))
        await asyncio.gather(e, f, return_exceptions=True)
        assert got == ["b", "d", "f"] and slots.free == 0 and e.cancelled()

    asyncio.run(main())
