"""The pieces of `batch run --engine ray` that need no Ray: the actor's asking, output lines, resume, manifests."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from biasatlas.backends.http.client import Fatal, Retryable
from biasatlas.batch.formats import OutputLine, parse_line
from biasatlas.batch.ray_asker import LineAsker, endpoint_of, output_record
from biasatlas.batch.ray_engine import MANIFEST, answered_ids, input_files, read_manifest
from biasatlas.batch.ray_vllm import to_output_line, to_stage_row


class ScriptedClient:
    """Stands in for ChatClient: answers by the line's model field, or raises what the script says."""

    def __init__(self, name: str, fail: dict[str, Exception] | None = None) -> None:
        self.name, self.fail, self.asked = name, fail or {}, Counter[str]()

    async def complete(self, body: dict[str, Any], retries: Counter[str]) -> dict[str, Any]:
        key = body["messages"][0]["content"]
        self.asked[key] += 1
        if key in self.fail:
            raise self.fail[key]
        return {"choices": [{"message": {"role": "assistant", "content": f"{self.name}:{key}"}}]}

    async def close(self) -> None:
        return None


def line(custom_id: str, text: str) -> str:
    return json.dumps({"custom_id": custom_id, "method": "POST", "url": "/v1/chat/completions",
                       "body": {"model": "m", "messages": [{"role": "user", "content": text}]}})


def asker(tmp_path: Path, clients: list[ScriptedClient], skip: frozenset[str] = frozenset()) -> LineAsker:
    a = LineAsker([f"http://s{i}/v1" for i in range(len(clients))], str(tmp_path / "out"), per_actor=4,
                  timeout=5, connect_timeout=1, max_retries=0, key_env="NO_SUCH_KEY_VAR", skip=skip)
    a.clients = list(clients)
    return a


def test_lines_are_spread_over_endpoints_stably() -> None:
    ids = [f"k{i}" for i in range(2000)]
    first = [endpoint_of(i, 3) for i in ids]
    assert first == [endpoint_of(i, 3) for i in ids]  # the same in every actor and every rerun
    shares = Counter(first)
    assert set(shares) == {0, 1, 2} and min(shares.values()) > 550  # about a third each


def test_output_lines_are_what_batch_import_reads(tmp_path: Path) -> None:
    ok = output_record("k1", {"choices": [{"message": {"content": "Yes"}}]}, None)
    bad = output_record("k2", None, ("http_400", "unknown model"))
    read_ok = parse_line(tmp_path, 1, (json.dumps(ok) + "\n").encode())
    read_bad = parse_line(tmp_path, 2, (json.dumps(bad) + "\n").encode())
    assert isinstance(read_ok, OutputLine) and read_ok.status_code == 200 and read_ok.error is None
    assert read_ok.body["choices"][0]["message"]["content"] == "Yes"
    assert isinstance(read_bad, OutputLine) and read_bad.error == "batch error http_400: unknown model"


def test_the_actor_answers_writes_each_line_and_keeps_fatal_errors(tmp_path: Path) -> None:
    fatal: dict[str, Exception] = {"boom": Fatal("http_400", "bad request")}
    clients = [ScriptedClient("a", fatal), ScriptedClient("b", fatal)]
    a = asker(tmp_path, clients)
    texts = [line(f"k{i}", f"q{i}") for i in range(20)] + [line("kx", "boom"), "not json", ""]
    rows = a({"text": texts})
    a.close()
    assert Counter(rows["status"]) == {"answered": 20, "error": 1, "unreadable": 1}
    written = [json.loads(x) for x in a.path.read_text().splitlines()]
    assert len(written) == 21
    by_id = {w["custom_id"]: w for w in written}
    for i in range(20):  # each answered once, by the endpoint its id hashes to
        content = by_id[f"k{i}"]["response"]["body"]["choices"][0]["message"]["content"]
        assert content == f"{'ab'[endpoint_of(f'k{i}', 2)]}:q{i}"
    assert by_id["kx"]["error"] == {"code": "http_400", "message": "bad request"} and "http_400" in rows["cause"]
    assert sum(sum(c.asked.values()) for c in clients) == 21


