"""The event loops that run the HTTP requests: inline in the consumer's thread, or in a thread of their own.

Either is a uvloop event loop where uvloop is installed (a core dependency, except on Windows): its
loop, transports and timers are C, which at thousands of requests a second cuts the client's CPU per
request by 5-12 % (docs/performance.md). ``BIASATLAS_EVENT_LOOP=asyncio`` asks for the standard
library's loop instead (``uvloop`` insists on uvloop; ``auto``, the default, takes it where installed).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from biasatlas.backends.base import BackendError

R = TypeVar("R")


def new_event_loop() -> asyncio.AbstractEventLoop:
    """A uvloop event loop where uvloop is installed and not refused by ``BIASATLAS_EVENT_LOOP=asyncio``;
    else the standard library's."""
    choice = os.environ.get("BIASATLAS_EVENT_LOOP", "auto").strip().lower() or "auto"
    if choice not in ("auto", "uvloop", "asyncio"):
        raise BackendError(f"BIASATLAS_EVENT_LOOP={choice!r}: expected auto, uvloop or asyncio")
    if choice != "asyncio":
        try:
            import uvloop
        except ImportError:
            if choice == "uvloop":
                raise BackendError("BIASATLAS_EVENT_LOOP=uvloop, but uvloop is not installed") from None
        else:
            return uvloop.new_event_loop()
    return asyncio.new_event_loop()


def event_loop_name(loop: asyncio.AbstractEventLoop) -> str:
    """``uvloop`` or ``asyncio``: which loop runs the requests (stated in the run record)."""
    return "uvloop" if type(loop).__module__.startswith("uvloop") else "asyncio"


class InlineLoop:
    """An event loop run by whichever thread calls :meth:`call` or consumes a :func:`stream`."""

    def __init__(self) -> None:
        self.loop = new_event_loop()

    def call(self, coro: Coroutine[Any, Any, R], timeout: float | None = None) -> R:
        """Run a coroutine to completion on the loop."""
        if self.loop.is_running():  # left so by an interrupt (see stop()): refuse cleanly, no "never awaited"
            coro.close()
            raise BackendError("the request loop was interrupted and cannot run more requests")
        return self.loop.run_until_complete(asyncio.wait_for(coro, timeout) if timeout else coro)

    def stop(self) -> None:
        if self.loop.is_closed():
            return
        current = asyncio.current_task(self.loop) if self.loop.is_running() else None
        pending = [t for t in asyncio.all_tasks(self.loop) if not t.done() and t is not current]
        for task in pending:
            task.cancel()
        if self.loop.is_running():
            # a Ctrl-C raised inside the loop's own bookkeeping (uvloop's _pause_signals) can leave it marked
            # running: it can be neither run to finish the cancelled tasks nor closed, and trying would raise
            # a RuntimeError in place of the KeyboardInterrupt. Leave it to a later stop() or the process's exit.
            return
        if pending:
            self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        self.loop.close()


class LoopThread:
    """An asyncio event loop running forever in a daemon thread."""

    def __init__(self, name: str = "biasatlas-http") -> None:
        self.loop = new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def call(self, coro: Coroutine[Any, Any, R], timeout: float | None = None) -> R:
        """Run a coroutine on the loop and wait for its result (from another thread)."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self) -> None:
        if self.loop.is_closed():
            return

        async def cancel_all() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        with contextlib.suppress(Exception):
            self.call(cancel_all(), timeout=10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=10)
        if not self._thread.is_alive():
            self.loop.close()


def make_runner(kind: str = "auto") -> InlineLoop | LoopThread:
    """``inline`` unless this thread already runs an event loop (``auto``), or as asked."""
    if kind == "auto":
        try:
            asyncio.get_running_loop()
            kind = "thread"
        except RuntimeError:
            kind = "inline"
    return LoopThread() if kind == "thread" else InlineLoop()
