"""Any OpenAI-compatible server as a backend: OpenAI, vLLM, Ollama, llama.cpp, TGI, LM Studio, OpenRouter.

``openai:MODEL`` with ``--base-url`` (or ``OPENAI_BASE_URL``; default OpenAI's) and the key read
from an environment variable (``OPENAI_API_KEY`` or the one named by ``api_key_env``). The key is
only ever put into the Authorization header: never into a Response, the run config, a log line or
an error message (errors are scrubbed of it).

Requests go out through a pool of ``concurrency`` workers on a background event loop and come back
in completion order, so the runner commits each answer as it arrives.

The backend id names the model *and* the server (:mod:`.http.identity`), so two servers serving
models of one name never share cached answers. Choice mode scores each option's full
log-probability through ``/completions`` where the server allows it, else from the first token's
``top_logprobs`` (:mod:`.http.choosing`); a server that returns no log-probabilities at all gets
the request again in generate mode, and the Response says so in ``info["choice_fallback"]``.
Generate mode asks for a JSON answer naming one of the prompt's options where the server takes
it (``structured="auto"``, :mod:`.http.structured`), free text otherwise.

A run that cannot succeed stops (:mod:`.http.breaker`): a rejected key or unknown model at once,
malformed answers after a few tries, a sustained failure rate, or no answer for ``max_wait``
seconds; the iterator yields what it has, then raises ``BackendStopped`` with the reason. Every
request has a total ``deadline``; failed attempts are counted by class in the run's record.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
import warnings
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

from biasatlas.backends.base import BackendError, BackendStopped, BackendWarning
from biasatlas.backends.http.asking import Asker, request_body, request_seed
from biasatlas.backends.http.breaker import Breaker, Stopped
from biasatlas.backends.http.bridge import Deadlines, stream
from biasatlas.backends.http.choosing import ChoiceScorer
from biasatlas.backends.http.client import AttemptError, ChatClient, RetryPolicy
from biasatlas.backends.http.identity import backend_id, endpoint, fleet_id
from biasatlas.backends.http.loops import event_loop_name, make_runner
from biasatlas.backends.http.options import SETTABLE, OpenAIOptions, parse_settings
from biasatlas.backends.http.setup import OPENAI_URL, check_server, needs_key, safe_url
from biasatlas.backends.http.structured import StructuredAnswers
from biasatlas.backends.http.template import RAW, ChatTemplate, load_template
from biasatlas.backends.http.usage import HttpStats
from biasatlas.records import Request, Response, scrub_text

if TYPE_CHECKING:
    from biasatlas.backends.http.fleet import FleetClient

__all__ = ["SETTABLE", "OpenAIBackend", "OpenAIOptions", "parse_settings", "request_seed"]


class OpenAIBackend:
    """Chat completions from an OpenAI-compatible server, many at a time, requests pulled as asked (LazyBackend)."""

    takes_requests_lazily = True

    def __init__(self, model: str, options: OpenAIOptions | None = None) -> None:
        if not model:
            raise BackendError("no model name: use openai:MODEL, e.g. openai:gpt-4o-mini")
        self.options = opts = options or OpenAIOptions()
        self.model = model
        self.fleet = opts.fleet  # several servers of one model (http/fleet.py), or None: one server
        if self.fleet is None and opts.endpoints:  # one endpoint and no fleet name: a plain server
            only = opts.endpoints[0]
            opts = self.options = opts.model_copy(
                update={"base_url": only.url, "endpoints": [], "concurrency": only.concurrency or opts.concurrency}
            )
        base_url = (opts.base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_URL).rstrip("/")
        #: (URL, concurrency) of each server: one for a plain server
        self.servers = [(e.url, e.concurrency or opts.concurrency) for e in opts.endpoints] or [
            (base_url, opts.concurrency)
        ]
        base_url = self.servers[0][0]
        for url, _ in self.servers:
            if not url.startswith(("http://", "https://")):
                raise BackendError(f"base URL must start with http:// or https://, got {safe_url(url)!r}")
        self.base_url = safe_url(base_url)
        self.endpoint = endpoint(base_url)
        template: ChatTemplate | str | None = None
        if opts.chat_template:
            template = RAW if opts.chat_template == RAW else load_template(opts.chat_template)
        if self.fleet is not None:  # a fleet is one model whatever its servers: adding one keeps the cache
            self.id = fleet_id(model, self.fleet, self._flags(template))
            # the pool of workers feeds every server: their concurrencies together
            opts = self.options = opts.model_copy(update={"concurrency": sum(n for _, n in self.servers)})
        else:
            self.id = backend_id(model, base_url, self._flags(template))
        key = os.environ.get(opts.api_key_env, "").strip()
        for url, _ in self.servers:
            if not key and needs_key(url):
                raise BackendError(f"no API key: set the environment variable {opts.api_key_env} for {safe_url(url)}")
            parts = urlsplit(url)
            if key and (parts.username or parts.password):
                raise BackendError(
                    f"--base-url holds credentials (user:password@) and ${opts.api_key_env} holds an API key: "
                    "give one or the other"
                )
        self._secret = key  # only for scrubbing error text; sent in the Authorization header only
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.breaker = Breaker(opts.max_wait, hang=opts.timeout)
        self.deadline = max(opts.deadline, opts.timeout)  # one attempt may always take its full timeout
        self.models: list[str] = []  # what the server lists (filled by the setup check)
        self._runner = make_runner(opts.loop)

        async def make_client() -> ChatClient:
            return ChatClient(
                base_url,
                headers,
                concurrency=opts.concurrency,
                timeout=opts.timeout,
                connect_timeout=opts.connect_timeout,
                policy=RetryPolicy(opts.max_retries, opts.backoff_initial, opts.backoff_max, opts.retry_after_max),
                rpm=opts.rpm,
                tpm=opts.tpm,
                breaker=self.breaker,
                max_body=opts.max_body,
            )

        async def make_fleet() -> FleetClient:
            from biasatlas.backends.http.fleet import FleetClient

            return FleetClient(str(self.fleet), self.servers, headers, model=model, options=opts, breaker=self.breaker)

        self._client: ChatClient | FleetClient
        if self.fleet is not None:
            self._client = self._runner.call(make_fleet())
        else:
            self._client = self._runner.call(make_client())
        self.asker = Asker(model, opts, self._client)  # what the ways of asking below share
        self.choices = ChoiceScorer(self.asker, template)
        self.structured = StructuredAnswers(self.asker)
        if opts.check:
            try:
                if self.fleet is not None:  # every server at once; those that fail start drained
                    checking = cast("FleetClient", self._client).check(opts.api_key_env)
                else:
                    checking = check_server(cast(ChatClient, self._client), model, opts.api_key_env,
                                            min(opts.timeout, 30.0), opts.timeout)
                self.models = self._runner.call(checking)
            except BackendError as exc:
                self.close()
                raise BackendError(self._scrub(str(exc))) from None
            except BaseException:  # Ctrl-C during the check: leave no task or connection behind
                self.close()
                raise
            for line in getattr(self._client, "setup_warnings", lambda _: [])(self._scrub):
                warnings.warn(line, BackendWarning, stacklevel=2)  # a fleet's server that failed its check

    @property
    def stats(self) -> HttpStats:
        """This run's counts so far."""
        return self.asker.stats

    # ---- public API -------------------------------------------------------------------------
    def generate(self, requests: Iterable[Request]) -> Iterator[Response]:
        return self._stream(requests, self._generate_one)

    def score_choices(self, requests: Iterable[Request]) -> Iterator[Response]:
        return self._stream(requests, self._choice_one)

    def _stream(
        self, requests: Iterable[Request], handle: Callable[[Request], Awaitable[Response | None]]
    ) -> Iterator[Response]:
        """Responses as they finish; once the breaker opens, stop asking and raise BackendStopped."""
        self.breaker.start_run()
        results = stream(self._runner, requests, handle, self.options.concurrency)
        try:
            for response in results:
                if response is not None:
                    yield response
                if self.breaker.reason is not None:
                    break
        finally:
            close = getattr(results, "close", None)
            if close is not None:
                close()  # cancels what is in flight: those prompts stay pending
        if self.breaker.reason is not None:
            raise BackendStopped(self._scrub(self.breaker.reason))

    def run_stats(self) -> dict[str, Any]:
        """Usage and failure counts since the last call (the runner calls it once per run), and how
        choice answers were measured and whether generate answers were structured."""
        stats, self.asker.stats = self.asker.stats, HttpStats()
        stats.errors.update(self.breaker.take_errors())
        out: dict[str, Any] = {"http": stats.as_dict(self.options.price_prompt, self.options.price_completion)}
        out["http"]["event_loop"] = event_loop_name(self._runner.loop)
        choice = self.choices.run_stats()
        if choice:
            out["choice_scoring"] = choice
        structured = self.structured.run_stats()
        if structured:
            out["structured"] = structured
        if self.fleet is not None:  # per server: requests, answered, failed, moved, drain episodes, latency
            out["fleet"] = cast("FleetClient", self._client).run_stats(self._scrub)
        return out

    def describe(self) -> dict[str, Any]:
        """What to record in a run's config: never the key, never a URL's credentials."""
        o = self.options
        fleet: dict[str, Any] = {}
        if self.fleet is not None:  # the name is the identity; the servers (no credentials) are stated
            fleet = {"base_url": None, "endpoint": None, **cast("FleetClient", self._client).describe(self._scrub)}
        return {
            "backend": "openai",
            "model": self.model,
            "base_url": self.base_url,
            "endpoint": self.endpoint,
            "structured": o.structured,
            "choice_norm": o.choice_norm,
            "choice_method": o.choice_method,
            "chat_template": o.chat_template,
            "api_key_env": o.api_key_env,
            "concurrency": o.concurrency,
            "timeout": o.timeout,
            "deadline": o.deadline,
            "max_wait": o.max_wait,
            "retry_after_max": o.retry_after_max,
            "max_body": o.max_body,
            "max_retries": o.max_retries,
            "rpm": o.rpm,
            "tpm": o.tpm,
            "price_prompt": o.price_prompt,
            "price_completion": o.price_completion,
        } | fleet

    def _flags(self, template: ChatTemplate | str | None) -> list[str]:
        """The settings that change what is asked or measured, for the backend id."""
        o = self.options
        flags = ["json"] if o.structured == "auto" else []
        if o.choice_norm == "mean":
            flags.append("mean")
        if o.choice_method == "first_token":
            flags.append("first")
        elif isinstance(template, ChatTemplate):
            flags.append(f"tpl-{template.digest}")
        elif template == RAW:
            flags.append("raw")
        return flags

    def close(self) -> None:
        runner = getattr(self, "_runner", None)
        if runner is None or runner.loop.is_closed():
            return
        client = getattr(self, "_client", None)
        if client is not None:
            with contextlib.suppress(Exception):  # closing must not hide the error that led here
                runner.call(client.close(), timeout=10)
        runner.stop()

    # ---- one request -------------------------------------------------------------------------
    def _scrub(self, text: str) -> str:
        """Text without the key, URL credentials, or anything else that looks like a secret."""
        return scrub_text(text.replace(self._secret, "***") if self._secret else text)

    def _body(self, request: Request, *, choice: bool) -> dict[str, Any]:
        """The request body (batch/bodies.py calls it on a stand-in holding ``model`` and ``options``)."""
        return request_body(self.model, self.options, request, choice=choice)

    async def _ask(self, request: Request, retries: Counter[str], choice: bool) -> dict[str, Any]:
        if choice:
            return await self.choices.score(request, retries)
        if self.structured.applies(request):
            return await self.structured.generate(request, retries)
        return await self.asker.generate(request, retries)

    async def _guarded(self, request: Request, choice: bool) -> Response | None:
        """One request, its retries and its accounting; never raises. None: not asked, or abandoned
        because the breaker opened (the prompt stays pending)."""
        if self.breaker.reason is not None:
            return None
        key = request.cache_key(self.id)
        retries: Counter[str] = Counter()
        started = time.perf_counter()
        self.stats.requests += 1
        cause = None
        deadlines = self.__dict__.get("_deadlines")  # one shared timer per slice of time (see Deadlines)
        if deadlines is None or deadlines.seconds != self.deadline:
            deadlines = self._deadlines = Deadlines(self.deadline)
        task = asyncio.current_task()
        assert task is not None
        self.breaker.enter(task)  # its watchdog may cancel the request when it opens
        try:
            async with deadlines.limit():
                fields = await self._ask(request, retries, choice)
        except asyncio.CancelledError:
            if not self.breaker.leave(task):
                raise
            self.stats.requests -= 1  # abandoned when the breaker opened: the prompt stays pending
            return None
        except Stopped:
            self.breaker.leave(task)
            self.stats.requests -= 1
            return None
        except TimeoutError:  # the request's deadline, its attempts and waits together
            cause = "deadline"
            detail = f"timeout: no answer within the request deadline of {self.deadline:g} s (--http deadline)"
            self.breaker.failed(cause, detail)
            fields = {"error": f"{detail} ({sum(retries.values()) + 1} attempts)"}
        except AttemptError as exc:
            cause = exc.cause
            detail = f"{exc} (gave up after {sum(retries.values()) + 1} attempts)"
            fields = {"error": self._scrub(detail)}
        except Exception as exc:  # a bug or an unexpected answer shape: record it, keep the run going
            cause = "internal"
            self.breaker.failed("malformed", f"{type(exc).__name__}: {exc}")
            fields = {"error": self._scrub(f"internal: {type(exc).__name__}: {exc}"[:500])}
        except BaseException:  # Ctrl-C raised inside the request: the run ends, the breaker forgets it
            self.breaker.leave(task)
            raise
        self.breaker.leave(task)
        if cause is not None:
            self.stats.failures[cause] += 1
            self.breaker.request_done(False, "malformed" if cause == "internal" else cause, fields["error"])
        else:
            self.breaker.request_done(True)
        if retries:
            self.stats.retries.update(retries)
            fields["info"] = {**fields.get("info", {}), "retries": dict(retries)}
        if "error" in fields:
            self.stats.failed += 1
        else:
            self.stats.answered += 1
            fields["latency_s"] = round(time.perf_counter() - started, 5)
        return Response(key=key, backend_id=self.id, **fields)

    async def _generate_one(self, request: Request) -> Response | None:
        return await self._guarded(request, choice=False)

    async def _choice_one(self, request: Request) -> Response | None:
        return await self._guarded(request, choice=True)
