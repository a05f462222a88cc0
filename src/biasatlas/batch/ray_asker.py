"""The Ray Data stage of `batch run --engine ray`: one actor POSTs its lines' bodies and writes the answers.

Each actor of the pool holds one :class:`~biasatlas.backends.http.client.ChatClient` per endpoint (the
HTTP backend's client: the same retries with backoff and ``Retry-After``, the same split of failures
into retryable and fatal, the same body-size limit) on an event loop of its own, and sends each line
to the endpoint its ``custom_id`` hashes to, so every actor spreads its lines over all endpoints and
no endpoint gets more than ``actors x per_actor`` requests at once.

An answer is appended to the actor's own output file, in the OpenAI Batch output format, and flushed
before the next one is written: a killed job leaves files whose every whole line is an answer (a line
cut by the kill is reported by ``batch import`` and asked again by the rerun). Lines whose answer the
output folder holds already (``skip``) are not asked; the driver hands each request over once
(:mod:`biasatlas.batch.work`), with the other ids that get its answer.

Each endpoint has a :class:`~biasatlas.backends.http.breaker.Breaker` of its own in each actor, the live
runner's: a dead server (connection refused, no answer for ``max_wait`` seconds, a rejected key, an
unknown model) opens it, and every line the actor has for that endpoint comes back ``stopped``, not
asked and not written, so the driver can end the job in about a minute instead of retrying every line.
A server that answers most requests never opens it. Time the actor sits without a batch does not count
as time without an answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

#: the OpenAI Batch output line of an answered request
ANSWERED = 200


def endpoint_of(custom_id: str, count: int) -> int:
    """The endpoint (0..count-1) a line goes to: a stable hash of its id, the same in every actor."""
    digest = hashlib.sha256(custom_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big") % count


def output_record(custom_id: str, body: dict[str, Any] | None, error: tuple[str, str] | None) -> dict[str, Any]:
    """One OpenAI Batch output line: the response's body, or the error (code, message) that ended the line."""
    line_id = f"batch_req_{uuid.uuid4().hex}"
    if error is not None:
        return {"id": line_id, "custom_id": custom_id, "response": None,
                "error": {"code": error[0], "message": error[1]}}
    return {"id": line_id, "custom_id": custom_id,
            "response": {"status_code": ANSWERED, "request_id": line_id, "body": body}, "error": None}


