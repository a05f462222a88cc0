"""When an HTTP run gives up: error classes and the circuit breaker.

Every failed attempt gets a class (:func:`error_class`), counted per run in
``info["http"]["errors"]``: ``auth`` (401, 403), ``not_found`` (404, 405, a redirect loop),
``rate_limit`` (429), ``server`` (5xx, 408, 409, 425), ``bad_request`` (any other 4xx),
``malformed`` (a 200 whose body is not a usable answer: not JSON, HTML, empty, no ``choices``, no
text, larger than ``max_body``), ``timeout`` (no complete answer in time), ``connection`` (refused or dropped).

The breaker opens, and the run stops (``BackendStopped``: the CLI exits 4 with the reason and the
resume command; unanswered prompts stay pending), on the first of:

1. a request given up with class ``auth`` or ``not_found``: at once, as no other prompt can fare better;
2. malformed attempts in a row, with no good answer in between: :data:`MALFORMED_STREAK` before the
   run's first answer, :data:`MALFORMED_STREAK_ANSWERED` after it;
3. a sustained failure rate: of the last :data:`WINDOW` requests finished (never fewer: the first
   requests to finish are often the failures, which come back faster than answers), at least
   :data:`FAIL_SHARE` given up. A server that answers most requests is never stopped by it;
4. time without any answer: no answer for the run's limit (``max_wait``; by default
   :data:`FIRST_ANSWER_WAIT` seconds until the run's first answer, :data:`MAX_WAIT` after it) while
   attempts fail, or while the server holds attempts without answering (for at least the attempt
   ``timeout``: an answer may take that long); or a server that asks (``Retry-After``) for a longer
   wait than the limit. A watchdog timer looks at the limit, so no event is needed to stop.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, deque
from collections.abc import Callable

MALFORMED_STREAK = 5
MALFORMED_STREAK_ANSWERED = 25
WINDOW = 100
FAIL_SHARE = 0.8
FIRST_ANSWER_WAIT = 60.0
MAX_WAIT = 180.0
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
MALFORMED_CAUSES = frozenset({"malformed_json", "empty_choices", "malformed", "no_text", "body_too_large"})


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
    if cause in MALFORMED_CAUSES:
        return "malformed"
    if cause == "redirect_loop":
        return "not_found"
    if cause in ("timeout", "deadline"):
        return "timeout"
    return "connection"


class Stopped(Exception):
    """The breaker is open: the request is abandoned (it stays pending)."""


class Breaker:
    """Watches a run's attempts and requests; :attr:`reason` is set once it opens.

    ``max_wait``: seconds without an answer (None: the defaults above); ``hang``: seconds one attempt
    may take (the attempt timeout).
    """

    def __init__(self, max_wait: float | None = None, clock: Callable[[], float] = time.monotonic,
                 *, hang: float = 0.0) -> None:
        self.max_wait = max_wait
        self.hang = hang
        self.clock = clock
        self.errors: Counter[str] = Counter()  # failed attempts by class, this run
        self.running: set[asyncio.Task[object]] = set()  # the requests in flight (cancelled when it opens)
        self.cancelled: set[asyncio.Task[object]] = set()
        self._timer: asyncio.TimerHandle | None = None
        self.start_run()

    def start_run(self) -> None:
        """A new run (a resume, too) starts closed: the server may have been fixed."""
        self.reason: str | None = None
        self.recent: deque[bool] = deque(maxlen=WINDOW)  # requests finished: True = given up
        self.given_up = 0  # of them
        self.malformed = 0  # malformed attempts in a row
        self.answers = 0  # this run
        self.failing = False  # an attempt failed since the last answer
        self.last_detail = ""
        self.out = 0  # attempts at the server now
        self.out_since = self.last_answer = self.clock()

    def limit(self) -> float:
        """Seconds the run may go without an answer (rule 4)."""
        if self.max_wait is not None:
            return self.max_wait
        return MAX_WAIT if self.answers else FIRST_ANSWER_WAIT

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
    def sent(self) -> None:
        """An attempt went to the server (after our own rate limit)."""
        if self.out == 0:
            self.out_since = self.clock()
        self.out += 1

    def returned(self) -> None:
        self.out -= 1

    def answered(self) -> None:
        self.malformed = 0
        self.answers += 1
        self.failing = False
        self.last_answer = self.clock()

    def failed(self, cause: str, detail: str) -> None:
        kind = error_class(cause)
        self.errors[kind] += 1
        self.failing = True
        self.last_detail = detail
        self.malformed = self.malformed + 1 if kind == "malformed" else 0
        streak = MALFORMED_STREAK_ANSWERED if self.answers else MALFORMED_STREAK
        if self.malformed >= streak:
            self.open(f"{streak} answers in a row were not OpenAI API answers (last: {detail})")
        self._stalled(0.0)

    def before_wait(self, seconds: float, retry_after: float | None, detail: str) -> None:
        """Raise :class:`Stopped` rather than wait past the limit (or when the server asks to)."""
        limit = self.limit()
        if retry_after is not None and retry_after > limit:
            self.open(f"the server asks to wait {retry_after:.0f} s (Retry-After), more than max-wait "
                      f"{limit:g} s ({detail})")
        self.failing = True
        self.last_detail = detail
        self._stalled(seconds)
        self.check()

    def _stalled(self, ahead: float) -> None:
        limit = self.limit()
        now = self.clock()
        if self.failing and now + ahead - self.last_answer >= limit:
            self.open(f"no answer for {limit:g} s (max-wait) while requests kept failing (last: {self.last_detail})")
        elif self.out and now - max(self.out_since, self.last_answer) >= max(limit, self.hang):
            self.open(f"no answer for {max(limit, self.hang):g} s (max-wait): the server holds {self.out} "
                      "requests and answers none")

    # ---- the watchdog --------------------------------------------------------------------------
    def look(self) -> None:
        """Rule 4 without waiting for an event (a failure or a wait): the watchdog's look."""
        if self.reason is None:
            self._stalled(0.0)

    def due(self) -> float:
        """Seconds until rule 4 could open the breaker, as things stand (the watchdog looks then)."""
        limit, now = self.limit(), self.clock()
        times = [self.last_answer + limit] if self.failing else []
        if self.out:
            times.append(max(self.out_since, self.last_answer) + max(limit, self.hang))
        if times:
            return max(0.0, min(times) - now)
        # neither: a failure from now on is checked when it happens; an attempt sent now is due no sooner
        ahead = self.last_answer + limit - now
        return ahead if ahead > 0 else limit

    def enter(self, task: asyncio.Task[object]) -> None:
        """A request starts (on the event loop): the watchdog runs while any does."""
        self.running.add(task)
        if self._timer is None:
            self._arm(task.get_loop())

    def leave(self, task: asyncio.Task[object]) -> bool:
        """A request ends; after a CancelledError, True when the cancellation was the breaker's alone
        (the request is abandoned, the run is not)."""
        self.running.discard(task)
        if task in self.cancelled:
            self.cancelled.discard(task)
            return task.uncancel() == 0
        return False

    def _arm(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer = loop.call_later(max(self.due(), 0.01), self._tick, loop)

    def _tick(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer = None
        self.look()
        if self.reason is not None:  # stop what is in flight: nothing else may come to wake the run
            for task in list(self.running):
                if task not in self.cancelled and not task.done():
                    self.cancelled.add(task)
                    task.cancel()
        elif self.running:
            self._arm(loop)

    # ---- requests ------------------------------------------------------------------------------
    def request_done(self, ok: bool, cause: str | None = None, detail: str = "") -> None:
        """A request finished: answered (``ok``) or given up with its last ``cause``."""
        if len(self.recent) == WINDOW:
            self.given_up -= self.recent[0]
        self.recent.append(not ok)
        self.given_up += not ok
        if ok:
            return
        kind = error_class(cause or "")
        if kind in FATAL_CLASSES:
            self.open(f"{CLASS_NAMES[kind]} ({detail})")
            return
        if len(self.recent) == WINDOW and self.given_up >= FAIL_SHARE * WINDOW:
            self.open(f"{self.given_up} of the last {WINDOW} requests failed ({CLASS_NAMES.get(kind, kind)}; "
                      f"last: {detail})")
