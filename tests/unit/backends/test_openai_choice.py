"""Choice scoring from top_logprobs, retry timing, usage and cost: the pure parts of the HTTP backend."""

from __future__ import annotations

import json
import math
from collections import Counter

import pytest

from biasatlas.backends.http.choice import ambiguity, option_for_token, score_options, top_logprobs
from biasatlas.backends.http.client import error_message, retry_after_seconds
from biasatlas.backends.http.setup import needs_key, safe_url
from biasatlas.backends.http.usage import HttpStats, cost_usd, format_stats

YES_NO = ("Yes", "No")


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("Yes", "Yes"),
        (" yes", "Yes"),
        ("YES", "Yes"),
        ("Y", "Yes"),
        ("No", "No"),
        (" n", "No"),
        ("Maybe", None),
        ("", None),
        (" ", None),
        ("Yesterday", None),
    ],
)
def test_token_maps_to_option(token: str, expected: str | None) -> None:
    assert option_for_token(token, YES_NO) == expected


def test_exact_match_wins_over_prefix() -> None:
    assert option_for_token("1", ("1", "10")) == "1"
    assert option_for_token("A", ("A", "Ab")) == "A"
    assert option_for_token("Ag", ("Agree", "Agreeable")) is None  # a prefix of both: ambiguous


def test_variants_are_summed_and_normalised() -> None:
    pairs = [("Yes", math.log(0.5)), (" yes", math.log(0.1)), ("No", math.log(0.2)), ("I", math.log(0.1))]
    score = score_options(pairs, YES_NO)
    assert score is not None
    assert score.probs["Yes"] == pytest.approx(0.6 / 0.8)
    assert score.probs["No"] == pytest.approx(0.2 / 0.8)
    assert score.mass == pytest.approx(0.8)
    assert score.logprobs["Yes"] == pytest.approx(math.log(0.6), abs=1e-4)


def test_option_missing_from_top_k_gets_zero() -> None:
    score = score_options([("No", math.log(0.4)), ("Sure", math.log(0.3))], YES_NO)
    assert score is not None
    assert score.probs == {"Yes": 0.0, "No": 1.0}
    assert score.logprobs["Yes"] is None


def test_no_option_in_top_k_is_none() -> None:
    assert score_options([("Sure", -0.1), ("Maybe", -2.0)], YES_NO) is None


def test_both_wire_formats() -> None:
    chat = {
        "logprobs": {
            "content": [
                {
                    "token": "Yes",
                    "logprob": -0.1,
                    "top_logprobs": [{"token": "Yes", "logprob": -0.1}, {"token": "No", "logprob": -2.5}],
                }
            ]
        }
    }
    legacy = {"logprobs": {"tokens": ["Yes"], "top_logprobs": [{"Yes": -0.1, "No": -2.5}]}}
    assert top_logprobs(chat) == [("Yes", -0.1), ("No", -2.5)]
    assert sorted(top_logprobs(legacy) or []) == [("No", -2.5), ("Yes", -0.1)]
    assert top_logprobs({"logprobs": None}) is None
    assert top_logprobs({}) is None
    assert top_logprobs({"logprobs": {"content": []}}) is None


def test_ambiguous_options_are_detected() -> None:
    assert ambiguity(YES_NO) is None
    assert ambiguity(("Likely", "Unlikely")) is None
    assert ambiguity(("Strongly agree", "Strongly disagree")) is not None
    assert ambiguity(("Yes",)) is not None


def test_retry_after_forms() -> None:
    assert retry_after_seconds({"retry-after": "2"}) == 2.0
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # in the past
    assert retry_after_seconds({}) is None
    assert retry_after_seconds({"retry-after": "soon"}) is None


def test_error_message_uses_the_servers_words() -> None:
    assert error_message(404, b'{"error": {"message": "model x not found"}}') == "HTTP 404: model x not found"
    assert error_message(502, b"<html>Bad gateway</html>") == "HTTP 502: an HTML page (Bad gateway)"
    assert error_message(500, b"") == "HTTP 500"


def test_a_long_error_message_is_shortened_between_words_and_says_so() -> None:
    words = "The model server could not finish the batch. " * 12 + "Not enough data to compute the answer."
    for body in (json.dumps({"error": {"message": words}}).encode(), words.encode()):
        message = error_message(500, body)
        assert message.endswith(" …") and len(message) <= 320, message
        kept = message.removeprefix("HTTP 500: ").removesuffix(" …")
        assert words.startswith(kept) and words[len(kept)] == " "  # cut where a word ends, never inside one


def test_urls_lose_credentials_and_keys_are_required_for_hosted_apis() -> None:
    assert safe_url("https://user:secret@example.org:8443/v1/?key=abc#x") == "https://example.org:8443/v1"
    assert needs_key("https://api.openai.com/v1")
    assert not needs_key("http://127.0.0.1:8000/v1")


