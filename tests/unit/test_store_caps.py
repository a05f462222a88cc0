"""One cap for everything stored per answer: the text, the info (a structured answer's raw JSON, ...),
the finish reason and the token counts, whatever the server sent."""

from __future__ import annotations

import json
from pathlib import Path

from biasatlas.records import GenerationSettings, Message, Prompt, Request, Response
from biasatlas.store import DB_NAME, MAX_ANSWER_CHARS, Store

SECRET = "sk-test-0123456789abcdefXYZ"


def _request(i: int) -> Request:
    prompt = Prompt(probe="contact", language="en", messages=(Message(role="user", content=f"Q{i}?"),),
                    options=("Yes", "No"))
    return Request(prompt=prompt, settings=GenerationSettings())


def _row(store: Store) -> tuple[str, str, str | None]:
    return store.conn.execute("SELECT text, info_json, finish_reason FROM responses").fetchone()


def test_a_structured_answer_of_20_mb_is_capped_in_the_info_too(tmp_path: Path) -> None:
    huge = '{"answer": "Yes", "why": "' + "x" * 20_000_000 + '"}'
    with Store(tmp_path) as store:
        for i in range(6):
            request = _request(i)
            response = Response(key=request.cache_key("b"), backend_id="b", text="Yes",
                                info={"structured": huge, "structured_format": "json_schema", "n": 1})
            store.save(response, request)
        rows = store.conn.execute("SELECT info_json FROM responses").fetchall()
    assert len(rows) == 6
    for (info_json,) in rows:
        assert len(info_json) <= MAX_ANSWER_CHARS
        info = json.loads(info_json)
        assert info["structured_format"] == "json_schema" and info["n"] == 1
        assert info["structured"] == huge[: len(info["structured"])] and len(info["structured"]) > 1000
        assert info["truncated"] == {"structured": len(huge)}
    assert (tmp_path / DB_NAME).stat().st_size < 6 * 2 * MAX_ANSWER_CHARS + 1_000_000


def test_any_info_too_large_to_store_is_replaced_by_a_note_of_its_size(tmp_path: Path) -> None:
    bulky = {"logprobs": [{"token": f"t{i}", "p": -0.5} for i in range(100_000)], "model": "m"}
    request = _request(0)
    with Store(tmp_path) as store:
        store.save(Response(key=request.cache_key("b"), backend_id="b", text="Yes", info=bulky), request)
        info = json.loads(_row(store)[1])
    assert info["model"] == "m" and "logprobs" not in info and info["info_truncated_from"] > MAX_ANSWER_CHARS


def test_a_secret_at_the_cut_is_masked_not_left_in_part(tmp_path: Path) -> None:
    for offset in (-20, -10, -3, 0):
        text = "a" * (MAX_ANSWER_CHARS + offset) + SECRET + "b" * MAX_ANSWER_CHARS
        request = _request(0)
        study = tmp_path / str(offset)
        with Store(study) as store:
            store.hide([SECRET])
            store.save(Response(key=request.cache_key("b"), backend_id="b", text="Yes",
                                info={"structured": text}), request)
            info_json = _row(store)[1]
        assert SECRET[:8] not in info_json, offset
        assert len(info_json) <= MAX_ANSWER_CHARS


def test_a_finish_reason_and_token_counts_out_of_range_do_not_fail_the_batch(tmp_path: Path) -> None:
    request = _request(0)
    response = Response(key=request.cache_key("b"), backend_id="b", text="Yes", finish_reason="z" * 10_000_000,
                        prompt_tokens=10**30, completion_tokens=-(10**30))
    with Store(tmp_path) as store:
        store.save(response, request)
        finish, prompt_tokens, completion_tokens = store.conn.execute(
            "SELECT finish_reason, prompt_tokens, completion_tokens FROM responses").fetchone()
    assert len(finish) <= 100 and finish.startswith("zzz")
    assert prompt_tokens is None and completion_tokens is None

