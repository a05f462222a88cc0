"""The body a response may have is capped (``--http max_body``): a server that streams an endless answer
fails that request with its reason, and the client's memory stays bounded (issue 24: it grew ~110 MB/s)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
from typing import Any

import pytest
from aiohttp import web

from biasatlas.backends.base import BackendError
from biasatlas.backends.http.options import DEFAULT_MAX_BODY, OpenAIOptions, parse_settings

CHUNK = b'{"choices": [' + b" " * (1 << 20)  # a JSON answer that never ends, a MiB at a time

# The client, in a process of its own so that its peak memory is its own: asks 8 prompts at concurrency 4
# (the breaker stops the run after 5 failed answers in a row: it says so).
CLIENT = """
import json, resource, sys
from biasatlas.backends.base import BackendStopped, run_requests
from biasatlas.backends.openai_compat import OpenAIBackend, OpenAIOptions
from biasatlas.records import GenerationSettings, Message, Prompt
from biasatlas.runner import build_requests

url, extra = sys.argv[1], json.loads(sys.argv[2])
prompts = [Prompt(probe="cap", language="en", messages=(Message(role="user", content=f"q{i}"),)) for i in range(8)]
backend = OpenAIBackend("stub-model", OpenAIOptions(base_url=url, concurrency=4, timeout=4, max_retries=0,
                                                    structured="off", **extra))
errors, stopped = [], None
try:
    for response in run_requests(backend, build_requests(prompts, GenerationSettings(max_tokens=4))):
        errors.append(response.error)
except BackendStopped as exc:
    stopped = exc.reason
backend.close()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"errors": errors, "stopped": stopped, "peak_mb": peak}))
"""


def ask(url: str, **extra: Any) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-c", CLIENT, url, json.dumps(extra)], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "OPENAI_API_KEY": ""})
    assert out.returncode == 0, out.stderr[-2000:]
    return dict(json.loads(out.stdout.splitlines()[-1]))


async def endless(request: web.Request, n: int) -> web.StreamResponse:
    resp = web.StreamResponse(headers={"Content-Type": "application/json"})  # chunked: no Content-Length
    await resp.prepare(request)
    with contextlib.suppress(ConnectionError):  # the client hangs up: the end of this answer
        while True:
            await resp.write(CHUNK)
    return resp


def test_an_endless_answer_fails_its_request_and_memory_stays_bounded(tiny_server: Any) -> None:
    baseline = ask(tiny_server(lambda request, n: asyncio.sleep(0, web.json_response({
        "choices": [{"message": {"role": "assistant", "content": "Yes."}}]}))))
    assert baseline["errors"] == [None] * 8
    got = ask(tiny_server(endless))
    cap_mb = DEFAULT_MAX_BODY / 2**20
    assert got["errors"] and all(e.startswith("body_too_large: the answer is larger than max_body 8 MiB (more "
                                              "read, the rest not): --http max_body=SIZE raises it") for e in
                                 got["errors"]), got["errors"]
    assert got["stopped"] is None or "larger than max_body" in got["stopped"]
    # 4 answers at a time, each at most the cap, and some slack: never the GBs of an unbounded read
    assert got["peak_mb"] < baseline["peak_mb"] + 4 * cap_mb + 100, (got["peak_mb"], baseline["peak_mb"])


def test_an_answer_declared_too_long_fails_at_once_and_max_body_is_a_setting(tiny_server: Any) -> None:
    answer = {"choices": [{"message": {"role": "assistant", "content": "Yes." * 50_000}}]}  # 200 kB

    async def big(request: web.Request, n: int) -> web.StreamResponse:
        return web.json_response(answer)

    url = tiny_server(big)
    assert ask(url)["errors"] == [None] * 8  # within the default cap
    small = ask(url, max_body="100kB")
    assert small["errors"] and all("larger than max_body 100 kB (200" in e and "--http max_body" in e
                                   for e in small["errors"]), small
    assert "5 answers in a row were not OpenAI API answers (last: the answer is larger than max_body 100 kB" in (
        small["stopped"])


@pytest.mark.parametrize(("text", "value"), [("8388608", 8388608), ("100kB", 100_000), ("1.5 MB", 1_500_000),
                                             ("64MiB", 64 * 2**20), ("2KiB", 2048), ("1GB", 10**9)])
def test_max_body_takes_bytes_with_a_unit(text: str, value: int) -> None:
    assert OpenAIOptions(**parse_settings([f"max_body={text}"])).max_body == value


@pytest.mark.parametrize("text", ["lots", "-1", "0", "12 parsecs"])
def test_a_bad_max_body_is_refused(text: str) -> None:
    with pytest.raises((ValueError, BackendError)):
        OpenAIOptions(**parse_settings([f"max_body={text}"]))