def test_cost_and_stats_line() -> None:
    assert cost_usd(1_000_000, 500_000, 0.15, 0.60) == pytest.approx(0.45)
    assert cost_usd(10, 10, None, None) is None
    stats = HttpStats(requests=3, attempts=5, prompt_tokens=100, completion_tokens=10, retries=Counter({"http_429": 2}))
    line = format_stats(stats.as_dict(1.0, 2.0))
    assert "3 requests in 5 HTTP calls" in line
    assert "http_429 2" in line
    assert "$0.0001" in line


def test_run_notes_say_what_a_summary_must() -> None:
    from biasatlas.backends.http.usage import run_notes

    stats = HttpStats(requests=2, attempts=3, retries=Counter({"timeout": 1}), choice_fallbacks=2)
    notes = run_notes({"info": {"choice_fallback": "the server returned no logprobs", "http": stats.as_dict()}})
    assert notes[0] == "choice mode fell back to generate: the server returned no logprobs"
    assert "retried: timeout 1" in notes[1] and "choice fallbacks 2" in notes[1]
    assert run_notes({"info": {}}) == []
    scoring = {"methods": {"completions": 9, "first_token": 1}, "norm": "sum",
               "prompt_text": "the server's /apply-template"}
    structured = {"format": None, "free_text": 4, "fallback": "the server does not take a JSON answer format (x)"}
    notes = run_notes({"info": {"choice_scoring": scoring, "structured": structured}})
    assert notes == [
        "choice scoring: completions 9, first_token 1 (options scored by sum of token log-probabilities; "
        "prompt text: the server's /apply-template)",
        "structured answers: free_text 4; free text because the server does not take a JSON answer format (x)",
    ]


def test_request_bodies() -> None:
    from biasatlas.backends.openai_compat import OpenAIBackend, OpenAIOptions
    from biasatlas.records import GenerationSettings, Message, Prompt, Request

    backend = OpenAIBackend("m", OpenAIOptions(base_url="http://127.0.0.1:9/v1", check=False))
    prompt = Prompt(
        probe="t",
        language="en",
        options=("Yes", "No"),
        messages=(Message(role="system", content="Be brief."), Message(role="user", content="Q?")),
    )
    try:
        choice = backend._body(Request(prompt=prompt, settings=GenerationSettings(mode="choice")), choice=True)
        assert choice["max_tokens"] == 1 and choice["logprobs"] is True and choice["top_logprobs"] == 20
        assert [m["role"] for m in choice["messages"]] == ["system", "user"]
        greedy = backend._body(Request(prompt=prompt, settings=GenerationSettings(max_tokens=7)), choice=False)
        assert greedy["max_tokens"] == 7 and greedy["temperature"] == 0 and "seed" not in greedy
        hot = GenerationSettings(temperature=0.7, seed=3)
        seeds = {
            backend._body(Request(prompt=prompt, settings=hot, sample_index=i), choice=False)["seed"] for i in range(5)
        }
        assert len(seeds) == 5  # each sample its own seed, the same on every rerun
    finally:
        backend.close()


def test_tokens_per_minute_limit_waits() -> None:
    import asyncio
    import time

    from biasatlas.backends.http.client import _Limiter

    async def spend() -> tuple[float, float]:
        limiter = _Limiter(None, 600)  # 10 tokens a second, ten seconds' worth (100) at once
        started = time.perf_counter()
        await limiter.acquire(100)
        first = time.perf_counter() - started
        await limiter.acquire(5)  # the bucket is full: about half a second
        return first, time.perf_counter() - started

    first, total = asyncio.run(spend())
    assert first < 0.2 and total >= 0.4


def test_backoff_honours_retry_after_and_grows() -> None:
    import asyncio

    from biasatlas.backends.http.client import ChatClient, Retryable, RetryPolicy

    async def waits() -> tuple[list[float], float, float]:
        client = ChatClient(
            "http://127.0.0.1:9/v1",
            {},
            concurrency=1,
            timeout=1,
            connect_timeout=1,
            policy=RetryPolicy(backoff_initial=0.5, backoff_max=30, retry_after_max=60),
        )
        try:
            plain = Retryable("http_503", "busy")
            growing = [client._wait_for(plain, k) for k in (1, 2, 3, 4, 10)]
            told = client._wait_for(Retryable("http_429", "slow down", retry_after=2.0), 1)
            capped = client._wait_for(Retryable("http_429", "slow down", retry_after=600.0), 1)
            return growing, told, capped
        finally:
            await client.close()

    growing, told, capped = asyncio.run(waits())
    for k, wait in zip((1, 2, 3, 4), growing, strict=False):
        base = 0.5 * 2 ** (k - 1)
        assert base <= wait <= base + 0.5  # exponential, with up to one initial step of jitter
    assert growing[-1] == 30  # capped at backoff_max
    assert 2.0 <= told <= 2.25 and 60 <= capped <= 60.25
