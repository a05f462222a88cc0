"""One writer per study at a time: two identical runs must not both ask (and pay for) every prompt.

An advisory ``flock`` on ``STUDY/.writer.lock``: the operating system releases it when the holder exits,
however it exits, so a killed run never leaves a stale lock. The second writer waits (saying for whom)
and then finds the first one's answers in the cache.
"""

from __future__ import annotations

import fcntl
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK_NAME = ".writer.lock"


class StudyLockedError(RuntimeError):
    """The study is being written by another process and waiting was not allowed."""


@contextmanager
def study_writer(
    study: str | Path,
    *,
    wait: bool = True,
    timeout: float | None = None,
    notify: Callable[[str], None] | None = None,
) -> Iterator[None]:
    """Hold the study's writer lock for the duration of the block."""
    path = Path(study)
    path.mkdir(parents=True, exist_ok=True)
    handle = open(path / LOCK_NAME, "a+")  # noqa: SIM115 - held for the block's duration
    try:
        started = time.monotonic()
        told = False
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                handle.seek(0)
                holder = handle.read().strip() or "another process"
                message = f"study {path} is being written by pid {holder}"
                if not wait or (timeout is not None and time.monotonic() - started > timeout):
                    raise StudyLockedError(message) from None
                if not told:
                    (notify or (lambda m: sys.stderr.write(m + "\n")))(f"{message}; waiting for it to finish")
                    told = True
                time.sleep(0.2)
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        yield
    finally:
        handle.close()  # releases the lock


def writer_holder(study: str | Path) -> str | None:
    """The pid (as the lock file has it) of the process writing ``study`` now, or None when none is.

    Tested with a shared lock taken and dropped at once; a study whose lock file cannot be read
    (none yet, a read-only copy without it) has no writer.
    """
    try:
        handle = open(Path(study) / LOCK_NAME)  # noqa: SIM115 - closed below, whatever happens
    except OSError:
        return None
    with handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return handle.read().strip() or "another process"
        except OSError:
            return None
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        return None
