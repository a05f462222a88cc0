"""A label of several tokens is never read from its first token: over a chat-only server whose tokenizer splits
numbers into digits, the first token of "63" is "6", itself a label; choice mode generates instead and reads the
reply whole (a Samaritan judge could otherwise only say 1-9)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from biasatlas.backends.http.choice import ambiguity, starts_another
from biasatlas.backends.openai_compat import OpenAIBackend, OpenAIOptions
from biasatlas.records import GenerationSettings, Message, Prompt
from biasatlas.runner import run_plan
from biasatlas.store import Store

RATINGS = (*(str(n) for n in range(1, 101)), "refusal", "unclear")


def _digit_splitting_chat(seen: list[dict[str, Any]]) -> Any:
    """A chat-only server (no /completions, no /apply-template) of a model that means "63" and tokenizes it "6",
    "3": its first token's top log-probabilities hold "6" (and a little "7"), never "63"."""
    from aiohttp import web

    async def handler(request: web.Request, n: int) -> web.StreamResponse:
        body = json.loads(await request.read())
        seen.append(body)
        choice: dict[str, Any] = {"index": 0, "finish_reason": "stop"}
        if body.get("logprobs"):
            choice["message"] = {"role": "assistant", "content": "6"}
            choice["logprobs"] = {"content": [{"token": "6", "logprob": -0.01, "top_logprobs": [
                {"token": "6", "logprob": -0.01}, {"token": "7", "logprob": -4.6}]}]}
        else:
            choice["message"] = {"role": "assistant", "content": "63"}
        return web.json_response({"id": "x", "object": "chat.completion", "choices": [choice],
                                  "usage": {"prompt_tokens": 5, "completion_tokens": 2}})

    return handler


def test_options_that_start_another_are_no_first_token_choice() -> None:
    assert starts_another(("6", "63", "7")) == ("6", "63")
    assert starts_another(("yes", "no", "refusal", "unclear")) is None
    reason = ambiguity(RATINGS)
    assert reason is not None and "'1' is the start of '10'" in reason
    assert ambiguity(("Yes", "No")) is None  # one token still tells these apart


def test_a_multi_token_rating_is_read_whole_not_from_its_first_digit(tiny_server: Any, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "")
    seen: list[dict[str, Any]] = []
    url = tiny_server(_digit_splitting_chat(seen))
    prompt = Prompt(probe="samaritan.judge", language="en", options=RATINGS,
                    messages=(Message(role="user", content="Rate it: a number from 1 to 100."),))
    backend = OpenAIBackend("stub-model", OpenAIOptions(base_url=url, concurrency=1, timeout=5, structured="off",
                                                        backoff_initial=0.02))
    with Store(tmp_path / "s") as store:
        run_plan([prompt], backend, store, GenerationSettings(mode="choice"), progress=False)
        [(text, probs, info)] = store.conn.execute(
            "SELECT text, option_probs_json, info_json FROM responses").fetchall()
    backend.close()
    assert text == "63"  # the whole reply, not "6" from the first token
    assert not json.loads(probs or "null")
    assert "start of" in json.loads(info)["choice_fallback"]
    assert not any(body.get("logprobs") for body in seen)  # the first-token route was never asked
