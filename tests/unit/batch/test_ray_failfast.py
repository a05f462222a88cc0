"""`batch run --engine ray` gives a dead server up as the live runner does (the HTTP backend's breaker, one per
endpoint in each actor): its lines come back stopped, unasked and unwritten, and the driver ends the job at
the first; a server that fails some requests is never given up. No Ray is started."""

from __future__ import annotations

import json
import socket
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from biasatlas.backends.http.client import Fatal, Retryable
from biasatlas.batch.ray_asker import LineAsker, endpoint_of
from biasatlas.batch.ray_engine import RayRun, tally


def line(custom_id: str, text: str) -> str:
    return json.dumps({"custom_id": custom_id, "method": "POST", "url": "/v1/chat/completions",
                       "body": {"model": "m", "messages": [{"role": "user", "content": text}]}})


class Script:
    """Stands in for ChatClient: answers "q..." lines, raises what ``fail`` gives for a line's question."""

    def __init__(self, fail: dict[str, Exception] | None = None) -> None:
        self.fail, self.asked = fail or {}, Counter[str]()

    async def complete(self, body: dict[str, Any], retries: Counter[str]) -> dict[str, Any]:
        key = body["messages"][0]["content"]
        self.asked[key] += 1
        if key in self.fail:
            raise self.fail[key]
        return {"choices": [{"message": {"role": "assistant", "content": key}}]}

    async def close(self) -> None:
        return None


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_dead_server_is_given_up_at_once_not_retried_line_by_line(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"  # connection refused
    asker = LineAsker([url], str(tmp_path / "out"), per_actor=4, timeout=5, connect_timeout=1, max_retries=6,
                      key_env="NO_SUCH_KEY_VAR", max_wait=0.2)
    started = time.perf_counter()
    rows = asker({"text": [line(f"k{i}", f"q{i}") for i in range(40)]})
    seconds = time.perf_counter() - started
    asker.close()
    assert Counter(rows["status"]) == {"stopped": 40}  # none asked six times, none written as failed
    assert "max-wait" in rows["cause"][0] and set(rows["endpoint"]) == {url}
    assert seconds < 5 and asker.path.read_text() == ""


def test_a_rejected_key_stops_the_endpoint_after_its_first_line(tmp_path: Path) -> None:
    asker = LineAsker(["http://s0/v1", "http://s1/v1"], str(tmp_path / "out"), per_actor=1, timeout=5,
                      connect_timeout=1, max_retries=0, key_env="NO_SUCH_KEY_VAR")
    dead = Script({f"q{i}": Fatal("http_401", "invalid key") for i in range(20)})
    live = Script()
    asker.clients = [dead, live]
    rows = asker({"text": [line(f"k{i}", f"q{i}") for i in range(20)]})
    asker.close()
    to_dead = [i for i in range(20) if endpoint_of(f"k{i}", 2) == 0]
    assert sum(dead.asked.values()) == 1  # one line told the key is rejected: the endpoint's other lines wait
    status = dict(zip(rows["custom_id"], rows["status"], strict=True))
    assert Counter(status[f"k{i}"] for i in to_dead) == {"error": 1, "stopped": len(to_dead) - 1}
    assert all(status[f"k{i}"] == "answered" for i in range(20) if i not in to_dead)  # the other server answers


def test_a_server_failing_half_its_lines_is_never_given_up(tmp_path: Path) -> None:
    asker = LineAsker(["http://s0/v1"], str(tmp_path / "out"), per_actor=8, timeout=5, connect_timeout=1,
                      max_retries=0, key_env="NO_SUCH_KEY_VAR")
    asker.clients = [Script({f"q{i}": Retryable("http_503", "busy") for i in range(0, 300, 2)})]
    rows = asker({"text": [line(f"k{i}", f"q{i}") for i in range(300)]})
    asker.close()
    assert Counter(rows["status"]) == {"answered": 150, "error": 150}


def test_the_time_an_actor_waits_for_a_batch_is_not_time_without_an_answer(tmp_path: Path) -> None:
    asker = LineAsker(["http://s0/v1"], str(tmp_path / "out"), per_actor=1, timeout=5, connect_timeout=1,
                      max_retries=0, key_env="NO_SUCH_KEY_VAR", max_wait=60)
    asker.clients = [Script()]
    asker({"text": [line("k0", "q0")]})
    breaker = asker.breakers[0]
    answered = breaker.last_answer
    asker.idle_since = time.monotonic() - 100  # Ray had nothing to hand over for 100 s
    asker._resume_clocks()
    asker.close()
    assert breaker.last_answer >= answered + 99


def batches(rows: list[tuple[str, str, str]], then_fail: bool = False) -> Iterator[dict[str, Any]]:
    for status, cause, where in rows:
        yield {"status": [status], "cause": [cause], "endpoint": [where], "file": ["ray-1.jsonl" if where else ""]}
    if then_fail:
        raise AssertionError("read past the first stopped batch")


def test_the_driver_ends_the_job_at_the_first_stopped_line() -> None:
    run = RayRun(lines=10)
    seen: list[int] = []
    tally(run, batches([("answered", "", "http://u:pw@s0/v1"), ("error", "http_500", "http://u:pw@s0/v1"),
                        ("stopped", "no answer for 60 s (max-wait)", "http://u:pw@s0/v1")], then_fail=True),
          time.perf_counter(), progress=lambda r: seen.append(r.done))
    assert run.stopped == "http://s0/v1: no answer for 60 s (max-wait)"  # no credentials in what is printed
    assert run.answered == 1 and run.errors == 1 and run.not_answered == 8 and seen == [1, 2, 2]
    assert dict(run.by_endpoint) == {"http://s0/v1": 2} and run.as_dict()["not_answered"] == 8


@pytest.mark.parametrize("status", ["answered", "skipped"])
def test_a_job_without_stopped_lines_reads_every_batch(status: str) -> None:
    run = tally(RayRun(lines=3), batches([(status, "", "http://s0/v1")] * 3), time.perf_counter())
    assert run.stopped is None and run.not_answered == 0
