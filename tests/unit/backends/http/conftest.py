"""Fixtures: the OpenAI-compatible stub server (tests/integration/servers/openai_stub.py), prompts, a backend,
and a tiny server whose chat answers a test writes."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Iterator
from types import ModuleType
from typing import Any

import openai_stub as stub_mod  # tests/integration/servers/, on pytest's pythonpath (pyproject.toml)
import pytest

from biasatlas.backends.openai_compat import OpenAIBackend, OpenAIOptions
from biasatlas.records import Message, Prompt


@pytest.fixture(scope="session")
def stub() -> ModuleType:
    """The stub's module: start_stub_thread, render, option_logprob..."""
    return stub_mod


@pytest.fixture(scope="session")
def make_prompts() -> Any:
    return prompts


@pytest.fixture(scope="session")
def make_backend() -> Any:
    return backend


def prompts(n: int, options: tuple[str, ...] = ("Yes", "No"), lang: str = "en") -> list[Prompt]:
    return [
        Prompt(
            probe="http",
            language=lang,
            options=options,
            meta={"i": i, "options": list(options)},
            messages=(Message(role="user", content=f"Question {i} about {'/'.join(options)}?"),),
        )
        for i in range(n)
    ]


def backend(server: Any, **opts: Any) -> OpenAIBackend:
    defaults: dict[str, Any] = {"base_url": server.url, "concurrency": 8, "timeout": 5.0, "backoff_initial": 0.02}
    return OpenAIBackend("stub-model", OpenAIOptions(**{**defaults, **opts}))


Handler = Callable[[Any, int], Awaitable[Any]]


@pytest.fixture
def tiny_server() -> Iterator[Callable[[Handler], str]]:
    """Start a tiny aiohttp server on 127.0.0.1 (a thread of this process) whose chat completions are
    ``await handler(request, n)`` (n: the requests so far, from 1) and whose ``GET /v1/models`` lists
    ``stub-model``; returns its base URL. Stopped after the test."""
    from aiohttp import web

    stops: list[Callable[[], None]] = []

    def start(handler: Handler) -> str:
        count = [0]

        async def chat(request: web.Request) -> web.StreamResponse:
            count[0] += 1
            return await handler(request, count[0])  # type: ignore[no-any-return]

        async def models(_: web.Request) -> web.StreamResponse:
            return web.json_response({"object": "list", "data": [{"id": "stub-model", "object": "model"}]})

        app = web.Application()
        app.router.add_post("/v1/chat/completions", chat)
        app.router.add_get("/v1/models", models)
        loop = asyncio.new_event_loop()
        runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=0.05)

        async def begin() -> int:
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            return int(runner.addresses[0][1])

        thread = threading.Thread(target=loop.run_forever, daemon=True, name="tiny-server")
        thread.start()
        port = asyncio.run_coroutine_threadsafe(begin(), loop).result(10)

        async def end() -> None:
            await runner.cleanup()
            rest = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in rest:  # handlers that never answer
                task.cancel()
            await asyncio.gather(*rest, return_exceptions=True)

        def stop() -> None:
            asyncio.run_coroutine_threadsafe(end(), loop).result(10)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(10)
            loop.close()

        stops.append(stop)
        return f"http://127.0.0.1:{port}/v1"

    yield start
    for stop in stops:
        stop()
