"""Structured answers: in generate mode, ask for ``{"answer": <one of the options>}`` as JSON.

Servers say it two ways: OpenAI's ``response_format`` ``{"type": "json_schema", "json_schema":
{"name", "schema"}}`` (OpenAI, vLLM, llama.cpp's server) and ``{"type": "json_object", "schema"}``
(llama-cpp-python's server, which refuses the first with a validation error, as an HTTP 500). The
first request tries them in that order (the others wait) and the backend remembers which one the
server takes; a server that refuses both, or answers without the format (it ignores the field),
gets free text from then on: a failed try per dialect at most, once per backend, not per prompt.
The stored text is the option named; the raw JSON is kept in ``info["structured"]``.

A JSON answer needs more tokens than the bare word, so a structured request asks for at least
:data:`MIN_TOKENS` tokens; the enum keeps the answer short anyway.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from biasatlas.backends.http.client import Fatal
from biasatlas.records import Request

if TYPE_CHECKING:
    from biasatlas.backends.http.asking import Asker

FORMATS = ("json_schema", "json_object")
MIN_TOKENS = 64
# Words of a server's error message that say it did not take the response_format.
REFUSAL_WORDS = ("response_format", "json_schema", "json_object", "schema", "grammar")


def answer_schema(options: tuple[str, ...]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"answer": {"type": "string", "enum": list(options)}},
        "required": ["answer"],
    }


def response_format(kind: str, options: tuple[str, ...]) -> dict[str, Any]:
    """The ``response_format`` field of a request in the server's dialect ``kind``."""
    if kind == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": "answer", "schema": answer_schema(options)}}
    return {"type": "json_object", "schema": answer_schema(options)}


def is_refusal(status: str, detail: str) -> bool:
    """A failed request that says the server does not take this response_format."""
    text = detail.lower()
    return (status.startswith("http_4") or status.startswith("http_5")) and any(w in text for w in REFUSAL_WORDS)


@dataclass(frozen=True)
class Reading:
    """What a structured answer says: the option (or the answer as given), and why not, if not."""

    json_ok: bool  # the content is a JSON object with a string "answer"
    text: str  # the option chosen, else the answer as given, else the raw content
    problem: str | None = None


def read_answer(content: str, options: tuple[str, ...]) -> Reading:
    """The option a JSON answer names (exact, else ignoring case and spaces)."""
    body = content.strip()
    if body.startswith("```"):  # a fenced block: ```json ... ```
        body = body.strip("`").removeprefix("json").strip()
    try:
        data = json.loads(body)
    except ValueError:
        return Reading(False, content.strip(), "not JSON")
    answer = data.get("answer") if isinstance(data, dict) else None
    if not isinstance(answer, str):
        return Reading(False, content.strip(), "no string 'answer' in the JSON")
    if answer in options:
        return Reading(True, answer)
    folded = {o.strip().casefold(): o for o in options}
    option = folded.get(answer.strip().casefold())
    if option is not None:
        return Reading(True, option)
    return Reading(True, answer.strip(), "the answer is not one of the options")


class Refused(Exception):
    """The server did not take this response_format (the reason is the message)."""


class Ignored(Refused):
    """The server answered, but not in the format asked for."""


class StructuredAnswers:
    """Structured answers for one backend: which format the server takes, learnt once, and the asking."""

    def __init__(self, asker: Asker) -> None:
        self.asker = asker
        self.format: str | None = None  # the dialect the server took
        self.refused: str | None = None  # why answers are free text from now on
        self.tried: list[str] = []  # dialects refused so far
        self.counts: Counter[str] = Counter()  # per run: "structured" / "free_text" answers
        self._lock: asyncio.Lock | None = None

    def applies(self, request: Request) -> bool:
        """A generate request with options (and no schema of its own), while structured is on."""
        prompt = request.prompt
        return (
            self.asker.options.structured == "auto"
            and len(prompt.options) >= 2
            and not prompt.meta.get("response_schema")
        )

    def run_stats(self) -> dict[str, Any] | None:
        """This run's structured and free-text answer counts and why free text (resets the counts)."""
        if not self.counts:
            return None
        out: dict[str, Any] = {"format": self.format, **dict(sorted(self.counts.items()))}
        if self.refused:
            out["fallback"] = self.refused
        self.counts = Counter()
        return out

    async def generate(self, request: Request, retries: Counter[str]) -> dict[str, Any]:
        """The Response fields of one generate request with options: structured where the server can."""
        fields = await self._structured(request, retries)
        if fields is None:
            fields = await self.asker.generate(request, retries)
            fields["info"] = {**fields.get("info", {}), "structured_fallback": self.refused}
            self.counts["free_text"] += 1
        else:
            self.counts["structured"] += 1
        return fields

    async def _structured(self, request: Request, retries: Counter[str]) -> dict[str, Any] | None:
        if self.refused is not None:
            return None
        if self.format is not None:
            try:
                return await self._ask(request, retries, self.format, probing=False)
            except Refused as exc:  # taken before, refused now: free text from here on
                self.refused = str(exc)
                return None
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:  # the first request learns the format; the others wait for it
            if self.format is None and self.refused is None:
                for kind in FORMATS:
                    try:
                        fields = await self._ask(request, retries, kind, probing=True)
                    except Ignored as exc:  # no error, no JSON: it ignores response_format altogether
                        self.tried.append(f"{kind}: {exc}")
                        break
                    except Refused as exc:  # an error naming the format: the next dialect may do
                        self.tried.append(f"{kind}: {exc}")
                        continue
                    self.format = kind
                    return fields
                self.refused = "the server does not take a JSON answer format (" + "; ".join(self.tried) + ")"
                return None
        return await self._structured(request, retries)

    async def _ask(self, request: Request, retries: Counter[str], kind: str, probing: bool) -> dict[str, Any]:
        options = request.prompt.options
        body = self.asker.body(request, choice=False)
        body["response_format"] = response_format(kind, options)
        body["max_tokens"] = max(int(body["max_tokens"]), MIN_TOKENS)
        try:
            data = await self.asker.call(request, body, retries, fatal_words=REFUSAL_WORDS, text=True)
        except Fatal as exc:
            if is_refusal(exc.cause, exc.detail):
                raise Refused(exc.detail[:200]) from None
            raise
        choice = data["choices"][0]
        content = str((choice.get("message") or {}).get("content") or "")
        reading = read_answer(content, options)
        if not reading.json_ok and probing:
            raise Ignored(f"it answered without the format ({reading.problem}): {content[:60]!r}")
        usage = data.get("usage") or {}
        info: dict[str, Any] = {"structured": content, "structured_format": kind}
        if reading.problem:
            info["structured_problem"] = reading.problem
        return {
            "text": reading.text,
            "prompt_tokens": _int(usage.get("prompt_tokens")),
            "completion_tokens": _int(usage.get("completion_tokens")),
            "finish_reason": choice.get("finish_reason"),
            "info": info,
        }


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) else None
