"""Structured answers in generate mode: the JSON reader, and the stub in each of its dialects."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from biasatlas.backends.http.structured import is_refusal, read_answer, response_format
from biasatlas.records import GenerationSettings, Message, Prompt
from biasatlas.runner import run_plan
from biasatlas.store import Store

YES_NO = ("Yes", "No")
GENERATE = GenerationSettings(mode="generate", max_tokens=4)


@pytest.mark.parametrize(
    ("content", "text", "json_ok", "problem"),
    [
        ('{"answer": "Yes"}', "Yes", True, None),
        ('  {"answer":"No"}\n', "No", True, None),
        ('```json\n{"answer": "No"}\n```', "No", True, None),
        ('{"answer": " yes "}', "Yes", True, None),
        ('{"answer": "Maybe"}', "Maybe", True, "the answer is not one of the options"),
        ('{"reply": "Yes"}', '{"reply": "Yes"}', False, "no string 'answer' in the JSON"),
        ("Yes.", "Yes.", False, "not JSON"),
        ('{"answer": "Ye', '{"answer": "Ye', False, "not JSON"),
    ],
)
def test_read_answer(content: str, text: str, json_ok: bool, problem: str | None) -> None:
    reading = read_answer(content, YES_NO)
    assert (reading.text, reading.json_ok, reading.problem) == (text, json_ok, problem)


def test_response_format_dialects() -> None:
    schema = {"type": "object", "properties": {"answer": {"type": "string", "enum": ["Yes", "No"]}},
              "required": ["answer"]}
    assert response_format("json_schema", YES_NO) == {
        "type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}
    assert response_format("json_object", YES_NO) == {"type": "json_object", "schema": schema}


def test_refusals() -> None:
    assert is_refusal("http_400", "HTTP 400: response_format is not supported")
    assert is_refusal("http_500", "HTTP 500: validation error ('body', 'response_format', 'type')")
    assert not is_refusal("http_400", "HTTP 400: max_tokens is too large")


def run(backend: Any, ps: list[Prompt], tmp_path: Path) -> tuple[Any, dict[str, dict[str, Any]]]:
    with Store(tmp_path) as store:
        totals = run_plan(ps, backend, store, GENERATE, progress=False)
        rows = store.conn.execute("SELECT key, text, info_json FROM responses").fetchall()
    return totals, {k: {"text": t, "info": json.loads(i)} for k, t, i in rows}


def expected_answers(stub: ModuleType, ps: list[Prompt]) -> set[str]:
    return {stub.expected_answer([m.model_dump() for m in p.messages]) for p in ps}


def test_structured_answers_are_the_option(stub: ModuleType, make_prompts: Any, make_backend: Any,
                                           tmp_path: Path) -> None:
    ps = make_prompts(20)
    with stub.start_stub_thread() as server:
        b = make_backend(server)
        totals, responses = run(b, ps, tmp_path)
        served = server.stats()
    b.close()
    assert b.id.endswith("#json")
    assert {r["text"] for r in responses.values()} == expected_answers(stub, ps)  # "Yes", not "Yes."
    assert all(json.loads(r["info"]["structured"])["answer"] == r["text"] for r in responses.values())
    assert totals.info["structured"] == {"format": "json_schema", "structured": 20}
    assert served["formats"] == {"json_schema": 20}
    assert totals.info["http"]["attempts"] == 20


@pytest.mark.parametrize(
    ("flag", "formats", "structured", "failed_tries"),
    [
        ("json_object", {"json_schema": 1, "json_object": 20}, True, 1),  # llama-cpp-python: a 500, once
        ("reject", {"json_schema": 1, "json_object": 1}, False, 2),
        ("ignore", {"json_schema": 1}, False, 1),
    ],
)
def test_a_server_that_refuses_costs_one_try_per_dialect(
    stub: ModuleType, make_prompts: Any, make_backend: Any, tmp_path: Path,
    flag: str, formats: dict[str, int], structured: bool, failed_tries: int,
) -> None:
    ps = make_prompts(20)
    with stub.start_stub_thread("--response-format", flag) as server:
        b = make_backend(server)
        totals, responses = run(b, ps, tmp_path / "first")
        again, _ = run(b, make_prompts(25)[20:], tmp_path / "second")  # the same backend, later
        served = server.stats()
    b.close()
    texts = {r["text"] for r in responses.values()}
    want = expected_answers(stub, ps)
    assert texts == (want if structured else {w + "." for w in want})
    assert served["formats"] == {k: v + (5 if k == "json_object" and structured else 0) for k, v in formats.items()}
    assert totals.info["http"]["attempts"] == 20 + failed_tries
    assert totals.info["http"]["retries"] == {} and totals.failed == 0
    assert again.info["http"]["attempts"] == 5  # remembered: no new failed try
    report = totals.info["structured"]
    if structured:
        assert report == {"format": "json_object", "structured": 20}
    else:
        assert report["free_text"] == 20 and "does not take a JSON answer format" in report["fallback"]
        assert all(r["info"]["structured_fallback"] == report["fallback"] for r in responses.values())


def test_structured_off_and_prompts_without_options(stub: ModuleType, make_prompts: Any, make_backend: Any,
                                                    tmp_path: Path) -> None:
    open_question = [Prompt(probe="http", language="en", messages=(Message(role="user", content="Tell me."),))]
    with stub.start_stub_thread() as server:
        off = make_backend(server, structured="off")
        totals, responses = run(off, make_prompts(5), tmp_path / "off")
        off.close()
        on = make_backend(server)
        plain, _ = run(on, open_question, tmp_path / "plain")
        on.close()
        served = server.stats()
    assert not off.id.endswith("#json") and on.id.endswith("#json")
    assert served["formats"] == {}
    assert "structured" not in totals.info and "structured" not in plain.info
    assert all(r["text"].endswith(".") for r in responses.values())
