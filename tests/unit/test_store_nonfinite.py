"""An answer's info is valid JSON: NaN and Infinity log-probabilities (a judge, a server) are stored as null."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from biasatlas.records import GenerationSettings, Message, Prompt, Request, Response
from biasatlas.store import DB_NAME, Store


def _strict(text: str) -> object:
    def refuse(name: str) -> object:
        raise ValueError(f"not JSON: {name}")
    return json.loads(text, parse_constant=refuse)


def test_non_finite_numbers_in_info_are_stored_as_null(tmp_path: Path) -> None:
    prompt = Prompt(probe="contact", language="en", messages=(Message(role="user", content="Q?"),),
                    options=("Yes", "No"))
    request = Request(prompt=prompt, settings=GenerationSettings())
    info = {"top_logprobs": {"Yes": float("-inf"), "No": -0.1}, "score": float("nan"),
            "list": [float("inf"), 1.0], "nested": {"deep": [{"x": float("nan")}]}}
    with Store(tmp_path) as store:
        run_id = store.start_run("contact", "m", {}, "0")
        store.record_plan(run_id, "m", [request])
        store.save(Response(key=request.cache_key("m"), backend_id="m", text="Yes", info=info), request)
    with sqlite3.connect(tmp_path / DB_NAME) as conn:
        (stored,) = conn.execute("SELECT info_json FROM responses").fetchone()
    parsed = _strict(stored)
    assert parsed == {"top_logprobs": {"Yes": None, "No": -0.1}, "score": None, "list": [None, 1.0],
                      "nested": {"deep": [{"x": None}]}}
