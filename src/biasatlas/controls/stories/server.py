"""A scripted OpenAI-compatible extractor server for the stories control (standard library only).

``with extractor_server() as server:`` serves ``POST /v1/chat/completions`` and ``GET /v1/models`` on
127.0.0.1 from a background thread; each answer is :func:`.keywords.answer` of the request's
last user message. The probe's extraction step talks to it as to any server (``openai:keywords`` with
``base_url=server.url``), so the stories go through the probe's own HTTP client, parser and vote.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from biasatlas.controls.stories.keywords import answer

MODEL = "keywords"
SPEC = f"openai:{MODEL}"


@dataclass
class ExtractorServer:
    """A running server: its base URL and how many extraction requests it answered."""

    url: str
    answered: list[int] = field(default_factory=lambda: [0])

    @property
    def requests(self) -> int:
        return self.answered[0]


def _handler(counter: list[int]) -> type[BaseHTTPRequestHandler]:
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass  # no request lines on the console

        def _send(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                self._send(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                messages = body["messages"]
                text = next(str(m.get("content") or "") for m in reversed(messages) if m.get("role") == "user")
            except (ValueError, KeyError, TypeError, StopIteration):
                self._send(400, {"error": {"message": "expected a chat completion request with a user message"}})
                return
            content = answer(text)
            with lock:
                counter[0] += 1
            self._send(200, {
                "id": f"chatcmpl-{counter[0]}", "object": "chat.completion", "model": MODEL,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                             "finish_reason": "stop"}],
                "usage": {"prompt_tokens": len(text.split()), "completion_tokens": len(content.split()),
                          "total_tokens": len(text.split()) + len(content.split())},
            })

    return Handler


@contextmanager
def extractor_server() -> Iterator[ExtractorServer]:
    """Serve the scripted extractor on a free local port for the duration of the block."""
    server = ExtractorServer(url="")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(server.answered))
    thread = threading.Thread(target=httpd.serve_forever, name="stories-extractor", daemon=True)
    thread.start()
    server.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
