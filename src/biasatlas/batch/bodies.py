"""The HTTP backend's requests as batch lines, and its reading of an answer, without a server.

A batch line must hold the exact body the OpenAI-compatible backend would POST for a request, and
its ``custom_id`` the key the backend would store the answer under, so that a batch answer and a
live one are the same cached answer. Both come from :class:`~biasatlas.backends.openai_compat.
OpenAIBackend` itself (its ``_flags`` and ``_body``, called on a stand-in that holds only the model
and the options: no event loop, no connection, no key), and answers are read with the backend's
own readers (:mod:`.http.choice`, :mod:`.http.structured`).

A batch has one request per line, so what a live run decides by asking the server first is fixed:

* choice mode is scored from the first token's ``top_logprobs`` (``choice_method=first_token``,
  which the backend id states with ``#first``): full-option scoring needs several dependent
  requests per prompt. Options one token cannot tell apart are asked in generate mode, as the live
  backend does, with ``info["choice_fallback"]``.
* generate mode with ``structured=auto`` asks in OpenAI's ``json_schema`` dialect (OpenAI, vLLM);
  a server that takes only another dialect (llama-cpp-python) needs ``structured=off``.
"""

from __future__ import annotations

import os
from types import SimpleNamespace
from typing import Any, cast

from biasatlas.backends.base import BackendError
from biasatlas.backends.http.choice import ambiguity, score_options, top_logprobs
from biasatlas.backends.http.identity import backend_id, fleet_id
from biasatlas.backends.http.setup import OPENAI_URL, safe_url
from biasatlas.backends.http.structured import MIN_TOKENS, read_answer, response_format
from biasatlas.backends.http.template import RAW, ChatTemplate, load_template
from biasatlas.backends.openai_compat import OpenAIBackend, OpenAIOptions
from biasatlas.records import Request, Response

CHAT_URL = "/v1/chat/completions"
#: the batch format's HTTP method
METHOD = "POST"
#: what a batch costs against the same requests one by one (OpenAI's Batch API: half price)
BATCH_PRICE_FACTOR = 0.5
STRUCTURED_FORMAT = "json_schema"


