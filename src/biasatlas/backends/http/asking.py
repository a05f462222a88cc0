"""Asking one request: its body, one POST with retries and accounting, a free-text answer.

What the backend (:mod:`biasatlas.backends.openai_compat`) and its ways of asking
(:mod:`.choosing`, :mod:`.structured`) share, in a module of its own so that neither of those
imports the backend.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from biasatlas.backends.http.client import Fatal
from biasatlas.backends.http.usage import HttpStats
from biasatlas.records import GenerationSettings, Request

if TYPE_CHECKING:
    from biasatlas.backends.http.client import ChatClient
    from biasatlas.backends.http.fleet import FleetClient
    from biasatlas.backends.http.options import OpenAIOptions


def request_seed(settings: GenerationSettings, sample_index: int) -> int:
    """A per-sample seed: samples of one prompt must differ, reruns of one sample must not."""
    return (settings.seed * 1_000_003 + sample_index) % 2**31


def request_body(model: str, options: OpenAIOptions, request: Request, *, choice: bool) -> dict[str, Any]:
    """The chat-completions body of ``request``: a choice request (one token, ``top_logprobs``) or a generation."""
    s = request.settings
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": m.role, "content": m.content} for m in request.prompt.messages],
    }
    if choice:
        body.update(max_tokens=1, temperature=0, logprobs=True, top_logprobs=options.top_logprobs)
    else:
        body.update(max_tokens=s.max_tokens, temperature=s.temperature)
        if s.temperature > 0:
            body.update(top_p=s.top_p, seed=request_seed(s, request.sample_index))
        schema = request.prompt.meta.get("response_schema")
        if schema:  # constrained JSON (story extraction); a function of the messages, so cache-safe
            body["response_format"] = {"type": "json_schema", "json_schema": {"name": "response", "schema": schema}}
    return body


def estimate_tokens(request: Request, max_tokens: int) -> int:
    """Tokens a request may cost (for the client-side ``tpm`` limit)."""
    return len(request.prompt.text) // 4 + 8 * len(request.prompt.messages) + max_tokens


class Asker:
    """POSTs one backend's requests to its client (one server or a fleet) and counts what they cost."""

    def __init__(self, model: str, options: OpenAIOptions, client: ChatClient | FleetClient) -> None:
        self.model = model
        self.options = options
        self.client = client
        self.stats = HttpStats()
        self.max_tokens_field = "max_tokens"  # or "max_completion_tokens", once a server asks for it

    def body(self, request: Request, *, choice: bool) -> dict[str, Any]:
        return request_body(self.model, self.options, request, choice=choice)

    async def call(
        self,
        request: Request,
        body: dict[str, Any],
        retries: Counter[str],
        *,
        path: str = "/chat/completions",
        root: bool = False,
        fatal_words: tuple[str, ...] = (),
        text: bool = False,
    ) -> dict[str, Any]:
        """POST ``body`` to ``path`` (under the base URL, or the server's root) with retries and accounting.

        ``text``: the answer must hold the message's text (a generation): one without is malformed, retried.
        """
        est = estimate_tokens(request, int(body.get("max_tokens") or 0)) if self.options.tpm else 0
        chat = path == "/chat/completions" and not root
        if chat and self.max_tokens_field != "max_tokens":
            body[self.max_tokens_field] = body.pop("max_tokens")
        url = None if chat else self.client.url(path, root)
        call: dict[str, Any] = {"url": url, "choices": not root, "fatal_words": fatal_words}
        if text:
            call["text"] = True
        before = sum(retries.values())
        try:
            data = await self.client.complete(body, retries, est, **call)
        except Fatal as exc:
            # Newer OpenAI models refuse 'max_tokens' and want 'max_completion_tokens': rename, once.
            if not chat or "max_completion_tokens" not in exc.detail or "max_tokens" not in body:
                raise
            self.max_tokens_field = "max_completion_tokens"
            body["max_completion_tokens"] = body.pop("max_tokens")
            self.stats.attempts += 1
            data = await self.client.complete(body, retries, est, **call)
        finally:
            self.stats.attempts += 1 + sum(retries.values()) - before
        usage = data.get("usage") or {}
        self.stats.prompt_tokens += int(usage.get("prompt_tokens") or 0)
        self.stats.completion_tokens += int(usage.get("completion_tokens") or 0)
        return data

    async def generate(
        self, request: Request, retries: Counter[str], prior: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Generate mode, free text: the Response fields of one chat completion."""
        data = await self.call(request, self.body(request, choice=False), retries, text=True)
        choice = data["choices"][0]
        usage = data.get("usage") or {}
        prior = prior or {}
        return {
            "text": str((choice.get("message") or {}).get("content") or "").strip(),
            "prompt_tokens": _add(usage.get("prompt_tokens"), prior.get("prompt_tokens")),
            "completion_tokens": _add(usage.get("completion_tokens"), prior.get("completion_tokens")),
            "finish_reason": choice.get("finish_reason"),
        }


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) else None


def _add(value: Any, prior: Any) -> int | None:
    """Token counts of a request and of the call before it (a choice fallback makes two)."""
    if _int(value) is None:
        return _int(prior)
    return int(value) + (_int(prior) or 0)
