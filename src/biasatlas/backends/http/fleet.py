"""A fleet: one model served by several OpenAI-compatible endpoints, one :class:`ChatClient` each.

:class:`FleetClient` offers what the backend uses of a ChatClient (``complete``, ``url``,
``get_json``, ``close``) and spreads the attempts (the rules in full: docs/http.md, "Fleets"):

* dispatch: to the live endpoint with the fewest outstanding for its concurrency, never past it;
* draining: ``failures`` failed attempts in a row (connection, 5xx, timeout) or a stall (nothing
  finished for ``stall`` seconds while some are out) drain an endpoint, and cancel its attempts in
  flight, which go elsewhere; it comes back once ``GET /models`` (every ``health_every`` s) lists the model;
* exactly once: one attempt of a request out at a time; a retry goes to an endpoint the request has
  not failed on, at once, else after a ChatClient's backoff; ``max_retries`` counts over all
  endpoints, a move off a drained endpoint is no failure (a retry of cause ``drained``);
* every endpoint drained: attempts wait, each wait shown to the breaker (its ``max_wait`` rule).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import aiohttp
import yarl

from biasatlas.backends.base import BackendError
from biasatlas.backends.http.breaker import Breaker, error_class
from biasatlas.backends.http.client import ChatClient, Fatal, Retryable, RetryPolicy
from biasatlas.backends.http.identity import endpoint
from biasatlas.backends.http.setup import check_server, safe_url
from biasatlas.backends.http.usage import EndpointStats
from biasatlas.backends.http.wire import encode_body

if TYPE_CHECKING:
    from biasatlas.backends.http.options import OpenAIOptions

#: failure classes that count towards draining an endpoint (a 4xx is the request's fault, a 429 a busy server)
DRAINING = frozenset({"connection", "server", "timeout"})
#: seconds a retry waits between looks for a free endpoint it has not failed on
POLL = 0.01
#: seconds between the breaker's looks while every endpoint is drained
ALL_DRAINED_STEP = 1.0


class _Moved(Exception):
    """The attempt was cancelled because its endpoint was drained: ask again elsewhere."""


class Endpoint:
    """One server of the fleet, its client and its state (used on the fleet's event loop only)."""

    def __init__(self, index: int, client: ChatClient, concurrency: int) -> None:
        self.index = index
        self.client = client
        self.url = safe_url(client.base_url)
        self.concurrency = concurrency
        self.outstanding = 0
        self.live = True
        self.failures = 0  # draining failures in a row
        self.epoch = 0  # drains so far: an attempt begun in an earlier epoch was cancelled by a drain
        self.inflight: set[asyncio.Future[dict[str, Any]]] = set()
        self.progress = time.monotonic()  # the last attempt finished (or the first of a busy spell began)
        self.reason: str | None = None  # why it is drained
        self.setup: str | None = None  # why the setup check failed, if it did
        self.stats = EndpointStats()
        self.health: asyncio.Task[None] | None = None


class FleetClient:
    """Chat completions from several servers of one model; created and used on one event loop."""

    clock = staticmethod(time.monotonic)  # progress and stalls (a test's fake clock replaces it)
    sleep = staticmethod(asyncio.sleep)  # back-off, health checks, the stall watchdog

    def __init__(
        self, name: str, endpoints: Sequence[tuple[str, int]], headers: dict[str, str], *, model: str,
        options: OpenAIOptions, breaker: Breaker | None = None,
    ) -> None:
        """``endpoints``: (base URL, concurrency) of each server; ``options``: timeouts, retries, the
        fleet settings, and rate limits (``rpm``, ``tpm``), which apply to each server."""
        if not endpoints:
            raise BackendError(f"fleet {name!r} has no endpoint")
        o = options
        self.name, self.model, self.breaker = name, model, breaker
        self.policy = RetryPolicy(o.max_retries, o.backoff_initial, o.backoff_max, o.retry_after_max)
        self.max_failures, self.health_every = o.fleet_failures, o.fleet_health_every
        self.stall = o.fleet_stall if o.fleet_stall is not None else o.timeout  # see OpenAIOptions.fleet_stall
        self.check_timeout = min(o.timeout, 30.0)
        self.options_timeout = o.timeout  # named in a timeout's message (--http timeout)
        self.endpoints = [
            Endpoint(i, ChatClient(url, headers, concurrency=n, timeout=o.timeout, connect_timeout=o.connect_timeout,
                                   policy=self.policy, rpm=o.rpm, tpm=o.tpm, max_body=o.max_body), n)
            for i, (url, n) in enumerate(endpoints)
        ]
        self.base_url = self.endpoints[0].client.base_url  # what setup messages name before a fleet line
        self._routes: dict[yarl.URL, tuple[str, bool]] = {}
        self._turn = 0
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._watchdog = asyncio.get_running_loop().create_task(self._watch())

    # ---- what the backend uses of a ChatClient ---------------------------------------------------
    def url(self, path: str, root: bool = False) -> yarl.URL:
        """A stand-in URL for ``path``; :meth:`complete` sends it to the endpoint it picks."""
        found = yarl.URL.build(scheme="fleet", host="fleet", path=path, query={"root": "1"} if root else {})
        self._routes.setdefault(found, (path, root))
        return found

    async def get_json(self, path: str, timeout: float) -> tuple[int, Any, str]:
        """GET ``path`` from the least busy live endpoint (the first one when none is live)."""
        live = [ep for ep in self.endpoints if ep.live] or self.endpoints
        ep = min(live, key=lambda e: e.outstanding / e.concurrency)
        return await ep.client.get_json(path, timeout)

    async def check(self, key_env: str) -> list[str]:
        """The setup check of every endpoint at once: those that fail it start drained (and come back
        after a health check); a BackendError (the first endpoint's) when none passes."""
        results = await asyncio.gather(
            *(check_server(ep.client, self.model, key_env, self.check_timeout, self.options_timeout)
              for ep in self.endpoints),
            return_exceptions=True,
        )
        listed: list[str] = []
        errors: list[BackendError] = []
        for ep, result in zip(self.endpoints, results, strict=True):
            if isinstance(result, BackendError):
                errors.append(result)
                ep.setup = str(result)
                self._drain(ep, f"setup check: {result}")
            elif isinstance(result, BaseException):
                raise result
            else:
                listed = listed or result
        if len(errors) == len(self.endpoints):
            raise BackendError(f"no endpoint of fleet {self.name!r} passes the setup check: {errors[0]}")
        return listed

    def setup_warnings(self, scrub: Callable[[str], str]) -> list[str]:
        """A line per endpoint that failed the setup check: the run goes on without it."""
        return [f"fleet {self.name}: {ep.url} failed its setup check ({scrub(ep.setup)}); it is drained "
                "until GET /models lists the model" for ep in self.endpoints if ep.setup]

    async def close(self) -> None:
        tasks = [self._watchdog, *(ep.health for ep in self.endpoints if ep.health is not None)]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.gather(*(ep.client.close() for ep in self.endpoints), return_exceptions=True)

    def describe(self, scrub: Callable[[str], str]) -> dict[str, Any]:
        """The fleet for a run's config: its name, servers (no credentials) and settings; ``scrub``
        cleans a setup error (a server's text may echo the key)."""
        servers = [{"url": ep.url, "endpoint": endpoint(ep.client.base_url), "concurrency": ep.concurrency,
                    **({"setup": scrub(ep.setup)} if ep.setup else {})} for ep in self.endpoints]
        return {"fleet": self.name, "endpoints": servers, "fleet_failures": self.max_failures,
                "fleet_stall": self.stall, "fleet_health_every": self.health_every}

    def run_stats(self, scrub: Callable[[str], str]) -> dict[str, Any]:
        """Per-endpoint counts and latencies since the last call, and which endpoints are drained now."""
        rows = []
        for ep in self.endpoints:
            stats, ep.stats = ep.stats, EndpointStats()
            row = {"url": ep.url, "concurrency": ep.concurrency, **stats.as_dict(), "live": ep.live}
            if ep.reason:
                row["drained_because"] = scrub(ep.reason)
            rows.append(row)
        return {"name": self.name, "endpoints": rows}

    async def complete(self, body: dict[str, Any], retries: Counter[str], est_tokens: int = 0, *,
                       url: yarl.URL | None = None, choices: bool = True,
                       fatal_words: tuple[str, ...] = (), text: bool = False) -> dict[str, Any]:
        """POST with retries over the fleet (see the module); as :meth:`ChatClient.complete` otherwise."""
        payload = encode_body(body)
        route = None if url is None else self._routes[url]
        failed_on: set[int] = set()
        failures = 0
        while True:
            if self.breaker is not None:
                self.breaker.check()
            ep = await self._take(failed_on)
            try:
                return await self._attempt(ep, payload, est_tokens, (route, choices, text), fatal_words)
            except _Moved:
                retries["drained"] += 1
            except Retryable as exc:
                if failures >= self.policy.max_retries:
                    raise
                failures += 1
                retries[exc.cause] += 1
                failed_on.add(ep.index)
                if not any(e.live and e.index not in failed_on for e in self.endpoints):
                    await self._back_off(exc, failures)

    # ---- dispatch --------------------------------------------------------------------------------
    def _pick(self, avoid: set[int]) -> Endpoint | None:
        """The live endpoint with a free slot and the fewest outstanding for its concurrency, not in ``avoid``."""
        n = len(self.endpoints)
        start = self._turn
        self._turn = (start + 1) % n
        best: Endpoint | None = None
        best_load = 1.0
        for i in range(n):
            ep = self.endpoints[(start + i) % n]
            if not ep.live or ep.index in avoid:
                continue
            load = ep.outstanding / ep.concurrency
            if load < best_load:
                best, best_load = ep, load
        return best

    async def _take(self, failed_on: set[int]) -> Endpoint:
        """An endpoint with a slot reserved for this attempt; waits while there is none."""
        while True:
            fresh = bool(failed_on) and any(e.live and e.index not in failed_on for e in self.endpoints)
            ep = self._pick(failed_on if fresh else set())
            if ep is not None:
                if ep.outstanding == 0:
                    ep.progress = self.clock()  # a stall is counted from the first outstanding attempt
                ep.outstanding += 1
                return ep
            if fresh:  # an endpoint this request has not failed on is busy: look again shortly
                await asyncio.sleep(POLL)
            else:
                await self._wait()

    async def _wait(self) -> None:
        """Until a slot frees or an endpoint comes back; while every endpoint is drained, each step
        is shown to the breaker, which stops the run after ``max_wait`` without an answer."""
        all_drained = not any(ep.live for ep in self.endpoints)
        if all_drained and self.breaker is not None:
            reasons = "; ".join(f"{ep.url}: {ep.reason}" for ep in self.endpoints)
            self.breaker.before_wait(ALL_DRAINED_STEP, None, f"every endpoint of fleet {self.name} is drained "
                                                             f"({reasons})")
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:  # the timeout is a safety net: no wake-up is needed for correctness, only for speed
            async with asyncio.timeout(ALL_DRAINED_STEP):
                await waiter
        except TimeoutError:
            with contextlib.suppress(ValueError):  # not woken: still queued (rare: a linear remove is fine)
                self._waiters.remove(waiter)

    def _wake(self, everyone: bool = False) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                if not everyone:
                    return

    async def _attempt(
        self,
        ep: Endpoint,
        payload: bytes,
        est_tokens: int,
        call: tuple[tuple[str, bool] | None, bool, bool],  # route; answer must hold choices, text
        fatal_words: tuple[str, ...],
    ) -> dict[str, Any]:
        """One attempt on ``ep`` (its slot reserved by :meth:`_take`), counted and shown to the breaker."""
        route, choices, text = call
        epoch = ep.epoch
        started = time.perf_counter()
        try:
            if ep.client.limiter is not None:
                await ep.client.limiter.acquire(est_tokens)
                if ep.epoch != epoch:
                    ep.stats.moved += 1
                    raise _Moved
                ep.progress = self.clock()  # a wait of our own rate limit is no stall of the server
            ep.stats.requests += 1
            target = None if route is None else ep.client.url(*route)
            task = asyncio.ensure_future(ep.client.attempt(payload, url=target, choices=choices, text=text))
            ep.inflight.add(task)
            if self.breaker is not None:
                self.breaker.sent()
            try:
                data = await task
            finally:
                ep.inflight.discard(task)
                if self.breaker is not None:
                    self.breaker.returned()
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if ep.epoch != epoch and (current is None or current.cancelling() == 0):
                ep.stats.moved += 1  # the drain cancelled it, not the caller: ask again elsewhere
                raise _Moved from None
            raise
        except Retryable as exc:  # a refusal in a 5xx (fatal_words) is Fatal: the request's fault, no drain
            if fatal_words and exc.cause.startswith("http_") and any(w in exc.detail.lower() for w in fatal_words):
                self._failed(ep, refused := Fatal(exc.cause, exc.detail))
                raise refused from exc
            self._failed(ep, exc)
            raise
        except Fatal as exc:
            self._failed(ep, exc)
            raise
        finally:
            ep.outstanding -= 1
            ep.progress = self.clock()
            self._wake()
        ep.failures = 0
        ep.stats.answered += 1
        ep.stats.latencies.append(time.perf_counter() - started)
        if self.breaker is not None:
            self.breaker.answered()
        return data

    def _failed(self, ep: Endpoint, exc: Retryable | Fatal) -> None:
        ep.stats.failed += 1
        if self.breaker is not None:
            self.breaker.failed(exc.cause, exc.detail)
        if isinstance(exc, Retryable) and error_class(exc.cause) in DRAINING:
            ep.failures += 1
            if ep.live and ep.failures >= self.max_failures:
                self._drain(ep, f"{ep.failures} failed attempts in a row (last: {exc.detail[:120]})")

    async def _back_off(self, exc: Retryable, failures: int) -> None:
        """A ChatClient's wait before its next attempt (Retry-After, else exponential with jitter, capped);
        shown to the breaker first. Each attempt out is shown to it too (its rule 4: requests held)."""
        policy = self.policy
        if exc.retry_after is not None:
            wait = min(exc.retry_after, policy.retry_after_max) + random.uniform(0, policy.backoff_initial / 2)
        else:
            wait = min(policy.backoff_max,
                       policy.backoff_initial * 2 ** (failures - 1) + random.uniform(0, policy.backoff_initial))
        if self.breaker is not None:
            self.breaker.before_wait(wait, exc.retry_after, exc.detail)
        await self.sleep(wait)

    # ---- draining and coming back ----------------------------------------------------------------
    def _drain(self, ep: Endpoint, reason: str) -> None:
        """No new attempts to ``ep``; its attempts in flight are cancelled (and asked elsewhere)."""
        ep.live = False
        ep.epoch += 1
        ep.reason = reason
        ep.failures = 0
        ep.stats.drained += 1
        for task in list(ep.inflight):
            task.cancel()
        if ep.health is None or ep.health.done():
            ep.health = asyncio.get_running_loop().create_task(self._heal(ep))

    async def _heal(self, ep: Endpoint) -> None:
        """Every ``health_every`` seconds ``GET /models``; back in the fleet once it lists the model."""
        while True:
            await self.sleep(self.health_every)
            try:
                status, data, _ctype = await ep.client.get_json("/models", self.check_timeout)
            except (aiohttp.ClientError, TimeoutError, ValueError):
                continue
            listed = data.get("data") if isinstance(data, dict) else None
            if status == 200 and isinstance(listed, list) and any(
                isinstance(m, dict) and m.get("id") == self.model for m in listed
            ):
                ep.live, ep.reason, ep.failures = True, None, 0
                ep.progress = self.clock()
                self._wake(everyone=True)
                return

    async def _watch(self) -> None:
        """Drain an endpoint that has answered nothing for ``stall`` seconds with attempts outstanding."""
        every = min(1.0, self.stall / 4)
        while True:
            await self.sleep(every)
            self.look_for_stalls()

    def look_for_stalls(self) -> None:
        """One look of :meth:`_watch` (``clock`` and ``sleep`` are the fleet's: a test's fake clock replaces them)."""
        now = self.clock()
        for ep in self.endpoints:
            if ep.live and ep.outstanding and now - ep.progress > self.stall:
                self._drain(ep, f"no answer for {self.stall:g} s with {ep.outstanding} requests outstanding")