class BatchBackend:
    """An ``openai:MODEL`` backend's identity, request bodies and answer reading, for batch files."""

    def __init__(self, model: str, options: OpenAIOptions | None = None, *, mode: str = "generate") -> None:
        if not model:
            raise BackendError("no model name: use openai:MODEL, e.g. openai:gpt-4o-mini")
        opts = options or OpenAIOptions()
        if mode == "choice":  # one line per request: the first token's top_logprobs (see the module)
            opts = opts.model_copy(update={"choice_method": "first_token"})
        self.model, self.options, self.mode = model, opts, mode
        first = opts.endpoints[0].url if opts.endpoints else None  # a fleet: its id names no server
        base_url = (first or opts.base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_URL).rstrip("/")
        if not base_url.startswith(("http://", "https://")):
            raise BackendError(f"base URL must start with http:// or https://, got {safe_url(base_url)!r}")
        self.base_url = safe_url(base_url)
        template: ChatTemplate | str | None = None
        if opts.chat_template:
            template = RAW if opts.chat_template == RAW else load_template(opts.chat_template)
        # The live backend's own methods, on a stand-in holding what they read (model and options).
        self._shim = cast(Any, SimpleNamespace(model=model, options=opts))
        flags = OpenAIBackend._flags(self._shim, template)
        self.id = fleet_id(model, opts.fleet, flags) if opts.fleet else backend_id(model, base_url, flags)

    def describe(self) -> dict[str, Any]:
        """What the run record keeps about the backend (never a key)."""
        o = self.options
        return {
            "backend": "openai-batch",
            "model": self.model,
            "base_url": self.base_url,
            "fleet": self.options.fleet,
            "structured": o.structured,
            "choice_norm": o.choice_norm,
            "choice_method": o.choice_method,
            "top_logprobs": o.top_logprobs,
            "price_prompt": o.price_prompt,
            "price_completion": o.price_completion,
            "batch_price_factor": BATCH_PRICE_FACTOR,
        }

    # ---- requests --------------------------------------------------------------------------------
    def _structured(self, request: Request) -> bool:
        prompt = request.prompt
        return (
            request.settings.mode == "generate"
            and self.options.structured == "auto"
            and len(prompt.options) >= 2
            and not prompt.meta.get("response_schema")
        )

    def body(self, request: Request) -> dict[str, Any]:
        """The chat-completions body the live backend would send first for ``request``."""
        if request.settings.mode == "choice" and ambiguity(request.prompt.options) is None:
            return cast(dict[str, Any], OpenAIBackend._body(self._shim, request, choice=True))
        body = cast(dict[str, Any], OpenAIBackend._body(self._shim, request, choice=False))
        if self._structured(request):
            body["response_format"] = response_format(STRUCTURED_FORMAT, request.prompt.options)
            body["max_tokens"] = max(int(body["max_tokens"]), MIN_TOKENS)
        return body

    def line(self, request: Request) -> dict[str, Any]:
        """One line of an OpenAI Batch input file."""
        return {"custom_id": request.cache_key(self.id), "method": METHOD, "url": CHAT_URL,
                "body": self.body(request)}

    # ---- answers ---------------------------------------------------------------------------------
    def answer(self, request: Request, status_code: Any, body: Any) -> Response:
        """The Response of one Batch output line's ``response``, read as the live backend reads it."""
        key = request.cache_key(self.id)
        if status_code != 200:
            return Response(key=key, backend_id=self.id, error=_http_error(status_code, body))
        try:
            fields = self._fields(request, body)
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
            detail = f"{type(exc).__name__}: {exc}"[:300]
            return Response(key=key, backend_id=self.id, error=f"malformed: the answer has no usable choice ({detail})")
        return Response(key=key, backend_id=self.id, **fields)

    def _fields(self, request: Request, data: dict[str, Any]) -> dict[str, Any]:
        choice = data["choices"][0]
        usage = data.get("usage") or {}
        tokens = {"prompt_tokens": _int(usage.get("prompt_tokens")),
                  "completion_tokens": _int(usage.get("completion_tokens"))}
        content = str((choice.get("message") or {}).get("content") or "")
        options = request.prompt.options
        if request.settings.mode == "choice":
            reason = ambiguity(options)
            if reason is not None:  # asked in generate mode, as the live backend does
                return {"text": content.strip(), **tokens, "finish_reason": choice.get("finish_reason"),
                        "info": {"choice_fallback": reason}}
            pairs = top_logprobs(choice)
            if pairs is None:
                raise ValueError("no logprobs in the answer: choice mode needs a server that returns top_logprobs")
            score = score_options(pairs, options)
            if score is None:  # no option among the top tokens
                top = {t: round(lp, 4) for t, lp in pairs[:5]}
                missed = {"option_mass": 0.0, "top_tokens": top, "choice_method": "first_token"}
                return {**tokens, "finish_reason": "choice", "text": (content or pairs[0][0]).strip(), "info": missed}
            return {**tokens, "finish_reason": "choice", "text": max(score.probs, key=score.probs.__getitem__),
                    "option_probs": score.probs,
                    "info": {"option_logprobs": score.logprobs, "option_mass": score.mass,
                             "choice_method": "first_token"}}
        if self._structured(request):
            reading = read_answer(content, options)
            info: dict[str, Any] = {"structured": content, "structured_format": STRUCTURED_FORMAT}
            if reading.problem:
                info["structured_problem"] = reading.problem
            return {"text": reading.text, **tokens, "finish_reason": choice.get("finish_reason"), "info": info}
        return {"text": content.strip(), **tokens, "finish_reason": choice.get("finish_reason")}


def _http_error(status_code: Any, body: Any) -> str:
    """An error line like the live backend's: the status and the server's message."""
    message = ""
    if isinstance(body, dict):
        error = body.get("error")
        message = str(error.get("message") or error) if isinstance(error, dict) else str(error or "")
    return f"http_{status_code}: {message or 'no answer body'}"[:500]


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) else None
