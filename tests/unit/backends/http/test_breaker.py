"""The circuit breaker's rules and the error classes, on a clock the test moves."""

from __future__ import annotations

import random

import pytest

from biasatlas.backends.http.breaker import (
    FAIL_SHARE,
    FIRST_ANSWER_WAIT,
    MALFORMED_STREAK,
    MALFORMED_STREAK_ANSWERED,
    MAX_WAIT,
    WINDOW,
    Breaker,
    Stopped,
    error_class,
)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("cause", "kind"),
    [
        ("http_401", "auth"), ("http_403", "auth"), ("http_404", "not_found"), ("redirect_loop", "not_found"),
        ("http_429", "rate_limit"), ("http_500", "server"), ("http_503", "server"), ("http_408", "server"),
        ("http_400", "bad_request"), ("http_422", "bad_request"), ("malformed_json", "malformed"),
        ("empty_choices", "malformed"), ("timeout", "timeout"), ("deadline", "timeout"),
        ("connection", "connection"),
    ],
)
def test_error_classes(cause: str, kind: str) -> None:
    assert error_class(cause) == kind


def test_auth_and_not_found_open_at_once() -> None:
    for cause in ("http_401", "http_403", "http_404"):
        b = Breaker(60)
        b.request_done(True)
        b.request_done(False, cause, "HTTP x")
        assert b.reason is not None
        with pytest.raises(Stopped):
            b.check()


def test_a_few_failures_do_not_open_it() -> None:
    b = Breaker(60)
    for i in range(40):
        b.request_done(i % 5 != 0, "http_500", "HTTP 500")  # one in five fails
    assert b.reason is None
    b.request_done(False, "http_400", "HTTP 400")
    assert b.reason is None


def test_malformed_answers_in_a_row_open_it_and_an_answer_resets_the_count() -> None:
    b = Breaker(60)
    for _ in range(MALFORMED_STREAK - 1):
        b.failed("malformed_json", "not JSON")
    assert b.reason is None
    b.failed("malformed_json", "not JSON: '<html>'")
    assert b.reason is not None and "5 answers in a row were not OpenAI API answers" in b.reason
    b = Breaker(60)  # once the run has an answer, a longer streak: many good answers between them are likely
    b.answered()
    for _ in range(MALFORMED_STREAK_ANSWERED - 1):
        b.failed("empty_choices", "no choices")
    b.answered()
    for _ in range(MALFORMED_STREAK_ANSWERED - 1):
        b.failed("empty_choices", "no choices")
    assert b.reason is None
    b.failed("malformed_json", "not JSON: '<html>'")
    assert b.reason is not None and f"{MALFORMED_STREAK_ANSWERED} answers in a row were not" in b.reason
    assert b.take_errors() == {"malformed": 2 * MALFORMED_STREAK_ANSWERED - 1}


def test_max_wait_bounds_the_time_without_an_answer() -> None:
    clock = Clock()
    b = Breaker(10, clock)
    b.before_wait(4, None, "HTTP 429")  # within the budget
    clock.now = 7
    with pytest.raises(Stopped):
        b.before_wait(4, None, "HTTP 429")  # 7 + 4 > 10
    assert b.reason is not None and "no answer for 10 s" in b.reason
    b.start_run()  # a resume starts closed
    assert b.reason is None
    clock.now = 20
    b.answered()
    clock.now = 29
    b.failed("http_500", "HTTP 500")
    assert b.reason is None
    clock.now = 31
    b.failed("http_500", "HTTP 500")
    assert b.reason is not None


def test_a_retry_after_longer_than_max_wait_stops_at_once() -> None:
    b = Breaker(300)
    with pytest.raises(Stopped):
        b.before_wait(60, 3600, "HTTP 429: Rate limit reached")
    assert b.reason is not None and "asks to wait 3600 s (Retry-After), more than max-wait 300 s" in b.reason


