"""Choice scoring over HTTP: a prompt's options from the first token's ``top_logprobs``.

A server gives the log-probabilities of its K most likely first tokens, in its own tokenization,
which the client does not know. A token counts for an option when, stripped of spaces and
lower-cased, it *is* the option, or is a prefix of that option and of no other ("Yes", " yes",
"YES", "Y" all count for "Yes"); the probabilities of all such variants are summed. Options of which one is the
start of another ("6" and "63": a tokenizer that splits digits starts both with "6") are never scored this way:
the request generates, and the reply is read whole. Options missing
from the top K get the mass below the list's floor, i.e. zero; the result is normalised over the
options, like the local backend's.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ChoiceScore:
    """Normalised option probabilities, their raw log-probabilities and the mass they cover."""

    probs: dict[str, float]
    logprobs: dict[str, float | None]
    mass: float  # summed raw probability of the matching tokens: how much of the distribution the options hold


def _norm(text: str) -> str:
    return text.strip().lower()


@functools.lru_cache(maxsize=1024)
def ambiguity(options: tuple[str, ...]) -> str | None:
    """Why one first token cannot tell these options apart, or None when it can."""
    if len(options) < 2:
        return "choice mode needs at least two options"
    firsts = [_norm(o).split()[0] if _norm(o) else "" for o in options]
    if "" in firsts:
        return "an option is empty"
    if len(set(firsts)) < len(firsts):
        return "two options share their first word, so one token cannot tell them apart"
    # "6" and "63": a tokenizer that splits numbers into digits says "6" first for both, so the first token would
    # read every 60-69 as 6; only the whole reply (or full-option scoring) tells them apart
    started = starts_another(options)
    if started is not None:
        return (f"the option {started[0]!r} is the start of {started[1]!r}, so one token cannot tell them apart "
                "(a label of several tokens is never read from its first one)")
    return None


def starts_another(options: tuple[str, ...]) -> tuple[str, str] | None:
    """An option that is the start of another one (``("6", "63")``; spaces and case ignored), or None: no first
    token (and no score of an option without its end) can tell such options apart."""
    ordered = sorted({_norm(o) for o in options})  # an option's longer extensions sort right after it
    for shorter, longer in itertools.pairwise(ordered):
        if longer.startswith(shorter):
            return shorter, longer
    return None


# option set -> token -> option: the same few tokens come back for every prompt, so remember them
_TOKEN_CACHE: dict[tuple[str, ...], dict[str, str | None]] = {}
_TOKEN_CACHE_MAX = 100_000  # tokens remembered, over all option sets
_cached_tokens = [0]


def option_for_token(token: str, options: tuple[str, ...]) -> str | None:
    """The option a first token stands for: an exact match, else the only option it is a prefix of."""
    known = _token_map(options)
    return known[token] if token in known else _remember(token, options)


def _token_map(options: tuple[str, ...]) -> dict[str, str | None]:
    found = _TOKEN_CACHE.get(options)
    if found is None:
        found = _TOKEN_CACHE[options] = {}
    return found


def _remember(token: str, options: tuple[str, ...]) -> str | None:
    option = _option_for_token(token, options)
    if _cached_tokens[0] < _TOKEN_CACHE_MAX:
        _token_map(options)[token] = option
        _cached_tokens[0] += 1
    return option


def _option_for_token(token: str, options: tuple[str, ...]) -> str | None:
    t = _norm(token)
    if not t:
        return None
    normed = [_norm(o) for o in options]
    for option, n in zip(options, normed, strict=True):
        if t == n:
            return option
    prefixed = [o for o, n in zip(options, normed, strict=True) if n.startswith(t)]
    return prefixed[0] if len(prefixed) == 1 else None


def top_logprobs(choice: dict[str, Any]) -> list[tuple[str, float]] | None:
    """The (token, logprob) list of the first generated token, in either wire format, or None.

    Chat format (OpenAI, vLLM, llama.cpp): ``logprobs.content[0].top_logprobs = [{token, logprob}]``.
    Completion format (older servers): ``logprobs.top_logprobs[0] = {token: logprob}``.
    """
    logprobs = choice.get("logprobs")
    if not isinstance(logprobs, dict):
        return None
    content = logprobs.get("content")
    if isinstance(content, list) and content:
        first = content[0]
        if isinstance(first, dict):
            tops = first.get("top_logprobs")
            if isinstance(tops, list) and tops:
                pairs = [
                    (str(t.get("token", "")), float(t["logprob"]))
                    for t in tops
                    if isinstance(t, dict) and isinstance(t.get("logprob"), int | float)
                ]
                return pairs or None
    legacy = logprobs.get("top_logprobs")
    if isinstance(legacy, list) and legacy and isinstance(legacy[0], dict):
        pairs = [(str(k), float(v)) for k, v in legacy[0].items() if isinstance(v, int | float)]
        return pairs or None
    return None


def score_options(pairs: list[tuple[str, float]], options: tuple[str, ...]) -> ChoiceScore | None:
    """Option probabilities from the first token's top log-probabilities; None if no option appears."""
    raw: dict[str, float] = dict.fromkeys(options, 0.0)
    seen: set[str] = set()
    known = _token_map(options)  # what option_for_token does, one dict lookup per token on the hot path
    for token, logprob in pairs:
        option = known[token] if token in known else _remember(token, options)
        if option is not None and math.isfinite(logprob):
            raw[option] += math.exp(logprob)
            seen.add(option)
    mass = sum(raw.values())
    if not seen or mass <= 0:
        return None
    return ChoiceScore(
        probs={o: v / mass for o, v in raw.items()},
        logprobs={o: (round(math.log(v), 5) if v > 0 else None) for o, v in raw.items()},
        mass=round(mass, 6),
    )
