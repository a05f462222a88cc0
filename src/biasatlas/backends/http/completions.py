"""Full-option log-probabilities from ``/completions`` with ``echo``: the pure parts.

``POST /completions`` with ``echo: true, logprobs: 1, max_tokens: 1`` and the prompt text followed
by an option returns the log-probability of every prompt token (vLLM, llama-cpp-python's server;
not llama.cpp's own server, which gives the generated token's only). The option's tokens are the
last ``d`` prompt tokens, where ``d`` is the prompt's token count (``usage.prompt_tokens``) minus
that of the prompt text alone: counting from the end needs no tokenizer on this side and survives
characters split across tokens ("Ólíklegt" is 7 tokens for SmolLM2). The tokens found there must
spell the option, else the span is not trusted.

An option's score is the sum of its tokens' log-probabilities (``choice_norm="sum"``, log
P(option | prompt)) or their mean per token (``"mean"``); the option probabilities are the softmax
of the scores over the options: the local backend's rule, to the letter.
"""

from __future__ import annotations

import math
from typing import Any


class Unusable(Exception):
    """An echo answer that cannot give an option's log-probability (the reason is the message)."""


def usage_tokens(data: dict[str, Any], name: str) -> int:
    """``usage[name]`` of an answer, or Unusable when the server does not count tokens."""
    value = (data.get("usage") or {}).get(name)
    if not isinstance(value, int):
        raise Unusable(f"the server's answer has no usage.{name}")
    return value


def option_span(data: dict[str, Any], context_tokens: int, option: str) -> tuple[float, int]:
    """(summed log-probability, token count) of ``option`` at the end of an echoed prompt."""
    logprobs = data["choices"][0].get("logprobs")
    if not isinstance(logprobs, dict) or not isinstance(logprobs.get("token_logprobs"), list):
        raise Unusable("the server returned no log-probabilities for the prompt (echo)")
    values: list[Any] = logprobs["token_logprobs"]
    tokens: list[Any] = logprobs.get("tokens") or []
    n_option = usage_tokens(data, "prompt_tokens") - context_tokens
    generated = usage_tokens(data, "completion_tokens")
    if n_option < 1:
        raise Unusable(f"option {option!r} adds no prompt token")
    end = len(values) - generated
    start = end - n_option
    if start < 0 or end > len(values) or len(tokens) != len(values):
        raise Unusable("the server returned log-probabilities for the generated tokens only, not the prompt")
    span = values[start:end]
    if not all(isinstance(v, int | float) and math.isfinite(v) for v in span):
        raise Unusable(f"no log-probability for some token of option {option!r}")
    if not spells([str(t) for t in tokens[start:end]], option):
        raise Unusable(f"the last prompt tokens {tokens[start:end]!r} do not spell option {option!r}")
    return float(sum(span)), n_option


def spells(tokens: list[str], option: str) -> bool:
    """Whether tokens spell the option, allowing for bytes of a split character printed as nothing.

    Byte-level markers (``Ġ``, ``▁``) are read as spaces. An ASCII first or last character must be
    there (those are never split), and what is left must be the option's characters in order.
    """
    text = "".join(tokens).replace("\ufffd", "").replace("Ġ", " ").replace("▁", " ")
    if text == option:
        return True
    text, want = text.strip(), option.strip()
    if not text or not want:
        return False
    if (want[0].isascii() and text[0] != want[0]) or (want[-1].isascii() and text[-1] != want[-1]):
        return False
    rest = iter(want)
    return all(ch in rest for ch in text)


def exact_next_token(pairs: list[tuple[str, float]], options: tuple[str, ...]) -> dict[str, float] | None:
    """Each option's log-probability as the next token (one-token options), or None if one is missing."""
    found: dict[str, float] = {}
    for token, logprob in pairs:
        if token in options and token not in found and math.isfinite(logprob):
            found[token] = logprob
    return found if len(found) == len(options) else None
