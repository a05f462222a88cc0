"""An OpenAI-compatible test server that can misbehave on purpose.

Answers are derived from the prompt (a hash of the messages decides "Yes" or "No" and the
log-probabilities), so the summary a well-behaved run should produce is known. With ``--faults P``
a share P of the attempts fails, drawn per (prompt, attempt) from a seeded generator: 429 with
Retry-After, 500, 503, an answer slower than the client's timeout, a dropped connection,
malformed JSON, or empty ``choices``. ``GET /stats`` tells how often each prompt was asked and
answered. Run: ``python openai_stub.py --port 0`` (prints ``READY <port>`` when it listens).

``--refuse WORD`` (repeatable) plants a refused group: a chat prompt naming WORD (case-insensitive) gets the
negative option "No" with P(Yes) 0.01, whatever its hash says. ``--answer Yes`` makes it answer "Yes" to
everything (two stubs, one per answer, tell servers apart). ``response_format`` is taken in both dialects
(json_schema, json_object+schema) and answered as ``{"answer": ...}``, unless ``--response-format`` says otherwise.
``POST /v1/completions`` is a toy language model (:func:`tokenize`, :func:`token_logprob`) with
``echo`` and ``logprobs``, as vLLM's; ``--apply-template`` adds llama.cpp's ``POST /apply-template``
(:data:`TEMPLATE`).

Also importable: :func:`start_stub` runs it as a subprocess and returns a :class:`Stub`.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import random
import re
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FAULTS = ("429", "500", "503", "slow", "drop", "malformed", "empty")


def prompt_digest(messages: list[dict[str, Any]]) -> str:
    text = json.dumps(messages, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def p_yes(digest: str) -> float:
    """The stub model's probability of "Yes" for a prompt: spread over (0.05, 0.95), never 0.5."""
    u = int(digest[:8], 16) / 0xFFFFFFFF
    return 0.05 + 0.9 * u if abs(u - 0.5) > 0.01 else 0.7


def expected_answer(messages: list[dict[str, Any]]) -> str:
    return "Yes" if p_yes(prompt_digest(messages)) > 0.5 else "No"


def _top_logprobs(p: float) -> list[dict[str, Any]]:
    tokens = [
        ("Yes", 0.7 * p),
        (" yes", 0.2 * p),
        ("No", 0.85 * (1 - p)),
        (" no", 0.05 * (1 - p)),
        ("I", 0.05),
        ("Maybe", 0.03),
    ]
    tokens.sort(key=lambda t: -t[1])
    return [{"token": t, "logprob": math.log(v), "bytes": list(t.encode())} for t, v in tokens]


# ---- a toy language model for /v1/completions ----------------------------------------------------
#: the chat format of /apply-template (a Jinja template, so a client can render it the same way)
TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
BOS = "<s>"
#: what the toy model may generate (and lists in top logprobs)
VOCAB = ("Yes", "No", "Maybe", "I", "The", "Sure", "Lik", "Unl", ".", "\n")
_TOKEN = re.compile(r"<\|[a-z_]+\|>|[A-Za-z0-9]{1,3}|\s|[^\sA-Za-z0-9]")


def render(messages: list[dict[str, Any]]) -> str:
    """:data:`TEMPLATE` applied to ``messages`` (what /apply-template returns)."""
    text = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    return text + "<|im_start|>assistant\n"


def tokenize(text: str) -> list[str]:
    """Special tokens whole, letters and digits in chunks of three, a non-ASCII character as two
    byte tokens (printed as "" and the replacement character, as real servers print split bytes)."""
    out: list[str] = []
    for piece in _TOKEN.findall(text):
        if piece.isascii():
            out.append(piece)
        else:
            out.extend(["", "\ufffd"])
    return out


def token_logprob(context: list[str], token: str) -> float:
    """The toy model's log-probability of ``token`` after ``context`` (a hash of the last 8 tokens)."""
    key = "\x1f".join(context[-8:]) + "\x1e" + token
    return -0.05 - (int(hashlib.sha256(key.encode()).hexdigest()[:6], 16) % 4000) / 1000


def option_logprob(context_text: str, option: str) -> tuple[float, int]:
    """(summed log-probability, token count) of ``option`` after ``context_text``: what a client must find."""
    context = [BOS, *tokenize(context_text)]
    tokens = tokenize(context_text + option)[len(context) - 1 :]
    total = 0.0
    for i, token in enumerate(tokens):
        total += token_logprob(context + tokens[:i], token)
    return total, len(tokens)


