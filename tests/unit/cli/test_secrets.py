"""Secrets never reach the terminal's resume line, the study, the report or an export, even when a server
echoes them inside a normal (200) answer."""

from __future__ import annotations

import asyncio
import base64
import sqlite3
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from aiohttp import web
from typer.testing import CliRunner

from biasatlas.cli.common import resume_command
from biasatlas.cli.main import app
from biasatlas.records import Message, Prompt, Request, Response
from biasatlas.store import DB_NAME, Store

runner = CliRunner()
KEY = "canary-key-7f3a9c21d4e5"  # no provider prefix: only the known value masks it
PASSWORD = "hunter2-canary-pw"


def test_the_resume_line_hides_a_url_password(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", ["biasatlas", "run", "contact", "--base-url", f"http://user:{PASSWORD}@h:8/v1",
                                      f"--base-url=https://u:{PASSWORD}@g/v1", "--study", "s"])
    line = resume_command()
    assert PASSWORD not in line
    assert line == "biasatlas run contact --base-url 'http://***@h:8/v1' '--base-url=https://***@g/v1' --study s"


@contextmanager
def echo_server() -> Iterator[str]:
    """An OpenAI-compatible server whose answers repeat the credentials it was sent (as some proxies do)."""

    def credentials(request: web.Request) -> str:
        auth = request.headers.get("Authorization", "")
        if auth.startswith("Basic "):
            auth = base64.b64decode(auth[6:]).decode()
        return auth

    async def models(request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "echo", "object": "model"}]})

    async def chat(request: web.Request) -> web.Response:
        message = {"role": "assistant", "content": f"Yes. You sent: {credentials(request)}."}
        return web.json_response({"id": "c", "object": "chat.completion", "model": "echo",
                                  "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                                  "usage": {"prompt_tokens": 5, "completion_tokens": 5}})

    app_ = web.Application()
    app_.router.add_get("/v1/models", models)
    app_.router.add_post("/v1/chat/completions", chat)
    loop = asyncio.new_event_loop()
    app_runner = web.AppRunner(app_, access_log=None, handle_signals=False)

    async def start() -> int:
        await app_runner.setup()
        site = web.TCPSite(app_runner, "127.0.0.1", 0)
        await site.start()
        return int(app_runner.addresses[0][1])

    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    port = asyncio.run_coroutine_threadsafe(start(), loop).result(30)
    try:
        yield f"127.0.0.1:{port}/v1"
    finally:
        asyncio.run_coroutine_threadsafe(app_runner.cleanup(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def _everything_written(study: Path, out: Path) -> str:
    parts = [p.read_bytes().decode("utf-8", "replace") for p in [*study.rglob("*"), *out.rglob("*")] if p.is_file()]
    with sqlite3.connect(study / DB_NAME) as conn:  # the database's text, whatever its pages hold
        for table in ("responses", "errors", "runs"):
            parts += [str(row) for row in conn.execute(f"SELECT * FROM {table}")]
    return "\n".join(parts)


@pytest.mark.parametrize("how", ["key", "password"])
def test_a_secret_echoed_in_answers_is_masked_and_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          how: str) -> None:
    study, out = tmp_path / "s", tmp_path / "out"
    with echo_server() as where:
        if how == "key":
            monkeypatch.setenv("OPENAI_API_KEY", KEY)
            url, secret = f"http://{where}", KEY
        else:
            monkeypatch.delenv("OPENAI_API_KEY", raising=False)
            url, secret = f"http://user:{PASSWORD}@{where}", PASSWORD
        result = runner.invoke(app, ["run", "contact", "--model", "openai:echo", "--base-url", url, "--lang", "en",
                                     "--axis", "ability", "--limit", "6", "--mode", "generate", "--structured", "off",
                                     "--study", str(study)])
    assert result.exit_code == 0, result.output
    assert runner.invoke(app, ["report", "--study", str(study)]).exit_code == 0
    assert runner.invoke(app, ["export", "--study", str(study), "--to", str(out), "--format", "csv"]).exit_code == 0
    assert secret not in _everything_written(study, out)
    with Store(study) as store:
        texts = store.frame("contact")["text"].tolist()
        run = store.last_run("contact")
    assert len(texts) == 6 and all("***" in t for t in texts)
    assert run is not None and run["totals"]["info"]["secrets_masked"] == 6


def test_the_store_masks_hidden_values_in_answers_errors_and_info_but_not_short_ones(tmp_path: Path) -> None:
    request = Request(prompt=Prompt(probe="p", language="en", messages=(Message(role="user", content="Q?"),)))
    with Store(tmp_path) as store:
        store.hide([KEY, "short"])
        store.save_many([
            (Response(key="a", backend_id="m", text=f"{KEY} and {KEY}, short", info={"raw": f'{{"k": "{KEY}"}}'}),
             request),
            (Response(key="b", backend_id="m", error=f"server said {KEY}"), request),
        ])
        text, info = store.conn.execute("SELECT text, info_json FROM responses").fetchone()
        error = store.conn.execute("SELECT error FROM errors").fetchone()[0]
        assert store.masked == 4
    assert text == "*** and ***, short" and KEY not in info and error == "server said ***"


def test_the_known_secrets_of_http_options(monkeypatch: pytest.MonkeyPatch) -> None:
    from biasatlas.backends.http.options import OpenAIOptions

    monkeypatch.setenv("MY_KEY", f" {KEY} ")
    basic = base64.b64encode(f"user:{PASSWORD}".encode()).decode()  # as an echoed Basic header carries it
    found = OpenAIOptions(base_url=f"http://user:{PASSWORD}@h/v1", api_key_env="MY_KEY").known_secrets()
    assert set(found) == {KEY, PASSWORD, basic}
    monkeypatch.setenv("OPENAI_BASE_URL", "http://u:p%40ss-word-1@h/v1")
    assert "p@ss-word-1" in OpenAIOptions(api_key_env="NONE_SET").known_secrets()
