"""Starting and ending Ray for `batch run`: quiet, interruptible, and leaving no process behind.

* **Quiet.** Ray's own log lines (its start banner, token-authentication notes, Ray Data's execution
  lines, its deprecation warnings, what its C++ core writes to the process's standard error) go to
  ``ray.log`` in the answers folder, not to the terminal: the lines a user sees are the command's own.
* **Interruptible.** ``ray.init`` installs a SIGTERM handler of its own (``sys.exit(15)``, which ends
  the job with Ray's stack dump); the handlers the command had are put back, so SIGTERM and Ctrl-C end
  it the same way as any other run (one line, the resume command, exit 130).
* **Clean.** A Ray started here is shut down when the job ends, however it ends, and its processes
  (raylet, GCS, the asking actors) are waited for, then killed, before the command returns.
* **Reachable or not.** An ``--address`` is tried with a plain TCP connection first (a cluster that is
  not there is one line in seconds, not minutes of Ray's retries); ``ray://`` needs Ray Client's extra.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import signal
import socket
import sys
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: Ray's log lines, in the answers folder (batch import reads only *.jsonl)
RAY_LOG = "ray.log"
#: the loggers whose lines go to RAY_LOG instead of the terminal
RAY_LOGGERS = ("ray", "ray.data", "ray.air", "ray.train", "ray.tune", "ray.serve")
#: seconds to reach an --address before giving up
CONNECT_S = 5.0
#: seconds the processes of a local Ray get to end after ray.shutdown(), before they are killed
REAP_S = 10.0
DEFAULT_PORTS = {"ray": 10001, "": 6379}  # Ray Client's port, the GCS's


class RayStartError(Exception):
    """Ray could not be started or reached; the message is one line for the user."""


def quiet_logging(folder: Path) -> logging.Handler:
    """Ray's loggers write to ``folder/ray.log`` only (see the module); returns the file's handler."""
    import ray.data  # noqa: F401 - Ray Data sets up its loggers when imported: replaced below

    folder.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(folder / RAY_LOG, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    _attach(handler)
    return handler


def _attach(handler: logging.Handler) -> None:
    # "ray._private" too: ray.init(configure_logging=False) clears the "ray" logger's handlers, and what its
    # start logs then (token authentication...) would reach the terminal through logging's last resort
    for name in (*RAY_LOGGERS, "ray._private"):
        found = logging.getLogger(name)
        for old in list(found.handlers):
            found.removeHandler(old)
        found.addHandler(handler)
        found.propagate = False


@contextlib.contextmanager
def _native_output_to(path: Path) -> Iterator[None]:
    """The process's file descriptor 2 (where Ray's C++ core and the processes it starts write) into ``path``,
    ``sys.stderr`` kept on the terminal for the command's own lines and Python's warnings into the log.

    Nothing changes where ``sys.stderr`` is not descriptor 2 (a test's captured output)."""
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        fd = -1
    with warnings.catch_warnings():
        warnings.showwarning = _log_warning  # Ray's deprecation notes, in the log with its other lines
        if fd != 2:
            yield
            return
        sys.stderr.flush()
        saved = os.dup(2)
        target = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.dup2(target, 2)
        os.close(target)
        terminal, sys.stderr = sys.stderr, open(saved, "w", encoding=sys.stderr.encoding,  # noqa: SIM115
                                                errors=sys.stderr.errors, buffering=1, closefd=True)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            own, sys.stderr = sys.stderr, terminal
            own.close()


def _log_warning(message: Any, category: type[Warning], filename: str, lineno: int, file: Any = None,
                 line: str | None = None) -> None:
    logging.getLogger("ray._private").warning("%s: %s (%s:%s)", category.__name__, message, filename, lineno)


def check_address(address: str) -> None:
    """RayStartError unless ``address`` (``ray://HOST:PORT``, ``HOST:PORT`` or ``auto``) can be tried."""
    if address in ("auto", "local"):
        return
    scheme, sep, rest = address.partition("://")
    if not sep:
        scheme, rest = "", address
    if scheme not in ("ray", ""):
        raise RayStartError(f"--address {address}: want ray://HOST:PORT (Ray Client), HOST:PORT or auto")
    if scheme == "ray" and importlib.util.find_spec("grpc") is None:
        raise RayStartError(f"--address {address}: connecting through Ray Client needs its extra: "
                            "pip install 'ray[client]' (or run on the cluster's head node with --address auto)")
    host, _, port = rest.rstrip("/").rpartition(":")
    if not host or not port.isdigit():
        host, port = rest.rstrip("/"), str(DEFAULT_PORTS[scheme])
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_S):
            pass
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise RayStartError(f"cannot reach the Ray cluster at {address}: {reason}") from None


@contextlib.contextmanager
def ray_session(address: str | None, cpus: int | None, log_folder: Path) -> Iterator[str]:
    """Ray, connected (``address``) or started here with ``cpus`` CPUs (None: all), for the block; yields the
    address.

    Shut down when the block ends (a Ray started here with its processes; see the module).
    """
    import ray

    if ray.is_initialized():  # a caller's own Ray (a test's, a notebook's): used, left running
        yield address or "local"
        return
    if address:
        check_address(address)
    log = quiet_logging(log_folder)
    handlers = _signal_handlers()
    before = {p.pid for p in _own_processes()}
    with _native_output_to(log_folder / RAY_LOG):
        try:
            try:
                if address:
                    ray.init(address=address, log_to_driver=False, configure_logging=False)
                else:
                    # one CPU per asking actor and one for the reading tasks: with only the actors' CPUs the
                    # read task never gets one and the job waits for ever
                    ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False, configure_logging=False)
            except (ValueError, ConnectionError, RuntimeError, TimeoutError, OSError) as exc:
                where = f"the Ray cluster at {address}" if address else "a local Ray"
                raise RayStartError(f"cannot start {where}: {_first_line(exc)}") from None
            finally:
                _restore(handlers)
                _attach(log)  # ray.init cleared the "ray" logger's handlers
            yield address or "local"
        finally:
            started = [p for p in _own_processes() if p.pid not in before]
            with contextlib.suppress(Exception):  # on the way out: nothing of Ray's may hide the job's own end
                ray.shutdown()
            _reap(started)
            log.close()


def _first_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:300]


def _signal_handlers() -> dict[int, Any]:
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}


def _restore(handlers: dict[int, Any]) -> None:
    """Put back the handlers ``ray.init`` replaced (its SIGTERM handler exits 15 mid-job)."""
    for signum, handler in handlers.items():
        if handler is not None and signal.getsignal(signum) is not handler:
            signal.signal(signum, handler)


def _own_processes() -> list[Any]:
    """This process's descendants (psutil processes); [] where psutil is missing."""
    try:
        import psutil
    except ImportError:  # pragma: no cover - Ray's dependencies bring it
        return []
    with contextlib.suppress(psutil.Error):
        return list(psutil.Process().children(recursive=True))
    return []


def _reap(processes: list[Any]) -> None:
    """Wait up to REAP_S for the processes Ray started to end, then kill what is left."""
    if not processes:
        return
    import psutil

    _, alive = psutil.wait_procs(processes, timeout=REAP_S)
    for proc in alive:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    psutil.wait_procs(alive, timeout=REAP_S)