class LineAsker:
    """A Ray Data actor: asks the lines of each batch it is given (``map_batches`` with an actor pool)."""

    def __init__(self, endpoints: list[str], out: str, *, per_actor: int, timeout: float, connect_timeout: float,
                 max_retries: int, key_env: str, skip: frozenset[str] = frozenset(),
                 max_wait: float | None = None) -> None:
        from biasatlas.backends.http.breaker import Breaker
        from biasatlas.backends.http.client import RetryPolicy

        self.endpoints = endpoints
        self.per_actor = per_actor
        self.timeout, self.connect_timeout = timeout, connect_timeout
        self.policy = RetryPolicy(max_retries=max_retries)
        # one breaker per endpoint: a dead server among live ones stops its own lines (the live runner's rules)
        self.breakers = [Breaker(max_wait, hang=timeout) for _ in endpoints]
        self.idle_since: float | None = None
        key = os.environ.get(key_env, "").strip()  # read where the request is made: never shipped as data
        self.headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.skip = skip
        self.loop = asyncio.new_event_loop()
        self.clients: list[Any] = []
        Path(out).mkdir(parents=True, exist_ok=True)
        self.path = Path(out) / f"ray-{uuid.uuid4().hex[:12]}.jsonl"
        self.handle = self.path.open("a", encoding="utf-8")

    def _open(self) -> list[Any]:
        from biasatlas.backends.http.client import ChatClient

        if not self.clients:  # made on the loop that uses them (aiohttp binds a session to its loop)
            self.clients = [ChatClient(url, self.headers, concurrency=self.per_actor, timeout=self.timeout,
                                       connect_timeout=self.connect_timeout, policy=self.policy, breaker=breaker)
                            for url, breaker in zip(self.endpoints, self.breakers, strict=True)]
        return self.clients

    def __call__(self, batch: dict[str, Any]) -> dict[str, list[Any]]:
        """Ask every line of ``batch`` (a column ``text`` of JSONL lines, and optionally ``also``: JSON lists of
        the other ids that get a line's answer, :mod:`biasatlas.batch.work`); one status row per id answered."""
        texts = [str(t) for t in batch["text"]]
        also = [json.loads(str(a)) if a else [] for a in batch["also"]] if "also" in batch else [[] for _ in texts]
        self._resume_clocks()
        try:
            return self.loop.run_until_complete(self._ask_all(texts, also))
        finally:
            self.idle_since = time.monotonic()

    def _resume_clocks(self) -> None:
        """The breakers' "no answer since" clocks skip the time the actor waited for this batch: a server is
        not dead because Ray had nothing to hand over."""
        if self.idle_since is None:  # the first batch: the clock starts now, not when the actor was made
            for breaker in self.breakers:
                breaker.out_since = breaker.last_answer = breaker.clock()
            return
        idle = max(0.0, time.monotonic() - self.idle_since)
        for breaker in self.breakers:
            breaker.last_answer += idle
            breaker.out_since += idle

    async def _ask_all(self, texts: list[str], also: list[list[str]] | None = None) -> dict[str, list[Any]]:
        clients = self._open()
        limits = [asyncio.Semaphore(self.per_actor) for _ in clients]
        rows: dict[str, list[Any]] = {"custom_id": [], "status": [], "cause": [], "endpoint": [], "file": []}

        async def ask(text: str, others: list[str]) -> None:
            status, cause, custom_id, where = await self._ask_one(text, clients, limits, others)
            for answered in [custom_id, *(others if custom_id and status != "skipped" else [])]:
                rows["custom_id"].append(answered)
                rows["status"].append(status)
                rows["cause"].append(cause)
                rows["endpoint"].append(where)
                rows["file"].append(self.path.name)

        await asyncio.gather(*(ask(t, a) for t, a in zip(texts, also or [[] for _ in texts], strict=True)
                               if t.strip()))
        return rows

    async def _ask_one(
        self, text: str, clients: list[Any], limits: list[asyncio.Semaphore], also: list[str] | None = None
    ) -> tuple[str, str, str, str]:
        from biasatlas.backends.http.breaker import Stopped
        from biasatlas.backends.http.client import AttemptError

        try:
            line = json.loads(text)
            custom_id, body = str(line["custom_id"]), line["body"]
            if not isinstance(body, dict):
                raise TypeError("body is not an object")
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            return "unreadable", f"not a batch input line ({type(exc).__name__})", "", ""
        if custom_id in self.skip:
            return "skipped", "", custom_id, ""
        index = endpoint_of(custom_id, len(clients))
        breaker, where = self.breakers[index], self.endpoints[index]
        retries: Counter[str] = Counter()
        async with limits[index]:
            answer: dict[str, Any] | None = None
            error: tuple[str, str] | None = None
            if breaker.reason is not None:  # the endpoint is given up: the line stays unasked (a rerun asks it)
                return "stopped", breaker.reason, custom_id, where
            try:
                answer, status, cause = await clients[index].complete(body, retries), "answered", ""
                breaker.request_done(True)
            except Stopped as exc:
                return "stopped", str(exc), custom_id, where
            except AttemptError as exc:
                error, status, cause = (exc.cause, exc.detail), "error", exc.cause
                breaker.request_done(False, exc.cause, exc.detail)
            except Exception as exc:  # a line the client cannot send (too deep to encode...): its own error
                error, status, cause = ("internal", f"{type(exc).__name__}: {exc}"[:300]), "error", "internal"
        # the answer under the line's id and under every id that asks the very same body (asked once)
        for answered in [custom_id, *(also or [])]:
            record = output_record(answered, answer, error)
            self.handle.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
            self.handle.flush()  # a kill loses at most the line being written
        return status, cause, custom_id, where

    def close(self) -> None:
        """Close the output file and the clients (Ray ends the actor's process; tests call it)."""
        if not self.handle.closed:
            self.handle.close()
        if self.loop.is_closed():
            return
        clients, self.clients = self.clients, []
        if clients:
            self.loop.run_until_complete(_close_all(clients))
        self.loop.close()

    def __del__(self) -> None:  # pragma: no cover - the actor's process ends
        # at interpreter exit the loop or aiohttp may be gone already: nothing is left to save
        with contextlib.suppress(Exception):
            self.close()


async def _close_all(clients: list[Any]) -> None:
    await asyncio.gather(*(c.close() for c in clients))
