"""Choice mode over HTTP against the stub: full-option scoring through /completions, and its fallbacks.

The stub's /v1/completions is a toy language model; ``stub.option_logprob(context, option)`` is what
a correct client must find for an option after the chat-formatted prompt ``context``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from biasatlas.backends.http.template import raw_text
from biasatlas.records import GenerationSettings, Prompt, Request
from biasatlas.runner import run_plan
from biasatlas.store import Store

CHOICE = GenerationSettings(mode="choice")
SETS = [("Yes", "No"), ("Likely", "Unlikely"), ("Líklegt", "Ólíklegt")]


def expected(stub: ModuleType, prompt: Prompt, norm: str = "sum", raw: bool = False) -> dict[str, float]:
    messages = [m.model_dump() for m in prompt.messages]
    context = raw_text(messages) if raw else stub.render(messages)
    scores = {}
    for option in prompt.options:
        total, n = stub.option_logprob(context, option)
        scores[option] = total if norm == "sum" else total / n
    top = max(scores.values())
    z = sum(math.exp(v - top) for v in scores.values())
    return {o: math.exp(v - top) / z for o, v in scores.items()}


def run(backend: Any, ps: list[Prompt], tmp_path: Path) -> tuple[Any, dict[str, Any]]:
    """Run the prompts; the totals and the stored responses by key."""
    with Store(tmp_path) as store:
        totals = run_plan(ps, backend, store, CHOICE, progress=False)
        rows = store.conn.execute("SELECT key, text, option_probs_json, info_json FROM responses").fetchall()
    backend.close()
    responses = {
        key: {"text": text, "option_probs": json.loads(probs or "null"), "info": json.loads(info)}
        for key, text, probs, info in rows
    }
    return totals, responses


def check_probs(stub: ModuleType, backend_id: str, ps: list[Prompt], responses: dict[str, Any], **kw: Any) -> None:
    for p in ps:
        r = responses[Request(prompt=p, settings=CHOICE).cache_key(backend_id)]
        want = expected(stub, p, **kw)
        assert r["option_probs"] == pytest.approx(want, abs=1e-9), p.options
        assert r["info"]["choice_method"] == "completions"


def all_prompts(make_prompts: Any) -> list[Prompt]:
    return [p for options in SETS for p in make_prompts(6, options)]


def test_full_option_scoring_with_the_servers_template(stub: ModuleType, make_prompts: Any,
                                                       make_backend: Any, tmp_path: Path) -> None:
    ps = all_prompts(make_prompts)
    with stub.start_stub_thread("--apply-template") as server:
        b = make_backend(server, concurrency=1)
        bid = b.id
        totals, responses = run(b, ps, tmp_path)
        served = server.stats()
    assert totals.new == 18 and totals.failed == 0
    check_probs(stub, bid, ps, responses)
    scoring = totals.info["choice_scoring"]
    assert scoring["methods"] == {"completions": 18} and scoring["norm"] == "sum"
    assert scoring["prompt_text"] == "the server's /apply-template" and "reason" not in scoring
    tokens = {frozenset(r["info"]["option_tokens"].items()) for r in responses.values()}
    # the stub's tokens: letters in threes, a non-ASCII character as two byte tokens
    assert tokens == {frozenset({("Yes", 1), ("No", 1)}), frozenset({("Likely", 2), ("Unlikely", 3)}),
                      frozenset({("Líklegt", 5), ("Ólíklegt", 7)})}
    # Yes/No are one token each: after the first prompt, one request per prompt instead of three.
    assert served["completions"] == 3 + 5 + 2 * 3 * 6


def test_full_option_scoring_with_a_template_file(stub: ModuleType, make_prompts: Any,
                                                  make_backend: Any, tmp_path: Path) -> None:
    template = tmp_path / "chat.jinja"
    template.write_text(stub.TEMPLATE, encoding="utf-8")
    ps = all_prompts(make_prompts)
    with stub.start_stub_thread() as server:  # no /apply-template: the file gives the prompt text
        b = make_backend(server, chat_template=str(template))
        bid = b.id
        totals, responses = run(b, ps, tmp_path / "study")
    assert "#json,tpl-" in bid
    check_probs(stub, bid, ps, responses)
    assert totals.info["choice_scoring"]["prompt_text"] == f"chat template from {template}"


def test_mean_per_token_and_raw_text(stub: ModuleType, make_prompts: Any, make_backend: Any, tmp_path: Path) -> None:
    ps = all_prompts(make_prompts)
    with stub.start_stub_thread() as server:
        b = make_backend(server, choice_norm="mean", chat_template="raw")
        bid = b.id
        totals, responses = run(b, ps, tmp_path)
    assert bid.endswith("#json,mean,raw")
    check_probs(stub, bid, ps, responses, norm="mean", raw=True)
    assert totals.info["choice_scoring"]["norm"] == "mean"


@pytest.mark.parametrize(
    ("flags", "reason"),
    [
        (("--apply-template", "--completions", "no-echo"), "generated tokens only"),
        (("--apply-template", "--completions", "off"), "POST /completions gave HTTP 404"),
        ((), "/apply-template gave HTTP 404"),
    ],
)
def test_first_token_where_full_scoring_cannot_work(stub: ModuleType, make_prompts: Any, make_backend: Any,
                                                    tmp_path: Path, flags: tuple[str, ...], reason: str) -> None:
    ps = make_prompts(20)
    with stub.start_stub_thread(*flags) as server:
        b = make_backend(server)
        bid = b.id
        totals, responses = run(b, ps, tmp_path)
        served = server.stats()
    scoring = totals.info["choice_scoring"]
    assert scoring["methods"] == {"first_token": 20}
    assert reason in scoring["reason"]
    assert {r["info"]["choice_method"] for r in responses.values()} == {"first_token"}
    # The server was tried once, not once per prompt.
    assert served["completions"] <= 3
    assert totals.info["http"]["attempts"] <= 20 + 1 + 3
    for p in ps:  # the stub's first-token answer: exactly p_yes once normalised over Yes and No
        r = responses[Request(prompt=p, settings=CHOICE).cache_key(bid)]
        digest = stub.prompt_digest([m.model_dump() for m in p.messages])
        assert r["option_probs"]["Yes"] == pytest.approx(stub.p_yes(digest), abs=1e-6)


def test_first_token_on_request(stub: ModuleType, make_prompts: Any, make_backend: Any, tmp_path: Path) -> None:
    with stub.start_stub_thread("--apply-template") as server:
        b = make_backend(server, choice_method="first_token")
        bid = b.id
        totals, _ = run(b, make_prompts(5), tmp_path)
        served = server.stats()
    assert bid.endswith("#json,first") and served["completions"] == 0
    assert totals.info["choice_scoring"] == {
        "methods": {"first_token": 5}, "norm": "sum", "reason": "choice_method=first_token"}