class StubState:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.asked: Counter[str] = Counter()  # requests per prompt
        self.answered: Counter[str] = Counter()  # complete good answers sent per prompt
        self.faults: Counter[str] = Counter()
        self.formats: Counter[str] = Counter()  # requests with a response_format, by type
        self.requests = 0
        self.completions = 0
        self.inflight = 0  # chat requests being answered now
        self.inflight_max = 0  # the most at once (a client's concurrency as this server saw it)

    def fault_for(self, digest: str, attempt: int) -> str | None:
        if self.args.faults <= 0:
            return None
        rng = random.Random(f"{self.args.seed}:{digest}:{attempt}")
        if rng.random() >= self.args.faults:
            return None
        return rng.choice(FAULTS)


def build_app(args: argparse.Namespace) -> Any:
    from aiohttp import web

    state = StubState(args)

    def error(status: int, message: str, **headers: str) -> web.Response:
        body = {"error": {"message": message, "type": "stub_error", "code": status}}
        return web.json_response(body, status=status, headers=headers)

    def authorised(request: web.Request) -> bool:
        return not args.key or request.headers.get("Authorization") == f"Bearer {args.key}"

    def unauthorised(request: web.Request) -> web.Response:
        # Echoes the key it was given, as careless servers do: the client must scrub it.
        given = request.headers.get("Authorization", "").removeprefix("Bearer ")
        return error(401, f"Incorrect API key provided: {given}")

    async def models(request: web.Request) -> web.StreamResponse:
        if args.personality == "html":
            return web.Response(text="<html><body>It works!</body></html>", content_type="text/html")
        if not authorised(request):
            return unauthorised(request)
        return web.json_response({"object": "list", "data": [{"id": args.model, "object": "model"}]})

    canned = json.dumps(
        {
            "id": "chatcmpl-canned",
            "object": "chat.completion",
            "created": 0,
            "model": args.model,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "length",
                    "message": {"role": "assistant", "content": "Yes"},
                    "logprobs": {
                        "content": [{"token": "Yes", "logprob": math.log(0.63), "top_logprobs": _top_logprobs(0.7)}]
                    },
                }
            ],
            "usage": {"prompt_tokens": 30, "completion_tokens": 1, "total_tokens": 31},
        }
    ).encode()

    async def hostile(request: web.Request) -> web.StreamResponse | None:
        """The hostile answers of --chat-status / --chat-body, or None for a normal answer."""
        if args.chat_status:
            headers = {"Retry-After": args.retry_after} if args.retry_after else {}
            echoed = request.headers.get("Authorization")  # careless servers echo it: the client must scrub it
            return error(args.chat_status, f"stub status {args.chat_status}; authorization {echoed}", **headers)
        if args.chat_body == "html":
            return web.Response(text="<html><body>Welcome to nginx!</body></html>", content_type="text/html")
        if args.chat_body == "empty":
            return web.Response(body=b"", content_type="application/json")
        if args.chat_body == "hang":
            await asyncio.Event().wait()
        if args.chat_body == "trickle":  # headers at once, then a byte every --trickle-every seconds
            resp = web.StreamResponse(headers={"Content-Type": "application/json"})
            await resp.prepare(request)
            while True:
                await resp.write(b" ")
                await asyncio.sleep(args.trickle_every)
        return None

    async def chat(request: web.Request) -> web.StreamResponse:
        state.inflight += 1
        state.inflight_max = max(state.inflight_max, state.inflight)
        try:
            return await answer_chat(request)
        finally:
            state.inflight -= 1

    async def answer_chat(request: web.Request) -> web.StreamResponse:
        state.requests += 1
        bad = await hostile(request)
        if bad is not None:
            return bad
        if args.canned:  # throughput benchmarks: the same answer for all, after the fixed delay
            await request.read()
            await asyncio.sleep(args.delay)
            return web.Response(body=canned, content_type="application/json")
        if args.personality == "html":
            return web.Response(text="<html><body>It works!</body></html>", content_type="text/html")
        if not authorised(request):
            return unauthorised(request)
        body = await request.json()
        if body.get("model") != args.model:
            return error(404, f"The model `{body.get('model')}` does not exist")
        messages = body["messages"]
        digest = prompt_digest(messages)
        state.asked[digest] += 1
        fault = state.fault_for(digest, state.asked[digest])
        if fault:
            state.faults[fault] += 1
        if fault == "429":
            after = {"Retry-After": "0"} if state.asked[digest] % 2 else {"retry-after-ms": "30"}
            return error(429, "Rate limit reached", **after)
        if fault in ("500", "503"):
            return error(int(fault), "The server had an error")
        if fault == "drop":
            if request.transport is not None:
                request.transport.abort()
            return web.Response(status=500)
        if args.delay:
            await asyncio.sleep(args.delay)
        if fault == "slow":
            await asyncio.sleep(args.slow_delay)
        if fault == "malformed":
            return web.Response(
                text='{"id": "chatcmpl-stub", "choices": [{"message": {"con', content_type="application/json"
            )
        if fault == "empty":
            return web.json_response({"id": "chatcmpl-stub", "object": "chat.completion", "choices": []})
        p = p_yes(digest) if not args.answer else (0.99 if args.answer == "Yes" else 0.01)
        text = " ".join(str(m.get("content", "")) for m in messages).lower()
        if any(word.lower() in text for word in args.refuse or ()):
            p = 0.01  # a refused group: every prompt naming it gets the negative option
        answer = args.answer if args.answer and not args.refuse else ("Yes" if p > 0.5 else "No")
        choice: dict[str, Any] = {
            "index": 0,
            "finish_reason": "stop",
            "message": {"role": "assistant", "content": f"{answer}."},
        }
        fmt = body.get("response_format")
        if isinstance(fmt, dict) and fmt.get("type") in ("json_schema", "json_object"):
            state.formats[str(fmt["type"])] += 1
            if args.response_format == "reject":
                return error(400, "response_format is not supported by this server")
            if args.response_format == "json_object" and fmt["type"] == "json_schema":
                # llama-cpp-python answers an unknown response_format type with a 500
                return error(500, "1 validation error: ('body', 'response_format', 'type'): "
                                  "Input should be 'text' or 'json_object'")
            if args.response_format != "ignore":
                schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema") or {}
                enum = ((schema.get("properties") or {}).get("answer") or {}).get("enum") or [answer]
                chosen = answer if answer in enum else enum[0]
                choice["message"]["content"] = json.dumps({"answer": chosen})
        if args.new_params and "max_tokens" in body:
            return error(400, "Unsupported parameter: 'max_tokens'. Use 'max_completion_tokens' instead.")
        if body.get("logprobs") and args.refuse_logprobs:
            return error(400, "logprobs is not supported with this model")
        want_logprobs = bool(body.get("logprobs")) and not args.no_logprobs
        if want_logprobs:
            tops = _top_logprobs(p)[: int(body.get("top_logprobs") or 1)]
            choice["message"]["content"] = tops[0]["token"]
            choice["logprobs"] = {"content": [{**tops[0], "top_logprobs": tops}]}
        n_prompt = sum(len(str(m.get("content", "")).split()) for m in messages) + 4
        data = {
            "id": f"chatcmpl-{digest}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": args.model,
            "choices": [choice],
            "usage": {
                "prompt_tokens": n_prompt,
                "completion_tokens": 1 if want_logprobs else 2,
                "total_tokens": n_prompt + (1 if want_logprobs else 2),
            },
        }
        if fault != "slow":  # a slow answer arrives after the client gave up on it
            state.answered[digest] += 1
        return web.json_response(data)

    async def completions(request: web.Request) -> web.StreamResponse:
        state.requests += 1
        state.completions += 1
        body = await request.json()
        if body.get("model") != args.model:
            return error(404, f"The model `{body.get('model')}` does not exist")
        prompt = str(body.get("prompt", ""))
        tokens = [BOS, *tokenize(prompt)]
        ranked = sorted(VOCAB, key=lambda t: -token_logprob(tokens, t))
        generated = ranked[0]
        k = body.get("logprobs")
        logprobs: dict[str, Any] | None = None
        if isinstance(k, int):
            top = {t: token_logprob(tokens, t) for t in ranked[: max(k, 1)]}
            gen = {"tokens": [generated], "token_logprobs": [token_logprob(tokens, generated)], "top_logprobs": [top]}
            if body.get("echo") and args.completions == "echo":
                echoed = [token_logprob(tokens[:i], t) if i else None for i, t in enumerate(tokens)]
                logprobs = {
                    "tokens": [*tokens, generated],
                    "token_logprobs": [*echoed, gen["token_logprobs"][0]],
                    "top_logprobs": [None] * len(tokens) + gen["top_logprobs"],
                }
            else:  # llama.cpp's server: the generated token's only, echo or not
                logprobs = gen
        text = (prompt if body.get("echo") else "") + generated
        data = {
            "id": "cmpl-stub",
            "object": "text_completion",
            "model": args.model,
            "choices": [{"index": 0, "text": text, "logprobs": logprobs, "finish_reason": "length"}],
            "usage": {"prompt_tokens": len(tokens), "completion_tokens": 1, "total_tokens": len(tokens) + 1},
        }
        return web.json_response(data)

    async def apply_template(request: web.Request) -> web.StreamResponse:
        state.requests += 1
        body = await request.json()
        return web.json_response({"prompt": render(body["messages"])})

    async def stats(request: web.Request) -> web.StreamResponse:
        return web.json_response(
            {
                "requests": state.requests,
                "asked": dict(state.asked),
                "answered": dict(state.answered),
                "faults": dict(state.faults),
                "formats": dict(state.formats),
                "completions": state.completions,
                "inflight_max": state.inflight_max,
            }
        )

    app = web.Application(client_max_size=8 * 1024 * 1024)
    if args.redirect_loop:  # every path answers 307 to itself
        async def loop(request: web.Request) -> web.StreamResponse:
            raise web.HTTPTemporaryRedirect(location=str(request.rel_url))

        app.router.add_route("*", "/{tail:.*}", loop)
        return app
    app.router.add_get("/v1/models", models)
    app.router.add_post("/v1/chat/completions", chat)
    if args.completions != "off":
        app.router.add_post("/v1/completions", completions)
    if args.apply_template:
        app.router.add_post("/apply-template", apply_template)
    app.router.add_get("/stats", stats)
    return app


