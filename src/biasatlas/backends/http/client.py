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
import email.utils
import json
import random
import time
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import aiohttp
import orjson
import yarl
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt

from biasatlas.backends.http.bridge import Deadlines

if TYPE_CHECKING:
    from biasatlas.backends.http.breaker import Breaker

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
_NO_LIMIT = contextlib.nullcontext()
# The slow path of encode_body: what orjson cannot write, or may have written as null.
_BODY_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def encode_body(body: dict[str, Any]) -> bytes:
    """A request body as POSTed: compact UTF-8 JSON, by orjson (0.7 µs a chat body against 4.4 for ``json``).

    Bodies whose JSON holds ``null`` go through the standard module instead: orjson writes NaN and
    infinities as ``null`` (a server would then apply its default: a silently different request),
    where the standard module with ``allow_nan=False`` refuses them (ValueError). The same for
    what orjson cannot write (integers past 64 bits, non-string keys): the value sent is the same.
    """
    try:
        raw: bytes | None = orjson.dumps(body)
    except TypeError:  # orjson.JSONEncodeError: past 64 bits, a key that is not a string...
        raw = None
    if raw is not None and b"null" not in raw:  # (a null of the body's own, or the word in a message: slow path)
        return raw
    try:
        return _BODY_ENCODER.encode(body).encode("utf-8")
    except ValueError as exc:
        raise ValueError(f"the request body is not JSON: {exc}") from exc


# 19 digits in a row: maybe an integer past 64 bits, which orjson would read as a float. Found as
# a run of 19 ones in the text with digits mapped to 1 and the rest to 0 (a regular expression took
# 10 µs on an answer's long floats, translate and a substring search take 1).
_DIGIT_ONES = bytes(1 if 48 <= i <= 57 else 0 for i in range(256))
_LONG_RUN = b"\x01" * 19


def parse_json(body: bytes) -> Any:
    """``json.loads(body)``, the same value, by orjson (3x faster on an answer) where it can.

    orjson refuses some of what the standard module takes (NaN, 1e400, UTF-16 text, lone
    surrogates...) and reads integers past 64 bits as floats: the first go to ``json.loads`` when
    orjson fails, the second when a run of 19 digits is in the text, so what is accepted and
    what it parses to do not change (tests compare the two).
    """
    if _LONG_RUN not in body.translate(_DIGIT_ONES):
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError:
            pass
    return json.loads(body)


def missing_text(choice: dict[str, Any]) -> str | None:
    """Why a chat answer's first ``choice`` holds no text (None: it does). An empty string is text; a
    ``message`` that is null or no object, or a ``content`` that is null, an object or a list, is not."""
    message = choice.get("message")
    if not isinstance(message, dict):
        return f"the answer has no text (message: {_kind(message)})"
    content = message.get("content")
    if not isinstance(content, str):
        return f"the answer has no text (message.content: {_kind(content)})"
    return None


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return "an object" if isinstance(value, dict) else type(value).__name__


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


def retry_after_seconds(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            parsed = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, parsed.timestamp() - time.time())


class BodyTooLarge(Exception):
    """A response body past the client's ``max_body`` (the message says so, and how to raise it)."""


async def read_body(resp: aiohttp.ClientResponse, cap: int) -> bytes:
    """The response body, or :class:`BodyTooLarge` once it passes ``cap`` bytes: a declared length past
    it at once, an endless or compressed body as soon as what was read (decompressed) passes it."""
    length = resp.content_length
    if length is not None and length > cap:
        raise BodyTooLarge(_too_large(cap, f"{length} bytes declared"))
    if length is not None and not resp.headers.get("Content-Encoding"):
        return await resp.read()  # exactly the declared length: the quick way of nearly every answer
    body = bytearray()
    async for chunk in resp.content.iter_any():
        body += chunk
        if len(body) > cap:
            raise BodyTooLarge(_too_large(cap, "more read, the rest not"))
    return bytes(body)


def _too_large(cap: int, what: str) -> str:
    from biasatlas.backends.http.options import format_size

    return (f"the answer is larger than max_body {format_size(cap)} ({what}): "
            f"--http max_body=SIZE raises it for answers this long")


def error_message(status: int, body: bytes) -> str:
    """The server's own error message when it sends one (OpenAI's ``{"error": {"message"}}``)."""
    text = body.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return f"HTTP {status}: {text[:200]}" if text else f"HTTP {status}"
    if isinstance(data, dict):
        err = data.get("error", data.get("detail", data.get("message")))
        if isinstance(err, dict):
            err = err.get("message") or err
        if err:
            return f"HTTP {status}: {str(err)[:300]}"
    return f"HTTP {status}: {text[:200]}"


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
        max_body: int = 16 * 2**20,
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
                    if status in RETRY_STATUS or status >= 500:
                        raise Retryable(f"http_{status}", message, retry_after_seconds(resp.headers))
                    raise Fatal(f"http_{status}", message)
        except aiohttp.TooManyRedirects as exc:
            raise Fatal("redirect_loop", f"the server redirects in a loop ({len(exc.history)} redirects)") from exc
        except TimeoutError as exc:  # aiohttp's timeouts subclass it
            raise Retryable("timeout", f"no complete answer within {self.timeout.total} s") from exc
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as exc:
            raise Retryable("connection", f"{type(exc).__name__}: {exc}"[:300]) from exc
        try:
            data = parse_json(body)
        except ValueError as exc:
            raise Retryable("malformed_json", f"the answer is not JSON: {body[:80]!r}") from exc
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
            sleep=asyncio.sleep,
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
        await asyncio.sleep(wait)

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
