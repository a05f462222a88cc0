"""How the console script stops on SIGINT (Ctrl-C) and SIGTERM: the same way, at any moment.

Both signals are handled from the script's first line on (before the CLI is even imported) and raise
``KeyboardInterrupt`` in the main thread, which every command turns into one line (what is stored, the
resume command) and exit 130. While an event loop runs in the main thread (the HTTP backend asks inline)
the interrupt is not raised inside whatever the loop is doing at that instant (a transport callback, a
task's step: asyncio then prints "Fatal error on transport" or "Task exception was never retrieved") but
from a callback of its own, between two steps of the loop; should the loop stop before it runs, the
signal is delivered again a moment later. The same later delivery when the signal lands in the loop's
own code while it starts or stops (uvloop left "this event loop is already running" behind).
"""

from __future__ import annotations

import signal
import sys
import threading
from types import FrameType
from typing import Any

EXIT_INTERRUPTED = 130
#: Seconds after which a signal deferred to an event loop that has stopped meanwhile is delivered again.
REDELIVER_S = 0.05
_state: dict[str, Any] = {"signal": 0, "pending": False, "told": False}


def _running_loop() -> Any:
    """The asyncio event loop running in this (the main) thread, or None (asyncio not imported, or only half:
    a signal can land while its import runs, before the module has its functions)."""
    get_running_loop = getattr(sys.modules.get("asyncio"), "_get_running_loop", None)
    return None if get_running_loop is None else get_running_loop()


def _raise_pending() -> None:
    if _state["pending"]:
        _state["pending"] = False
        raise KeyboardInterrupt


def _redeliver(signum: int) -> None:
    if _state["pending"]:
        main = threading.main_thread().ident
        if main is not None:
            signal.pthread_kill(main, signum)


def _in_loop_machinery(frame: FrameType | None) -> bool:
    """Whether ``frame`` runs the event loop's own code: uvloop's loop, for one, opens and closes its signal
    socket pair (socket.py) just before it marks itself running and just after: an interrupt there leaves
    it "already running" for good."""
    filename = frame.f_code.co_filename if frame is not None else ""
    return any(part in filename for part in _MACHINERY)


_MACHINERY = ("/asyncio/", "/uvloop/", "/aiohttp/", "/socket.py", "/selectors.py", "/ssl.py")


def _on_signal(signum: int, frame: FrameType | None) -> None:
    _state["signal"] = signum
    loop = _running_loop()
    if loop is None and not _in_loop_machinery(frame):
        _state["pending"] = False
        raise KeyboardInterrupt
    _state["pending"] = True  # raised by the loop's next step, or when the signal is delivered again
    if loop is not None:
        loop.call_soon_threadsafe(_raise_pending)
    timer = threading.Timer(REDELIVER_S, _redeliver, (signum,))
    timer.daemon = True
    timer.start()


def install_handlers() -> None:
    """SIGINT and SIGTERM raise KeyboardInterrupt in the main thread (see the module's docstring)."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _on_signal)


def ignore_signals() -> None:
    """The process is on its way out with its exit code decided: a late signal changes nothing."""
    _state["pending"] = False
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_IGN)


def interrupted_told() -> None:
    """Note that the interrupt's line (what is stored, how to resume) has been printed."""
    _state["told"] = True


#: Commands that ask models and store answers (the others only read a study, or write a report or an export).
ASKING = ("run", "audit", "debias", "batch", "stories")


def tell_interrupted(resume: str | None = None) -> None:
    """The interrupt's line, unless a command printed its own (with what it stored): how to resume."""
    if _state["told"]:
        return
    _state["told"] = True
    if resume is None:
        resume = _resume_command()
    if sys.argv[1:2] and sys.argv[1] in ASKING:  # before the study was opened, or after the run had ended
        sys.stderr.write(f"interrupted: every answer received is stored. Resume: {resume}\n")
    else:
        sys.stderr.write(f"interrupted. Run it again: {resume}\n")


def _resume_command() -> str:
    import shlex

    try:
        from biasatlas.records import scrub_text
    except Exception:  # pragma: no cover - the package itself cannot be imported
        return "the same command"
    return " ".join(shlex.quote(scrub_text(a)) for a in ["biasatlas", *sys.argv[1:]])
