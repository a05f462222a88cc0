"""A fleet through the CLI into a study: 3 stub servers (their own processes), one killed mid-run.

Every prompt is answered exactly once (one stored answer per request, none failed, as many answers
counted by the fleet as requests), the run record has each server's counts, and a rerun with one
more server asks nothing (a fleet's id names the fleet, not its hosts).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

from biasatlas.store import Store

BIASATLAS = str(Path(sys.executable).parent / "biasatlas")
LIMIT = 600


def run(study: Path, urls: list[str], *extra: str) -> subprocess.Popen[str]:
    args = [BIASATLAS, "run", "contact", "--study", str(study), "--model", "openai:stub-model", "--fleet", "stubs",
            "--concurrency", "4", "--limit", str(LIMIT), "--mode", "generate", "--structured", "off",
            "--http", "fleet-failures=2", "--http", "backoff-initial=0.05", "--no-progress", *extra]
    for url in urls:
        args += ["--base-url", url]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_fleet_one_server_killed_mid_run_every_prompt_answered_once(tmp_path: Path, openai_stub: ModuleType) -> None:
    stub = openai_stub
    study = tmp_path / "study"
    servers = [stub.start_stub("--delay", "0.03") for _ in range(3)]
    victim = servers[1]
    try:
        started = time.perf_counter()
        process = run(study, [s.url for s in servers])
        while victim.stats()["requests"] < 40 and process.poll() is None:  # its share is under way
            time.sleep(0.02)
        assert process.poll() is None, "the run ended before the kill: raise LIMIT"
        victim.process.kill()  # SIGKILL: connections drop, later ones are refused
        victim.process.wait()
        _, err = process.communicate(timeout=300)
        seconds = time.perf_counter() - started
        assert process.returncode == 0, err
        with Store(study) as store:
            record = store.last_run("contact")
            answers, errors = store.response_count(), store.error_count()
        assert record is not None and record["status"] == "complete"
        totals, config = record["totals"], record["config"]
        fleet = totals["info"]["fleet"]
        rows = {row["url"]: row for row in fleet["endpoints"]}
        print(f"\n{LIMIT} prompts, {answers} requests in {seconds:.1f} s; " + json.dumps(fleet["endpoints"]))
        # exactly once: one answer per request, none failed, and the fleet counted one answer per request
        assert errors == 0 and totals["failed"] == 0 and totals["pending"] == 0
        assert answers == totals["info"]["http"]["requests"] == totals["info"]["http"]["answered"]
        assert sum(row["answered"] for row in rows.values()) == answers
        assert rows[victim.url]["drained"] >= 1 and not rows[victim.url]["live"]
        assert 40 - 4 <= rows[victim.url]["answered"] < answers // 2  # 40 asked, at most 4 of them in flight
        assert all(rows[s.url]["answered"] > rows[victim.url]["answered"] for s in servers if s is not victim)
        for server in servers:
            if server is not victim:  # the survivors answered each prompt they were sent once
                assert set(server.stats()["answered"].values()) == {1}
        assert config["backend"]["fleet"] == "stubs"
        assert [e["url"] for e in config["backend"]["endpoints"]] == [s.url for s in servers]
        assert record["backend_id"] == "openai:stub-model@fleet:stubs"

        # one more server, the dead one left out: the same model, nothing asked
        extra = stub.start_stub("--delay", "0.03")
        servers.append(extra)
        again = run(study, [servers[0].url, servers[2].url, extra.url])
        _, err = again.communicate(timeout=120)
        assert again.returncode == 0, err
        with Store(study) as store:
            rerun = store.last_run("contact")
        assert rerun is not None and rerun["totals"]["cached"] == rerun["totals"]["planned"]
        assert rerun["totals"]["new"] == 0 and rerun["totals"]["info"]["http"]["requests"] == 0
        assert extra.stats()["requests"] == 0
    finally:
        for server in servers:
            if server.process is not None and server.process.poll() is None:
                server.stop()
