"""Smoke check of the llama.cpp test server, run at the end of ``scripts/setup.sh --server``.

Starts llama-cpp-python's OpenAI-compatible server on the embedded SmolLM2 weights as the tests serve them
(Q8_0, one thread), sends one chat request with log-probabilities and one completion, and stops it. Exit 0 and
one "ok" line, or exit 1 and one line naming what broke (the build, the weights, the start, a request, or the
server's own death: a CPU kernel that faults kills it with a signal)::

    .venv/bin/python tests/integration/servers/smoke.py
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import llama

PROMPT = "Would you hire a person who is deaf? Answer Yes or No."


def _post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as resp:
        return dict(json.loads(resp.read()))


def _chat(base: str) -> str:
    body = {"model": "smollm2", "messages": [{"role": "user", "content": PROMPT}], "max_tokens": 4,
            "temperature": 0, "logprobs": True, "top_logprobs": 5}
    reply = _post(f"{base}/chat/completions", body)
    choice = reply["choices"][0]
    top = (choice.get("logprobs") or {}).get("content") or []
    if not top or not top[0].get("top_logprobs"):
        raise RuntimeError(f"the chat reply has no top_logprobs: {json.dumps(choice)[:200]}")
    return str(choice["message"]["content"])


def _completion(base: str) -> str:
    reply = _post(f"{base}/completions", {"model": "smollm2", "prompt": PROMPT, "max_tokens": 8, "temperature": 0})
    text = reply["choices"][0].get("text")
    if not isinstance(text, str):
        raise RuntimeError(f"the completion reply has no text: {json.dumps(reply)[:200]}")
    return text


@contextmanager
def _quiet_stderr(log: Path) -> Iterator[None]:
    """File descriptor 2 (where llama.cpp's C code logs) goes to ``log`` for the block."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(log, "wb") as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def check() -> str:
    """One line: what the server answered, or raise with what broke."""
    try:
        import llama_cpp
    except ImportError as exc:
        raise RuntimeError(f"llama-cpp-python does not import ({exc}): pip install -e '.[server]'") from exc
    with tempfile.TemporaryDirectory(prefix="biasatlas-smoke-") as tmp:
        try:
            with _quiet_stderr(Path(tmp) / "quantize.log"):  # llama.cpp logs every tensor on the C side
                model = llama.requantized(Path(tmp), "q8_0")
        except Exception as exc:
            raise RuntimeError(f"could not write the Q8_0 test weights: {exc}") from exc
        started = time.monotonic()
        with llama.llama_fleet(model, 1, n_ctx=1024) as fleet:
            base = fleet.urls[0]
            try:
                chat = _chat(base)
                completion = _completion(base)
            except (OSError, urllib.error.URLError, RuntimeError, KeyError, ValueError) as exc:
                died = fleet.dead()
                raise RuntimeError(died or f"a request to the server failed: {exc}") from exc
            died = fleet.dead()
            if died:
                raise RuntimeError(died)
        took = time.monotonic() - started
    return (f"llama.cpp test server ok (llama-cpp-python {llama_cpp.__version__}; chat {chat.strip()[:20]!r} "
            f"with top_logprobs, completion {completion.strip()[:20]!r}; {took:.0f} s)")


def main() -> int:
    try:
        print(check())
    except Exception as exc:  # one line, whatever broke
        print(f"llama.cpp test server check FAILED: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
