"""Choice mode over HTTP: which way an option's probability is measured, and measuring it.

``completions`` (the default where the server allows it): every option's full log-probability
after the chat-formatted prompt, from ``/completions`` with ``echo`` (see :mod:`.completions`);
one request for the prompt text alone (its token count) and one per option. Once an option set is
known to be one token per option, a prompt with those options needs a single request: the next
token's ``logprobs`` give every option's exact log-probability (an option missing from them sends
that prompt the echo way). The prompt text comes from :mod:`.template`.

``first_token``: the chat endpoint's first-token ``top_logprobs``, variants of an option's first
word summed (see :mod:`.choice`): the fallback where the server has no prompt text to give, no
``/completions``, or no echoed log-probabilities, and what ``choice_method="first_token"`` asks.

The first prompt decides, once per backend (later prompts wait for it): a server that cannot do
full-option scoring costs one try, and the reason is in the run's record. Each Response says in
``info["choice_method"]`` how it was measured.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, TypeVar

from biasatlas.backends.http.choice import ambiguity, score_options, top_logprobs
from biasatlas.backends.http.client import Fatal
from biasatlas.backends.http.completions import (
    Unusable,
    exact_next_token,
    option_span,
    usage_tokens,
)
from biasatlas.backends.http.template import RAW, ChatTemplate, raw_text
from biasatlas.backends.scoring import option_probabilities
from biasatlas.records import Request

if TYPE_CHECKING:
    from biasatlas.backends.http.asking import Asker

T = TypeVar("T")


class ChoiceScorer:
    """Scores choice requests for one OpenAI-compatible backend (through its :class:`.asking.Asker`)."""

    def __init__(self, asker: Asker, template: ChatTemplate | str | None) -> None:
        self.asker = asker
        self.template = template  # a ChatTemplate, RAW, or None (ask the server)
        self.unavailable: str | None = None  # why full-option scoring cannot be used here
        self.confirmed = False  # a full-option score has worked on this server
        self.one_token: dict[tuple[str, ...], bool] = {}  # option set -> every option is one token
        self.logprobs_missing: str | None = None  # the chat endpoint gives no logprobs either
        self.methods: Counter[str] = Counter()  # per run: how many answers each way
        self.notes: Counter[str] = Counter()  # per run: why single prompts left the chosen way
        self._lock: asyncio.Lock | None = None

    # ---- reporting -----------------------------------------------------------------------------
    def prompt_text_source(self) -> str:
        if isinstance(self.template, ChatTemplate):
            return f"chat template from {self.template.source}"
        if self.template == RAW:
            return "raw prompt text (no chat format)"
        return "the server's /apply-template"

    def run_stats(self) -> dict[str, Any] | None:
        """How this run's choice answers were measured (None if it had none); resets the counts."""
        if not self.methods:
            return None
        opts = self.asker.options
        out: dict[str, Any] = {"methods": dict(sorted(self.methods.items())), "norm": opts.choice_norm}
        if self.methods.get("completions"):
            out["prompt_text"] = self.prompt_text_source()
        if opts.choice_method == "first_token":
            out["reason"] = "choice_method=first_token"
        elif self.unavailable:
            out["reason"] = self.unavailable
        if self.notes:
            out["notes"] = dict(self.notes)
        self.methods, self.notes = Counter(), Counter()
        return out

    # ---- one request ---------------------------------------------------------------------------
    async def score(self, request: Request, retries: Counter[str]) -> dict[str, Any]:
        """The Response fields of one choice request."""
        fields = None
        if self.asker.options.choice_method == "auto" and len(request.prompt.options) >= 2:
            fields = await self._full_once(request, retries)
        if fields is None:
            fields = await self._first_token(request, retries)
        method = fields.get("info", {}).get("choice_method", "generate")
        self.methods[method] += 1
        return fields

    async def _full_once(self, request: Request, retries: Counter[str]) -> dict[str, Any] | None:
        """Full-option scoring; the first request decides whether the server allows it."""
        if self.unavailable is not None:
            return None
        if not self.confirmed:
            if self._lock is None:
                self._lock = asyncio.Lock()
            async with self._lock:
                if self.unavailable is not None:
                    return None
                if not self.confirmed:
                    try:
                        fields = await self._full(request, retries, probing=True)
                    except Unusable as exc:
                        self.unavailable = f"full-option scoring is not available: {exc}; scored the first token"
                        return None
                    self.confirmed = True
                    return fields
        try:
            return await self._full(request, retries, probing=False)
        except Unusable as exc:
            self.notes[str(exc)[:160]] += 1
            return None

    async def _post(self, request: Request, body: dict[str, Any], retries: Counter[str], probing: bool,
                    path: str = "/completions") -> dict[str, Any]:
        try:
            return await self.asker.call(request, body, retries, path=path)
        except Fatal as exc:
            if probing or exc.cause in ("http_404", "http_405", "http_501"):
                raise Unusable(f"POST {path} gave {exc.detail[:160]}") from None
            raise

    async def _prompt_text(self, request: Request, retries: Counter[str], probing: bool) -> str:
        messages = [m.model_dump() for m in request.prompt.messages]
        if isinstance(self.template, ChatTemplate):
            return self.template.render(messages)
        if self.template == RAW:
            return raw_text(messages)
        body = {"messages": messages}
        try:
            data = await self.asker.call(request, body, retries, path="/apply-template", root=True)
        except Fatal as exc:
            raise Unusable(
                f"no chat-formatted prompt text (the server's /apply-template gave {exc.detail[:100]}; "
                "--http chat_template=FILE gives one)"
            ) from None
        text = data.get("prompt")
        if not isinstance(text, str) or not text:
            raise Unusable("the server's /apply-template returned no prompt")
        return text

    async def _full(self, request: Request, retries: Counter[str], probing: bool) -> dict[str, Any]:
        options = request.prompt.options
        context = await self._prompt_text(request, retries, probing)
        model = self.asker.model
        if self.one_token.get(options):
            body = {"model": model, "prompt": context, "max_tokens": 1, "temperature": 0,
                    "logprobs": self.asker.options.top_logprobs}
            data = await self._post(request, body, retries, probing)
            pairs = top_logprobs(data["choices"][0]) or []
            exact = exact_next_token(pairs, options)
            if exact is not None:
                return self._fields(exact, dict.fromkeys(options, 1), usage_tokens(data, "prompt_tokens"))
            self.notes["an option was not among the next token's logprobs: scored by echo"] += 1
        plain = {"model": model, "prompt": context, "max_tokens": 1, "temperature": 0}
        bodies = [plain] + [
            {"model": model, "prompt": context + o, "max_tokens": 1, "temperature": 0, "echo": True, "logprobs": 1}
            for o in options
        ]
        answers = await _all([self._post(request, b, retries, probing) for b in bodies])
        context_tokens = usage_tokens(answers[0], "prompt_tokens")
        spans = {o: option_span(a, context_tokens, o) for o, a in zip(options, answers[1:], strict=True)}
        tokens = {o: n for o, (_, n) in spans.items()}
        self.one_token[options] = all(n == 1 for n in tokens.values())
        return self._fields({o: lp for o, (lp, _) in spans.items()}, tokens, context_tokens)

    def _fields(self, logprobs: dict[str, float], tokens: dict[str, int], prompt_tokens: int) -> dict[str, Any]:
        norm = self.asker.options.choice_norm
        probs = option_probabilities(logprobs, tokens, norm)
        return {
            "text": max(probs, key=probs.__getitem__),
            "option_probs": probs,
            "prompt_tokens": prompt_tokens,
            "completion_tokens": 0,
            "finish_reason": "choice",
            "info": {
                "option_logprobs": {o: round(v, 5) for o, v in logprobs.items()},
                "option_tokens": tokens,
                "choice_norm": norm,
                "choice_method": "completions",
            },
        }

    # ---- first token ---------------------------------------------------------------------------
    async def _first_token(self, request: Request, retries: Counter[str]) -> dict[str, Any]:
        """Option probabilities from one token's top_logprobs, or generate as fallback."""
        options = request.prompt.options
        reason = ambiguity(options) or self.logprobs_missing
        usage: dict[str, Any] = {}
        if reason is None:
            body = self.asker.body(request, choice=True)
            try:
                data = await self.asker.call(request, body, retries)
            except Fatal as exc:
                # Some servers (and some OpenAI models) reject the logprobs parameters outright.
                if exc.cause not in ("http_400", "http_422") or "logprob" not in exc.detail.lower():
                    raise
                self.logprobs_missing = (
                    f"the server refused logprobs ({exc.detail[:120]}), so choice mode fell back to generate"
                )
                return await self._generate(request, retries, self.logprobs_missing, {})
            choice = data["choices"][0]
            usage = data.get("usage") or {}
            pairs = top_logprobs(choice)
            if pairs is None:
                self.logprobs_missing = "the server returned no logprobs, so choice mode fell back to generate"
                reason = self.logprobs_missing
            else:
                fields: dict[str, Any] = {
                    "prompt_tokens": _int(usage.get("prompt_tokens")),
                    "completion_tokens": _int(usage.get("completion_tokens")),  # billed, if not read
                    "finish_reason": "choice",
                }
                score = score_options(pairs, options)
                if score is None:
                    # No option among the top tokens: the model put (almost) no mass on any of them.
                    top = {t: round(lp, 4) for t, lp in pairs[:5]}
                    text = str((choice.get("message") or {}).get("content") or pairs[0][0]).strip()
                    info = {"option_mass": 0.0, "top_tokens": top, "choice_method": "first_token"}
                    return {**fields, "text": text, "info": info}
                return {
                    **fields,
                    "text": max(score.probs, key=score.probs.__getitem__),
                    "option_probs": score.probs,
                    "info": {
                        "option_logprobs": score.logprobs,
                        "option_mass": score.mass,
                        "choice_method": "first_token",
                    },
                }
        return await self._generate(request, retries, reason, usage)

    async def _generate(
        self, request: Request, retries: Counter[str], reason: str, usage: dict[str, Any]
    ) -> dict[str, Any]:
        """Choice mode without log-probabilities: generate, and say why in the Response."""
        self.asker.stats.choice_fallbacks += 1
        fields = await self.asker.generate(request, retries, usage)
        fields["info"] = {"choice_fallback": reason}
        return fields


async def _all(calls: list[Awaitable[T]]) -> list[T]:
    """Run the calls together; every one finishes (and is counted) before the first error is raised."""
    results = await asyncio.gather(*calls, return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return results  # type: ignore[return-value]


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) else None