# ---- issue 24: a partly failing server is never stopped; a dead one within 60 s ---------------------
def test_failures_that_finish_before_any_answer_do_not_open_it() -> None:
    """Failures come back faster than answers: the first completions of a healthy run may all be failures."""
    clock = Clock()
    b = Breaker(None, clock)
    for _ in range(30):  # 0.1 s into a run at concurrency 32, 20 % faults: only the failures are back yet
        clock.now += 0.003
        b.failed("http_500", "HTTP 500")
        b.request_done(False, "http_500", "HTTP 500 (gave up after 1 attempts)")
    assert b.reason is None


@pytest.mark.parametrize("share", [0.2, 0.45])
def test_a_server_that_answers_most_requests_is_never_stopped(share: float) -> None:
    clock = Clock()
    b = Breaker(None, clock)
    rng = random.Random(24)
    for _ in range(200_000):
        clock.now += 0.001
        if rng.random() < share:
            b.failed("http_503", "HTTP 503")
            b.request_done(False, "http_503", "HTTP 503")
        else:
            b.answered()
            b.request_done(True)
        assert b.reason is None


def test_a_full_window_mostly_failed_opens_it() -> None:
    clock = Clock()
    b = Breaker(None, clock)
    b.answered()  # the server answered once: the time rule alone would wait max-wait
    failed = int(FAIL_SHARE * WINDOW)
    for i in range(WINDOW - 1):
        b.request_done(i >= failed - 1, "timeout", "slow")
    assert b.reason is None  # the window is not full yet
    b.request_done(False, "timeout", "slow")
    assert b.reason is not None and f"{failed} of the last {WINDOW} requests failed (no answer in time" in b.reason


def test_no_answer_at_all_stops_the_run_within_60_s_by_default() -> None:
    clock = Clock()
    b = Breaker(None, clock)
    assert b.limit() == FIRST_ANSWER_WAIT == 60
    for second in range(1, 60):
        clock.now = second
        b.failed("http_500", "HTTP 500")
        b.look()
        assert b.reason is None
    clock.now = 60
    b.look()  # the watchdog: no event needed at the 60th second
    assert b.reason is not None and "no answer for 60 s" in b.reason


def test_after_an_answer_the_run_waits_the_longer_default() -> None:
    clock = Clock()
    b = Breaker(None, clock)
    clock.now = 10
    b.answered()
    assert b.limit() == MAX_WAIT == 180
    clock.now = 10 + 179
    b.failed("connection", "ServerDisconnectedError")
    b.look()
    assert b.reason is None
    clock.now = 10 + 180
    b.look()
    assert b.reason is not None and "no answer for 180 s" in b.reason


def test_max_wait_raises_the_first_answers_limit() -> None:
    clock = Clock()
    b = Breaker(300, clock)
    clock.now = 200
    b.failed("http_500", "HTTP 500")
    b.look()
    assert b.reason is None and b.limit() == 300
    clock.now = 300
    b.look()
    assert b.reason is not None and "no answer for 300 s (max-wait)" in b.reason


def test_requests_the_server_holds_without_answering_stop_the_run() -> None:
    """A server that never answers: no failure at all until the attempt timeout, the watchdog still stops it."""
    clock = Clock()
    b = Breaker(None, clock, hang=60)
    b.sent()
    clock.now = 59.9
    b.look()
    assert b.reason is None and b.due() == pytest.approx(0.1)
    clock.now = 60
    b.look()
    assert b.reason is not None and "no answer for 60 s" in b.reason
    slow = Breaker(None, clock, hang=300)  # an attempt may take 300 s (timeout=300): so may the first answer
    clock.now = 0
    slow.start_run()
    slow.sent()
    clock.now = 299
    slow.look()
    assert slow.reason is None
    clock.now = 300
    slow.look()
    assert slow.reason is not None


def test_requests_waiting_on_our_own_rate_limit_are_no_stall() -> None:
    clock = Clock()
    b = Breaker(None, clock)
    for _ in range(5):  # an answer every 100 s (rpm): never a failure, never an attempt held
        b.sent()
        clock.now += 1
        b.returned()
        b.answered()
        clock.now += 99
        b.look()
    assert b.reason is None


