"""When an HTTP run gives up: error classes and the circuit breaker.

Every failed attempt gets a class (:func:`error_class`), counted per run in
``info["http"]["errors"]``: ``auth`` (401, 403), ``not_found`` (404, 405, a redirect loop),
``rate_limit`` (429), ``server`` (5xx, 408, 409, 425), ``bad_request`` (any other 4xx),
``malformed`` (a 200 whose body is not a usable answer: not JSON, HTML, empty, no ``choices``),
``timeout`` (no complete answer in time), ``connection`` (refused or dropped).

The breaker opens, and the run stops (``BackendStopped``: the CLI exits 4 with the reason and the
resume command; unanswered prompts stay pending), on the first of:

1. a request given up with class ``auth`` or ``not_found``: at once, as no other prompt can fare better;
2. :data:`MALFORMED_STREAK` attempts in a row malformed, with no good answer in between;
3. a sustained failure rate: of the last :data:`WINDOW` requests finished, at least half given up,
   and at least :data:`MIN_FAILED` of them;
4. no answer for ``max_wait`` seconds while attempts kept failing, or a server that asks
   (``Retry-After``) for a wait longer than ``max_wait``.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Callable

MALFORMED_STREAK = 5
WINDOW = 20
MIN_FAILED = 5
FATAL_CLASSES = frozenset({"auth", "not_found"})
CLASS_NAMES = {
    "auth": "the server rejects the credentials",
    "not_found": "the server has no such model or endpoint",
    "rate_limit": "rate limited",
    "server": "server errors",
    "bad_request": "the server refuses the requests",
    "malformed": "answers that are not OpenAI API answers",
    "timeout": "no answer in time",
    "connection": "the connection fails",
}


def error_class(cause: str) -> str:
    """The class of a failure ``cause`` (``http_401``, ``timeout``, ``malformed_json``...)."""
    if cause.startswith("http_"):
        try:
            status = int(cause.removeprefix("http_"))
        except ValueError:
            return "server"
        if status in (401, 403):
            return "auth"
        if status in (404, 405):
            return "not_found"
        if status == 429:
            return "rate_limit"
        if status >= 500 or status in (408, 409, 425):
            return "server"
        return "bad_request"
    if cause in ("malformed_json", "empty_choices", "malformed"):
        return "malformed"
    if cause == "redirect_loop":
        return "not_found"
    if cause in ("timeout", "deadline"):
        return "timeout"
    return "connection"


class Stopped(Exception):
    """The breaker is open: the request is abandoned (it stays pending)."""


class Breaker:
    """Watches a run's attempts and requests; :attr:`reason` is set once it opens."""

    def __init__(self, max_wait: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_wait = max_wait
        self.clock = clock
        self.reason: str | None = None
        self.errors: Counter[str] = Counter()  # failed attempts by class, this run
        self.recent: deque[bool] = deque(maxlen=WINDOW)  # requests finished: True = given up
        self.malformed = 0  # malformed attempts in a row
        self.last_answer = clock()

    def start_run(self) -> None:
        """A new run (a resume, too) starts closed: the server may have been fixed."""
        self.reason = None
        self.recent.clear()
        self.malformed = 0
        self.last_answer = self.clock()

    def take_errors(self) -> dict[str, int]:
        errors, self.errors = self.errors, Counter()
        return dict(sorted(errors.items()))

    def open(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason

    def check(self) -> None:
        """Raise :class:`Stopped` when the breaker is open (before an attempt)."""
        if self.reason is not None:
            raise Stopped(self.reason)

    # ---- attempts ------------------------------------------------------------------------------
    def answered(self) -> None:
        self.malformed = 0
        self.last_answer = self.clock()

    def failed(self, cause: str, detail: str) -> None:
        kind = error_class(cause)
        self.errors[kind] += 1
        self.malformed = self.malformed + 1 if kind == "malformed" else 0
        if self.malformed >= MALFORMED_STREAK:
            self.open(f"{MALFORMED_STREAK} answers in a row were not OpenAI API answers (last: {detail[:120]})")
        self._stalled(0.0, detail)

    def before_wait(self, seconds: float, retry_after: float | None, detail: str) -> None:
        """Raise :class:`Stopped` rather than wait past ``max_wait`` (or when the server asks to)."""
        if retry_after is not None and retry_after > self.max_wait:
            self.open(f"the server asks to wait {retry_after:.0f} s (Retry-After), more than max-wait "
                      f"{self.max_wait:g} s ({detail[:120]})")
        self._stalled(seconds, detail)
        self.check()

    def _stalled(self, ahead: float, detail: str) -> None:
        if self.clock() + ahead - self.last_answer > self.max_wait:
            self.open(f"no answer for {self.max_wait:g} s (max-wait) while requests kept failing "
                      f"(last: {detail[:120]})")

    # ---- requests ------------------------------------------------------------------------------
    def request_done(self, ok: bool, cause: str | None = None, detail: str = "") -> None:
        """A request finished: answered (``ok``) or given up with its last ``cause``."""
        self.recent.append(not ok)
        if ok:
            return
        kind = error_class(cause or "")
        if kind in FATAL_CLASSES:
            self.open(f"{CLASS_NAMES[kind]} ({detail[:160]})")
            return
        failed = sum(self.recent)
        if failed >= MIN_FAILED and 2 * failed >= len(self.recent):
            self.open(f"{failed} of the last {len(self.recent)} requests failed ({CLASS_NAMES.get(kind, kind)}; "
                      f"last: {detail[:120]})")
