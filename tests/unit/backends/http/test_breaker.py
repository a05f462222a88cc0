"""The circuit breaker's rules and the error classes, on a clock the test moves."""

from __future__ import annotations

import pytest

from biasatlas.backends.http.breaker import MALFORMED_STREAK, MIN_FAILED, WINDOW, Breaker, Stopped, error_class


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


def test_a_sustained_failure_rate_opens_it() -> None:
    b = Breaker(60)
    for _ in range(MIN_FAILED - 1):
        b.request_done(False, "http_500", "HTTP 500")
    assert b.reason is None  # four failures: not yet
    b.request_done(False, "http_500", "HTTP 500")
    assert b.reason is not None and f"{MIN_FAILED} of the last {MIN_FAILED} requests failed" in b.reason
    b = Breaker(60)
    for _ in range(15):
        b.request_done(True)
    for _ in range(WINDOW // 2 - 1):
        b.request_done(False, "timeout", "slow")
    assert b.reason is None  # 9 of the last 20
    b.request_done(False, "timeout", "slow")
    assert b.reason is not None and "10 of the last 20 requests failed (no answer in time" in b.reason


def test_malformed_answers_in_a_row_open_it_and_an_answer_resets_the_count() -> None:
    b = Breaker(60)
    for _ in range(MALFORMED_STREAK - 1):
        b.failed("malformed_json", "not JSON")
    b.answered()
    for _ in range(MALFORMED_STREAK - 1):
        b.failed("empty_choices", "no choices")
    assert b.reason is None
    b.failed("malformed_json", "not JSON: '<html>'")
    assert b.reason is not None and "not OpenAI API answers" in b.reason
    assert b.take_errors() == {"malformed": 2 * MALFORMED_STREAK - 1}


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