def test_a_transient_failure_that_outlasts_the_retries_is_an_error_line(tmp_path: Path) -> None:
    clients = [ScriptedClient("a", {"q": Retryable("http_503", "overloaded")})]
    a = asker(tmp_path, clients)
    rows = a({"text": [line("k", "q")]})
    a.close()
    assert rows["status"] == ["error"] and rows["cause"] == ["http_503"]
    assert json.loads(a.path.read_text())["error"]["code"] == "http_503"


def test_lines_answered_before_are_not_asked(tmp_path: Path) -> None:
    clients = [ScriptedClient("a")]
    a = asker(tmp_path, clients, skip=frozenset({"k0", "k1"}))
    rows = a({"text": [line(f"k{i}", f"q{i}") for i in range(4)]})
    a.close()
    assert Counter(rows["status"]) == {"skipped": 2, "answered": 2}
    assert set(clients[0].asked) == {"q2", "q3"}


def test_answered_ids_reads_answers_not_errors_nor_cut_lines(tmp_path: Path) -> None:
    out = tmp_path / "answers"
    out.mkdir()
    lines = [output_record("a", {"choices": []}, None), output_record("b", None, ("timeout", "slow")),
             output_record("c", {"choices": []}, None)]
    text = "".join(json.dumps(x) + "\n" for x in lines)
    (out / "ray-1.jsonl").write_text(text[: len(text) - 20])  # the kill cut the last line
    assert answered_ids(out) == {"a"}
    assert answered_ids(tmp_path / "missing") == set()


def test_input_files_and_manifest(tmp_path: Path) -> None:
    (tmp_path / "b.jsonl").write_text("x\n")
    (tmp_path / "a.jsonl").write_text("x\n")
    (tmp_path / "notes.txt").write_text("x")
    assert [p.name for p in input_files(tmp_path)] == ["a.jsonl", "b.jsonl"]
    assert read_manifest(tmp_path) is None
    (tmp_path / MANIFEST).write_text(json.dumps({"engine": "ray", "runs": [{"address": "local"}]}))
    assert read_manifest(tmp_path) == {"engine": "ray", "runs": [{"address": "local"}]}


def test_vllm_stage_rows_keep_the_request_and_refuse_choice_lines() -> None:
    row = to_stage_row({"custom_id": "k", "body": {"model": "m", "messages": [{"role": "user", "content": "hi"}],
                                                   "temperature": 0.0, "max_tokens": 8, "seed": 3}})
    assert row == {"custom_id": "k", "model": "m", "messages": [{"role": "user", "content": "hi"}],
                   "sampling_params": {"temperature": 0.0, "max_tokens": 8, "seed": 3}}
    with pytest.raises(ValueError, match="choice-mode"):
        to_stage_row({"custom_id": "k", "body": {"messages": [], "logprobs": True, "top_logprobs": 20}})
    out = to_output_line({"custom_id": "k", "model": "m", "generated_text": "Ja", "num_input_tokens": 5,
                          "num_generated_tokens": 1})
    read = parse_line(Path("x"), 1, (json.dumps(out) + "\n").encode())
    assert isinstance(read, OutputLine) and read.body["choices"][0]["message"]["content"] == "Ja"


def test_the_actor_never_holds_the_key_in_what_it_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAY_TEST_KEY", "sk-secret-123")
    a = LineAsker(["http://s/v1"], str(tmp_path / "out"), per_actor=1, timeout=5, connect_timeout=1,
                  max_retries=0, key_env="RAY_TEST_KEY")
    assert a.headers == {"Authorization": "Bearer sk-secret-123"}
    a.clients = [ScriptedClient("a")]
    a({"text": [line("k", "q")]})
    a.close()
    assert "sk-secret" not in a.path.read_text()
