"""The console script's signal handler: a signal is raised between two steps of a running event loop, and one
that lands in the loop's own code is delivered again a moment later. The loop of real runs signalled at random
moments is tests/integration/test_signals.py."""

from __future__ import annotations

import signal
import sys
import time
from types import SimpleNamespace
from typing import Any

import pytest


def test_a_signal_while_an_event_loop_runs_is_raised_between_two_of_its_steps(monkeypatch: Any) -> None:
    import asyncio

    from biasatlas.cli import interrupts

    killed: list[int] = []
    monkeypatch.setattr(interrupts.signal, "pthread_kill", lambda ident, signum: killed.append(signum))
    steps: list[str] = []

    async def work() -> None:
        steps.append("before")
        interrupts._on_signal(signal.SIGTERM, sys._getframe())  # as if it came now: not raised inside this task
        steps.append("after")
        await asyncio.sleep(10)

    loop = asyncio.new_event_loop()
    try:
        started = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            loop.run_until_complete(work())
        assert steps == ["before", "after"] and time.monotonic() - started < 5
    finally:
        for task in asyncio.all_tasks(loop):
            task.cancel()
        loop.run_until_complete(asyncio.sleep(0))
        loop.close()
    time.sleep(3 * interrupts.REDELIVER_S)
    assert killed == []  # raised by the loop: not delivered again


def test_a_signal_in_the_loops_own_code_is_delivered_again_a_moment_later(monkeypatch: Any) -> None:
    from biasatlas.cli import interrupts

    killed: list[int] = []
    monkeypatch.setattr(interrupts.signal, "pthread_kill", lambda ident, signum: killed.append(signum))
    socket_code = SimpleNamespace(f_code=SimpleNamespace(co_filename="/usr/lib/python3.11/socket.py"))
    interrupts._on_signal(signal.SIGINT, socket_code)  # type: ignore[arg-type]  # (no KeyboardInterrupt there)
    time.sleep(4 * interrupts.REDELIVER_S)
    assert killed == [signal.SIGINT]
    with pytest.raises(KeyboardInterrupt):  # delivered again, in ordinary code: raised
        interrupts._on_signal(signal.SIGINT, sys._getframe())


def test_a_signal_while_asyncio_is_half_imported_is_delivered_again_not_an_attribute_error(monkeypatch: Any) -> None:
    """A signal that lands while ``asyncio`` is being imported finds the module in ``sys.modules`` without its
    functions yet: the handler must not fail on it (that was exit 1 with "partially initialized module")."""
    from biasatlas.cli import interrupts

    killed: list[int] = []
    monkeypatch.setattr(interrupts.signal, "pthread_kill", lambda ident, signum: killed.append(signum))
    monkeypatch.setitem(sys.modules, "asyncio", SimpleNamespace(__name__="asyncio"))  # no _get_running_loop yet
    frame = SimpleNamespace(f_code=SimpleNamespace(co_filename="/usr/lib/python3.11/asyncio/events.py"))
    interrupts._on_signal(signal.SIGINT, frame)  # type: ignore[arg-type]  # deferred: not raised inside the import
    time.sleep(interrupts.REDELIVER_S * 4)
    assert killed == [signal.SIGINT]
    interrupts._state["pending"] = False
    with pytest.raises(KeyboardInterrupt):  # elsewhere (outside the loop's code) it is raised at once
        interrupts._on_signal(signal.SIGINT, sys._getframe())
