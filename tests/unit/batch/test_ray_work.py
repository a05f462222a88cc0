"""`batch run`: each request of the input asked once (issue 42): repeated lines, ids sharing a body, conflicts,
lines answered before; the actor writes one answer per id. No Ray is started."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from biasatlas.batch.ray_asker import LineAsker
from biasatlas.batch.work import work_list


class ScriptedClient:
    """Stands in for ChatClient: answers each question as "NAME:QUESTION", counting what it was asked."""

    def __init__(self, name: str) -> None:
        self.name, self.asked = name, Counter[str]()

    async def complete(self, body: dict[str, Any], retries: Counter[str]) -> dict[str, Any]:
        key = body["messages"][0]["content"]
        self.asked[key] += 1
        return {"choices": [{"message": {"role": "assistant", "content": f"{self.name}:{key}"}}]}

    async def close(self) -> None:
        return None


def line(custom_id: str, text: str) -> str:
    return json.dumps({"custom_id": custom_id, "method": "POST", "url": "/v1/chat/completions",
                       "body": {"model": "m", "messages": [{"role": "user", "content": text}]}})


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    return path


def ask(tmp_path: Path, files: list[Path], done: frozenset[str] = frozenset()) -> tuple[Any, ScriptedClient,
                                                                                          list[dict[str, Any]]]:
    """The work list of ``files``, asked by one actor as Ray would hand it the rows; (work, client, output)."""
    work = work_list(files, done)
    client = ScriptedClient("a")
    asker = LineAsker(["http://s0/v1"], str(tmp_path / "out"), per_actor=4, timeout=5, connect_timeout=1,
                      max_retries=0, key_env="NO_SUCH_KEY_VAR")
    asker.clients = [client]
    rows = [item.row() for item in work.items]
    if rows:
        asker({"text": [r["text"] for r in rows], "also": [r["also"] for r in rows]})
    asker.close()
    written = [json.loads(x) for x in asker.path.read_text().splitlines()] if asker.path.exists() else []
    return work, client, written


def test_a_duplicated_line_is_asked_once(tmp_path: Path) -> None:
    lines = [line(f"k{i}", f"q{i}") for i in range(5)]
    files = [write(tmp_path / "a.jsonl", lines), write(tmp_path / "b.jsonl", [lines[2], lines[2]])]  # copied twice
    work, client, written = ask(tmp_path, files)
    assert work.lines == 7 and work.duplicates == 2 and len(work.items) == 5
    assert client.asked == Counter({f"q{i}": 1 for i in range(5)})  # q2 asked once
    assert Counter(w["custom_id"] for w in written) == Counter({f"k{i}": 1 for i in range(5)})


def test_ids_sharing_a_body_are_asked_once_and_each_answered(tmp_path: Path) -> None:
    files = [write(tmp_path / "a.jsonl", [line("k1", "same"), line("k2", "same"), line("k3", "other")])]
    work, client, written = ask(tmp_path, files)
    assert work.shared == 1 and [i.also for i in work.items] == [["k2"], []]
    assert client.asked == Counter({"same": 1, "other": 1})
    by_id = {w["custom_id"]: w["response"]["body"] for w in written}
    assert set(by_id) == {"k1", "k2", "k3"} and by_id["k1"] == by_id["k2"]


def test_conflicts_unreadable_and_answered_before_are_counted_not_asked(tmp_path: Path) -> None:
    files = [write(tmp_path / "a.jsonl", [line("k1", "q1"), line("k1", "changed"), "not json", '{"custom_id": 3}',
                                          line("k2", "q2"), "", line("k3", "q3")])]
    work, client, written = ask(tmp_path, files, done=frozenset({"k2"}))
    assert work.conflicts == ["k1"] and len(work.unreadable) == 2 and work.skipped == 1
    assert "a.jsonl:3: not JSON" in work.unreadable[0] and "a.jsonl:4:" in work.unreadable[1]
    assert client.asked == Counter({"q1": 1, "q3": 1}) and {w["custom_id"] for w in written} == {"k1", "k3"}
    assert work.lines == 6 == len(work.items) + work.accounted


# ---- property: whatever the input repeats, each request is asked once and each id answered once ----------------
ids = st.sampled_from([f"k{i}" for i in range(8)])
questions = st.sampled_from([f"q{i}" for i in range(5)])


@settings(max_examples=60, deadline=None)
@given(requests=st.dictionaries(ids, questions, min_size=1),
       picks=st.lists(st.integers(0, 100), min_size=1, max_size=40),
       split=st.integers(0, 40), done=st.sets(ids, max_size=3))
def test_each_request_is_asked_once_and_each_id_answered_once(
        tmp_path_factory: Any, requests: dict[str, str], picks: list[int], split: int, done: set[str]) -> None:
    tmp = tmp_path_factory.mktemp("prop")
    distinct = sorted(requests.items())
    chosen = [distinct[p % len(distinct)] for p in picks]  # lines repeat, in any order
    lines = [line(k, q) for k, q in chosen]
    files = [write(tmp / "a.jsonl", lines[:split]), write(tmp / "b.jsonl", lines[split:])]
    work, client, written = ask(tmp, files, frozenset(done))
    present = {k for k, _ in chosen}
    todo = {k: q for k, q in requests.items() if k in present and k not in done}
    assert work.lines == len(lines) == len(work.items) + sum(len(i.also) for i in work.items) + work.accounted
    assert work.conflicts == [] and work.duplicates == len(lines) - len(present)
    assert client.asked == Counter(set(todo.values()))  # each distinct body asked once
    assert Counter(w["custom_id"] for w in written) == Counter(set(todo))  # each id answered once
    for w in written:  # under its own id, the answer to its own question
        assert w["response"]["body"]["choices"][0]["message"]["content"] == f"a:{todo[w['custom_id']]}"