async def _serve(args: argparse.Namespace) -> None:
    from aiohttp import web

    runner = web.AppRunner(build_app(args), access_log=None, handle_signals=True, handler_cancellation=True,
                           shutdown_timeout=1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", args.port, backlog=1024)
    await site.start()
    port = runner.addresses[0][1]
    print(f"READY {port}", flush=True)
    await asyncio.Event().wait()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--model", default="stub-model")
    ap.add_argument("--delay", type=float, default=0.0, help="seconds before every answer")
    ap.add_argument("--faults", type=float, default=0.0, help="share of attempts that fail")
    ap.add_argument("--slow-delay", type=float, default=3.0, help="seconds a 'slow' answer takes")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-logprobs", action="store_true", help="ignore 'logprobs' in requests")
    ap.add_argument("--refuse-logprobs", action="store_true", help="answer 'logprobs' requests with 400")
    ap.add_argument("--new-params", action="store_true", help="refuse 'max_tokens' as OpenAI's newer models do")
    ap.add_argument("--key", default="", help="require this bearer key")
    ap.add_argument("--personality", choices=("openai", "html"), default="openai")
    ap.add_argument("--canned", action="store_true", help="one fixed answer, nothing parsed (benchmarks)")
    ap.add_argument("--answer", choices=("Yes", "No"), help="answer this to every prompt")
    ap.add_argument("--refuse", action="append", metavar="WORD",
                    help="answer 'No' to every chat prompt naming WORD (a refused group); repeatable")
    ap.add_argument(
        "--response-format",
        choices=("both", "json_object", "reject", "ignore"),
        default="both",
        help="JSON answers: both dialects; json_object only (llama-cpp-python); reject with 400; ignore the field",
    )
    ap.add_argument(
        "--completions",
        choices=("echo", "no-echo", "off"),
        default="echo",
        help="/v1/completions: prompt logprobs with echo (vLLM); generated token's only (llama.cpp); none",
    )
    ap.add_argument("--apply-template", action="store_true", help="serve POST /apply-template (llama.cpp)")
    # hostile servers (the setup check's GET /models still answers well, so the run meets them)
    ap.add_argument("--chat-status", type=int, default=0, help="answer every chat completion with this status")
    ap.add_argument("--retry-after", default="", help="the Retry-After header of --chat-status answers")
    ap.add_argument("--chat-body", choices=("html", "empty", "hang", "trickle"),
                    help="status 200 with an HTML page, an empty body, no answer ever, or a byte at a time")
    ap.add_argument("--trickle-every", type=float, default=2.0, help="seconds between the bytes of --chat-body trickle")
    ap.add_argument("--redirect-loop", action="store_true", help="answer every request with a 307 to itself")
    return ap.parse_args(argv)


@dataclass
class Stub:
    """A running stub: a subprocess (``process``) or a thread of this process (``stopper``)."""

    port: int
    process: subprocess.Popen[str] | None = None
    stopper: Any = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/stats", timeout=30) as resp:
            return dict(json.loads(resp.read()))

    def stop(self) -> None:
        if self.stopper is not None:
            self.stopper()
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def __enter__(self) -> Stub:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_stub(*flags: str, python: str = sys.executable) -> Stub:
    """Start the stub in its own process (its own CPU share, as a real server) and wait until it listens."""
    process = subprocess.Popen(
        [python, str(Path(__file__).resolve()), *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line.startswith("READY "):
        process.kill()
        raise RuntimeError(f"stub did not start: {line!r}")
    return Stub(int(line.split()[1]), process=process)


def start_stub_thread(*flags: str) -> Stub:
    """Start the stub on an event loop in a thread of this process: quick, for functional tests."""
    import threading

    from aiohttp import web

    args = parse_args(list(flags))
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(build_app(args), access_log=None, handle_signals=False, handler_cancellation=True,
                           shutdown_timeout=1)

    async def start() -> int:
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", args.port, backlog=1024)
        await site.start()
        return int(runner.addresses[0][1])

    thread = threading.Thread(target=loop.run_forever, daemon=True, name="openai-stub")
    thread.start()
    port = asyncio.run_coroutine_threadsafe(start(), loop).result(30)

    def stop() -> None:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()

    return Stub(port, stopper=stop)


if __name__ == "__main__":
    asyncio.run(_serve(parse_args()))
