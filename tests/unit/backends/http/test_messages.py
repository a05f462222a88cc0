"""First contact with a server, in words a user can act on: not an OpenAI-compatible server (within seconds, its
HTML page never pasted), no server at the URL, no reply within the timeout (naming --http timeout)."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from aiohttp import web

from biasatlas.backends.base import BackendError
from biasatlas.backends.http.wire import error_message
from biasatlas.backends.openai_compat import OpenAIBackend, OpenAIOptions

PAGE = """<!DOCTYPE HTML>
<html lang="en">
    <head>
        <meta charset="utf-8">
        <title>Error response</title>
    </head>
    <body>
        <h1>Error response</h1>
        <p>Error code: 501</p>
        <p>Message: Unsupported method ('POST').</p>
        <p>Error code explanation: 501 - Server does not support this operation.</p>
    </body>
</html>
"""


@pytest.fixture
def serve() -> Iterator[Callable[[Callable[[web.Application], None]], str]]:
    """Start an aiohttp app (routes added by the test) on 127.0.0.1 in a thread; its base URL (``/v1``)."""
    stops: list[Callable[[], None]] = []

    def start(routes: Callable[[web.Application], None]) -> str:
        app = web.Application()
        routes(app)
        loop = asyncio.new_event_loop()
        runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=0.05)

        async def begin() -> int:
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            return int(runner.addresses[0][1])

        thread = threading.Thread(target=loop.run_forever, daemon=True)
        thread.start()
        port = asyncio.run_coroutine_threadsafe(begin(), loop).result(10)

        async def end() -> None:
            await runner.cleanup()
            for task in [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]:
                task.cancel()

        def stop() -> None:
            asyncio.run_coroutine_threadsafe(end(), loop).result(10)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(10)

        stops.append(stop)
        return f"http://127.0.0.1:{port}/v1"

    yield start
    for stop in stops:
        stop()


def _page(status: int) -> Callable[[web.Request], Any]:
    async def handler(_: web.Request) -> web.Response:
        return web.Response(status=status, text=PAGE, content_type="text/html")

    return handler


def test_a_server_that_is_not_openai_compatible_is_one_line_within_seconds(serve: Any) -> None:
    """A plain web server (python -m http.server): GET is 404, POST is 501, both HTML pages."""
    url = serve(lambda app: (app.router.add_get("/v1/models", _page(404)),
                             app.router.add_post("/v1/chat/completions", _page(501))))
    started = time.monotonic()
    with pytest.raises(BackendError) as info:
        OpenAIBackend("m", OpenAIOptions(base_url=url))
    message = str(info.value)
    assert time.monotonic() - started < 5
    assert message.startswith(f"{url}: not an OpenAI-compatible endpoint (HTTP 501 on POST …/chat/completions")
    assert "\n" not in message and "<" not in message and "Error response" in message


def test_a_501_is_not_retried() -> None:
    from biasatlas.backends.http.client import RETRY_STATUS

    assert 501 not in RETRY_STATUS


def test_an_html_page_is_its_title_not_the_page() -> None:
    text = error_message(502, PAGE.encode())
    assert text == "HTTP 502: an HTML page (Error response)"
    assert error_message(500, b"line one\n\n   line two") == "HTTP 500: line one line two"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_no_server_at_an_http_url_says_so_and_names_the_option() -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1"
    with pytest.raises(BackendError) as info:
        OpenAIBackend("m", OpenAIOptions(base_url=url))
    message = str(info.value)
    assert message.startswith(f"no server at {url}: is it running? check --base-url")
    assert "ssl:default" not in message and "ClientConnectorError" not in message


def test_a_silent_server_names_the_timeout_option(serve: Any) -> None:
    async def silent(_: web.Request) -> web.Response:
        await asyncio.sleep(30)
        return web.json_response({})

    url = serve(lambda app: (app.router.add_get("/v1/models", silent),
                             app.router.add_post("/v1/chat/completions", silent)))
    started = time.monotonic()
    with pytest.raises(BackendError) as info:
        OpenAIBackend("m", OpenAIOptions(base_url=url, timeout=1))
    assert time.monotonic() - started < 5
    assert str(info.value) == f"no reply from {url} within 1 s (--http timeout=1)"


def test_a_request_that_times_out_during_a_run_names_the_option(serve: Any) -> None:
    from collections import Counter

    from biasatlas.backends.http.client import ChatClient, Retryable, RetryPolicy

    async def silent(_: web.Request) -> web.Response:
        await asyncio.sleep(30)
        return web.json_response({})

    url = serve(lambda app: app.router.add_post("/v1/chat/completions", silent))

    async def ask() -> str:
        client = ChatClient(url, {}, concurrency=1, timeout=0.5, connect_timeout=1, policy=RetryPolicy(max_retries=0))
        try:
            await client.complete({"model": "m", "messages": []}, Counter())
        except Retryable as exc:
            return exc.detail
        finally:
            await client.close()
        return ""

    assert asyncio.run(ask()) == "no reply within 0.5 s (--http timeout=0.5)"