def test_the_reason_holds_the_whole_message() -> None:
    detail = ("HTTP 500: " + "the model server could not serve the request because the batch was too large; " * 2
              + "Not enough data to compute the answer. (gave up after 7 attempts)")
    clock = Clock()
    b = Breaker(None, clock)
    b.failed("http_500", detail)
    clock.now = 61
    b.look()
    assert b.reason is not None and b.reason.endswith(f"(last: {detail})")


def test_a_malformed_streak_after_answers_takes_longer() -> None:
    """An HTML page at once is a dead endpoint; a server that answers most requests is not stopped by a few
    malformed answers in a row among many good ones."""
    b = Breaker(None, Clock())
    rng = random.Random(5)
    for _ in range(100_000):
        if rng.random() < 0.4:
            b.failed("malformed_json", "not JSON")
        else:
            b.answered()
    assert b.reason is None


def test_a_server_failing_every_attempt_is_given_up_within_60_s_of_waiting() -> None:
    """The default retry schedule (6 retries, backoff 0.5 s doubling, with jitter) against a server whose every
    attempt fails, on a fake clock: the waits tenacity asks for are each shown to the breaker, which stops
    the request before the run's waiting passes 60 s with no answer (no real second is waited)."""
    import asyncio
    from collections import Counter

    from biasatlas.backends.http.client import ChatClient, Retryable, RetryPolicy

    clock = Clock()
    waits: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        waits.append(seconds)
        clock.now += seconds

    async def ask(breaker: Breaker, status: int, retry_after: float | None = None) -> BaseException:
        async def failing(*args: object, **kwargs: object) -> dict[str, object]:
            clock.now += 0.05  # each attempt takes 50 ms
            raise Retryable(f"http_{status}", f"HTTP {status}: overloaded", retry_after)

        client = ChatClient("http://127.0.0.1:9/v1", {}, concurrency=1, timeout=60, connect_timeout=1,
                            policy=RetryPolicy(), breaker=breaker)
        client.sleep = fake_sleep  # type: ignore[method-assign]
        client.attempt = failing  # type: ignore[method-assign]
        try:
            await client.complete({"model": "m"}, Counter())
        except (Retryable, Stopped) as exc:
            return exc
        finally:
            await client.close()
        raise AssertionError("no failure")

    given_up = asyncio.run(ask(Breaker(None, clock), 500))  # one request: 7 attempts, about 32 s of waits
    assert isinstance(given_up, Retryable) and len(waits) == 6 and 31.5 <= clock.now < 36
    assert all(0.5 * 2**k <= wait <= 0.5 * 2**k + 0.5 for k, wait in enumerate(waits)), waits  # doubling, jitter
    clock.now, waits[:] = 0.0, []
    breaker = Breaker(None, clock)
    first = asyncio.run(ask(breaker, 500))  # the next request after the first gave up: the run has waited 32 s
    second = asyncio.run(ask(breaker, 500))
    assert isinstance(first, Retryable) and isinstance(second, Stopped)
    assert 32 < clock.now <= 60 and "no answer for 60 s (max-wait) while requests kept failing" in str(second)
    assert str(second).endswith("(last: HTTP 500: overloaded)")
    # Retry-After: the server's word (capped at retry_after_max, 60 s) is waited, and shown to the breaker first
    clock.now, waits[:] = 0.0, []
    told = asyncio.run(ask(Breaker(None, clock), 429, retry_after=20))
    assert isinstance(told, Stopped) and len(waits) == 2 and all(20 <= w <= 20.25 for w in waits)
    assert "no answer for 60 s (max-wait)" in str(told) and 40 < clock.now < 41  # a third wait would pass 60 s
    clock.now, waits[:] = 0.0, []
    hour = asyncio.run(ask(Breaker(None, clock), 429, retry_after=3600))
    assert isinstance(hour, Stopped) and waits == [] and "asks to wait 3600 s (Retry-After), more than max-wait " \
        "60 s" in str(hour)
