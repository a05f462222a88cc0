"""A lean aiohttp client for OpenAI-compatible chat completions, with retries and rate limits.

Why not the ``openai`` package: with its default transport it reaches ~380 prompts/s at concurrency
32 on this project's 2-core machine and slows down at 128; a bare aiohttp session keeps up with the
server. One attempt is one POST; :meth:`ChatClient.complete` retries the transient failures
(429, 408/409/425, 5xx, timeouts, dropped connections, malformed JSON, empty ``choices``):
exponential backoff with jitter, or the server's ``Retry-After`` when it sends one, each wait
capped, and a :class:`.breaker.Breaker` that may stop the run before an attempt or a wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import aiohttp
import yarl
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt

from biasatlas.backends.http.bridge import Deadlines
from biasatlas.backends.http.wire import (
    BodyTooLarge,
    clip,
    encode_body,
    error_message,
    html_summary,
    missing_text,
    parse_json,
    read_body,
    retry_after_seconds,
)

if TYPE_CHECKING:
    from biasatlas.backends.http.breaker import Breaker

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
_NO_LIMIT = contextlib.nullcontext()


class AttemptError(Exception):
    """One failed HTTP attempt. ``cause`` is a short label used in the failure counts."""

    def __init__(self, cause: str, detail: str, retry_after: float | None = None) -> None:
        super().__init__(f"{cause}: {detail}")
        self.cause = cause
        self.detail = detail
        self.retry_after = retry_after


class Retryable(AttemptError):
    """A failure worth trying again (rate limit, server error, timeout, dropped connection...)."""


class Fatal(AttemptError):
    """A failure that another attempt cannot fix (bad request, unknown model, rejected key)."""


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 6
    backoff_initial: float = 0.5
    backoff_max: float = 30.0
    retry_after_max: float = 120.0


class _Limiter:
    """Client-side rate limits: requests and (estimated) tokens per minute, smoothed (aiolimiter)."""

    def __init__(self, rpm: float | None, tpm: float | None) -> None:
        from aiolimiter import AsyncLimiter

        self.requests = None
        self.tokens = None
        if rpm:
            # capacity of one second's worth (at least one request), refilled continuously
            cap = max(1.0, rpm / 60)
            self.requests = AsyncLimiter(cap, cap * 60 / rpm)
        if tpm:
            self.tokens = AsyncLimiter(max(1.0, tpm / 6), 10.0)  # ten seconds' worth of tokens

    async def acquire(self, tokens: int) -> None:
        if self.requests is not None:
            await self.requests.acquire()
        if self.tokens is not None:
            await self.tokens.acquire(min(float(tokens), self.tokens.max_rate))


def connection_detail(exc: BaseException, url: str) -> str:
    """A failed connection in words a user can act on: no server listening, an unknown host, a TLS failure;
    other drops as aiohttp names them."""
    from biasatlas.backends.http.setup import safe_url

    where = safe_url(url)
    if isinstance(exc, aiohttp.ClientSSLError):
        return clip(f"TLS with {where} failed: {exc}; check --base-url (http:// or https://)")
    dns = getattr(aiohttp, "ClientConnectorDNSError", None)
    if (dns is not None and isinstance(exc, dns)) or "Name or service not known" in str(exc):
        return f"no server at {where}: its host name is not known; check --base-url"
    if isinstance(exc, aiohttp.ClientConnectorError):
        reason = getattr(exc.os_error, "strerror", None)
        return f"no server at {where}: is it running? check --base-url" + (f" ({reason.lower()})" if reason else "")
    return clip(f"{type(exc).__name__}: {exc}")


class ChatClient:
    """POSTs chat-completion bodies to one server; created and used on one event loop."""

    def __init__(
        self,
        base_url: str,
        headers: dict[str, str],
        *,
        concurrency: int,
        timeout: float,
        connect_timeout: float,
        policy: RetryPolicy,
        rpm: float | None = None,
        tpm: float | None = None,
        breaker: Breaker | None = None,
        max_body: int = 8 * 2**20,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.max_body = max_body  # bytes a response body may have (options.DEFAULT_MAX_BODY)
        self.chat_url = yarl.URL(f"{self.base_url}/chat/completions")  # parsed once, not per request
        self._urls: dict[tuple[str, bool], yarl.URL] = {}
        self.headers = {"Content-Type": "application/json", "Accept": "application/json", **headers}
        self.timeout = aiohttp.ClientTimeout(total=timeout, sock_connect=connect_timeout)
        self._limits = Deadlines(timeout)  # each attempt's total time (see attempt)
        self._untimed = aiohttp.ClientTimeout(total=None, sock_connect=connect_timeout)
        self.policy = policy
        self.sleep = asyncio.sleep  # every wait between attempts (a test's fake clock replaces it)
        self.limiter = _Limiter(rpm, tpm) if (rpm or tpm) else None
        self.breaker = breaker
        connector = aiohttp.TCPConnector(limit=concurrency, limit_per_host=0, ttl_dns_cache=300)
        self.session = aiohttp.ClientSession(
            connector=connector, timeout=self.timeout, headers=self.headers, raise_for_status=False
        )

    async def close(self) -> None:
        await self.session.close()

    # ---- one attempt ------------------------------------------------------------------------
    async def get_json(self, path: str, timeout: float) -> tuple[int, Any, str]:
        """GET ``base_url + path``: (status, parsed JSON or None, content type). For setup checks."""
        async with self.session.get(f"{self.base_url}{path}", timeout=aiohttp.ClientTimeout(total=timeout)) as resp:
            ctype = resp.headers.get("content-type", "")
            try:
                body = await read_body(resp, self.max_body)
            except BodyTooLarge as exc:
                resp.close()
                return resp.status, str(exc), ctype
            try:
                return resp.status, json.loads(body), ctype
            except ValueError:
                return resp.status, body.decode("utf-8", "replace")[:200], ctype

    def url(self, path: str, root: bool = False) -> yarl.URL:
        """The URL of ``path`` under the base URL, or under the server's root (``root``), parsed once."""
        key = (path, root)
        found = self._urls.get(key)
        if found is None:
            base = self.base_url.removesuffix("/v1") if root else self.base_url
            found = self._urls[key] = yarl.URL(f"{base}{path}")
        return found

    async def attempt(
        self,
        payload: bytes,
        timeout: aiohttp.ClientTimeout | None = None,
        url: yarl.URL | None = None,
        choices: bool = True,
        text: bool = False,
    ) -> dict[str, Any]:
        """One POST (a chat completion unless ``url`` says otherwise): the parsed body, or Retryable/Fatal.

        ``choices``: the answer must hold a non-empty ``choices`` list (completions do); ``text``: its
        first choice must hold a message whose ``content`` is text (a generation; see :func:`missing_text`).
        """
        # The attempt's time limit: a timer shared by the attempts that end in the same slice of time
        # (Deadlines), not aiohttp's timer and timer context per request; a timeout given is aiohttp's.
        limit = self._limits.limit() if timeout is None else _NO_LIMIT
        try:
            async with limit, self.session.post(url or self.chat_url, data=payload,
                                                timeout=timeout or self._untimed) as resp:
                try:
                    body = await read_body(resp, self.max_body)
                except BodyTooLarge as exc:
                    resp.close()  # the rest is never read: the connection goes
                    raise Fatal("body_too_large", str(exc)) from None
                status = resp.status
                if status != 200:
                    message = error_message(status, body)
                    # 501 Not Implemented: a server that does not offer this endpoint, now or on a retry
                    if status in RETRY_STATUS or (status >= 500 and status != 501):
                        raise Retryable(f"http_{status}", message, retry_after_seconds(resp.headers))
                    raise Fatal(f"http_{status}", message)
        except aiohttp.TooManyRedirects as exc:
            raise Fatal("redirect_loop", f"the server redirects in a loop ({len(exc.history)} redirects)") from exc
        except TimeoutError as exc:  # aiohttp's timeouts subclass it
            seconds = f"{self.timeout.total:g}"
            raise Retryable("timeout", f"no reply within {seconds} s (--http timeout={seconds})") from exc
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as exc:
            raise Retryable("connection", connection_detail(exc, self.base_url)) from exc
        try:
            data = parse_json(body)
        except ValueError as exc:
            page = html_summary(body[:65536].decode("utf-8", "replace"))
            raise Retryable("malformed_json", f"the answer is {page}" if page else
                            f"the answer is not JSON: {body[:80]!r}") from exc
        if not isinstance(data, dict):
            raise Retryable("malformed_json", "the answer is not a JSON object")
        if not choices:
            return data
        listed = data.get("choices")
        if not isinstance(listed, list) or not listed or not isinstance(listed[0], dict):
            raise Retryable("empty_choices", "the answer has no choices")
        if text:
            missing = missing_text(listed[0])
            if missing:
                raise Retryable("no_text", missing)
        return data

    # ---- with retries ------------------------------------------------------------------------
    def _wait_for(self, exc: BaseException | None, failed_attempts: int) -> float:
        """Seconds before the next attempt: the server's Retry-After, else exponential with jitter.

        Either is capped: ``retry_after_max`` for the server's word, ``backoff_max`` for ours.
        """
        after = getattr(exc, "retry_after", None)
        if after is not None:
            # The server said when; a little jitter keeps the workers from returning in lockstep.
            jitter = random.uniform(0, self.policy.backoff_initial / 2)
            return min(after, self.policy.retry_after_max) + jitter
        exp = self.policy.backoff_initial * 2 ** (failed_attempts - 1)
        return min(self.policy.backoff_max, exp + random.uniform(0, self.policy.backoff_initial))

    async def complete(
        self,
        body: dict[str, Any],
        retries: Counter[str],
        est_tokens: int = 0,
        *,
        url: yarl.URL | None = None,
        choices: bool = True,
        fatal_words: tuple[str, ...] = (),
        text: bool = False,
    ) -> dict[str, Any]:
        """POST with retries; counts each retried failure in ``retries`` by cause.

        Raises the last AttemptError when the retries are spent or the failure is Fatal. A failure
        whose message holds one of ``fatal_words`` is Fatal whatever its status (a server that
        answers a request field it does not know with a 500). Every attempt is shown to the
        breaker, which may stop the request (:class:`.breaker.Stopped`) before an attempt or a wait.
        """
        payload = encode_body(body)
        call = (url, choices, fatal_words, text)
        # The first attempt runs outside tenacity: its per-attempt bookkeeping costs more than the
        # POST itself at thousands of requests a second, and most requests succeed at once.
        try:
            return await self._watched_attempt(payload, est_tokens, call)
        except Retryable as exc:
            if self.policy.max_retries == 0:
                raise
            retries[exc.cause] += 1
            first = exc
        await self._sleep_before_retry(first, 1)
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.policy.max_retries),
            wait=self._wait,
            retry=retry_if_exception_type(Retryable),
            before_sleep=self._show_wait_to_breaker,
            reraise=True,
            sleep=self.sleep,
        )
        async for attempt in retrying:
            with attempt:
                try:
                    return await self._watched_attempt(payload, est_tokens, call)
                except Retryable as exc:
                    if attempt.retry_state.attempt_number < self.policy.max_retries:
                        retries[exc.cause] += 1
                    raise
        raise AssertionError("unreachable: tenacity re-raises the last failure")  # pragma: no cover

    def _wait(self, state: RetryCallState) -> float:
        # tenacity's attempt 1 is the second attempt of the request (the first ran outside it)
        exc = state.outcome.exception() if state.outcome else None
        return self._wait_for(exc, state.attempt_number + 1)

    async def _sleep_before_retry(self, exc: Retryable, failed_attempts: int) -> None:
        wait = self._wait_for(exc, failed_attempts)
        if self.breaker is not None:
            self.breaker.before_wait(wait, exc.retry_after, exc.detail)
        await self.sleep(wait)

    def _show_wait_to_breaker(self, state: RetryCallState) -> None:
        """tenacity's before_sleep: the breaker may stop the request rather than let it wait."""
        if self.breaker is None or state.outcome is None or state.next_action is None:
            return
        exc = state.outcome.exception()
        if isinstance(exc, Retryable):
            self.breaker.before_wait(state.next_action.sleep, exc.retry_after, exc.detail)

    async def _watched_attempt(
        self, payload: bytes, est_tokens: int, call: tuple[yarl.URL | None, bool, tuple[str, ...], bool]
    ) -> dict[str, Any]:
        """One attempt, shown to the breaker (which may stop the request before it is made)."""
        breaker = self.breaker
        if breaker is not None:
            breaker.check()
        try:
            data = await self._limited_attempt(payload, est_tokens, call)
        except (Retryable, Fatal) as exc:
            if breaker is not None:
                breaker.failed(exc.cause, exc.detail)
            raise
        if breaker is not None:
            breaker.answered()
        return data

    async def _limited_attempt(
        self, payload: bytes, est_tokens: int, call: tuple[yarl.URL | None, bool, tuple[str, ...], bool]
    ) -> dict[str, Any]:
        if self.limiter is not None:
            await self.limiter.acquire(est_tokens)
        url, choices, fatal_words, text = call
        breaker = self.breaker
        if breaker is not None:
            breaker.sent()
        try:
            return await self.attempt(payload, url=url, choices=choices, text=text)
        except Retryable as exc:
            if fatal_words and exc.cause.startswith("http_") and any(w in exc.detail.lower() for w in fatal_words):
                raise Fatal(exc.cause, exc.detail) from exc
            raise
        finally:
            if breaker is not None:
                breaker.returned()
