"""The OpenAI-compatible backend end to end: faults, SIGKILL, key hygiene, and a real llama.cpp server.

Servers run as subprocesses on 127.0.0.1: the misbehaving stub (servers/openai_stub.py) and
llama.cpp's OpenAI-compatible server (``llama-cpp-python[server]``, the ``server`` extra) serving
the embedded SmolLM2 weights: the session's shared servers (tests/integration/conftest.py).
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import openai_stub as stub_mod  # tests/integration/servers/, on pytest's pythonpath (pyproject.toml)
import pytest

from biasatlas.backends.openai_compat import OpenAIBackend, OpenAIOptions
from biasatlas.probes.contact import probe as contact
from biasatlas.records import GenerationSettings
from biasatlas.runner import run_plan
from biasatlas.store import DB_NAME, Store

pytestmark = pytest.mark.slow

BIASATLAS = str(Path(sys.executable).parent / "biasatlas")
FAKE_KEY = "sk-biasatlas-canary-3b9e41d07c5a"


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [BIASATLAS, *args], capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})}
    )


def without_run_details(summary: dict[str, Any]) -> dict[str, Any]:
    """A contact summary minus the run record (ids, timings, retry counts differ by design), with the
    stub's port taken out of the model id (each stub listens on its own port, so the ids differ)."""
    kept = {k: v for k, v in summary.items() if k != "last_run"}
    return json.loads(re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", json.dumps(kept, sort_keys=True, default=str)))


# ---- faults: nothing lost --------------------------------------------------------------------
def test_faulty_server_gives_the_summary_of_a_healthy_one(tmp_path: Path) -> None:
    prompts = contact.build_prompts(contact.ContactConfig(limit=2001))  # 2,001 prompts (whole sets of 3)
    assert len(prompts) == 2001
    opts = {"concurrency": 64, "timeout": 2.0, "backoff_initial": 0.02, "max_retries": 10}
    summaries, totals = {}, {}
    for name, flags in (("healthy", ()), ("faulty", ("--faults", "0.25", "--slow-delay", "4", "--seed", "3"))):
        with stub_mod.start_stub(*flags) as stub:
            backend = OpenAIBackend("stub-model", OpenAIOptions(base_url=stub.url, **opts))
            with Store(tmp_path / name) as store:
                totals[name] = run_plan(prompts, backend, store, GenerationSettings(mode="choice"), progress=False)
                summaries[name] = contact.summarise(store)
                keys = {r[0] for r in store.conn.execute("SELECT DISTINCT key FROM run_items")}
                stored = [r[0] for r in store.conn.execute("SELECT key FROM responses")]
                errors = store.error_count()
            backend.close()
            served = stub.stats()
        # Every distinct question has exactly one stored answer (and was answered by the server).
        assert sorted(stored) == sorted(keys) and errors == 0
        assert len(served["answered"]) == len(keys)
        if name == "faulty":
            injected = served["faults"]
        else:
            assert served["faults"] == {}
    assert totals["faulty"].failed == 0 and totals["faulty"].new == 2001
    assert without_run_details(summaries["faulty"]) == without_run_details(summaries["healthy"])
    # The failure counts are reported in the run record, and so in the summary.
    names = {
        "429": "http_429",
        "500": "http_500",
        "503": "http_503",
        "slow": "timeout",
        "drop": "connection",
        "malformed": "malformed_json",
        "empty": "empty_choices",
    }
    reported = summaries["faulty"]["last_run"]["info"]["http"]["retries"]
    assert reported == {names[k]: v for k, v in injected.items()}
    assert set(reported) == set(names.values())  # every kind of fault happened and was retried


# ---- SIGKILL mid-run --------------------------------------------------------------------------
def _count_responses(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
    except sqlite3.OperationalError:  # not created yet
        return 0


def _digests(db: Path) -> dict[str, str]:
    """Stored key -> the stub's digest of the messages that were sent for it."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT key, request_json FROM responses").fetchall()
    return {k: stub_mod.prompt_digest(json.loads(r)["messages"]) for k, r in rows}


def test_sigkill_mid_run_then_resume(tmp_path: Path) -> None:
    study = tmp_path / "study"
    db = study / DB_NAME
    with stub_mod.start_stub("--delay", "0.05") as stub:
        args = [
            "run",
            "contact",
            "--study",
            str(study),
            "--model",
            "openai:stub-model",
            "--base-url",
            stub.url,
            "--concurrency",
            "8",
            "--limit",
            "600",
        ]
        proc = subprocess.Popen([BIASATLAS, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while _count_responses(db) < 150 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        with sqlite3.connect(db) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        before = _digests(db)
        asked_before = stub.stats()["asked"]
        assert 150 <= len(before) < 600

        done = cli(*args)
        assert done.returncode == 0, done.stderr
        asked_after = stub.stats()["asked"]
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        keys = {r[0] for r in conn.execute("SELECT DISTINCT key FROM run_items")}
        n_responses = conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
        statuses = [r[0] for r in conn.execute("SELECT status FROM runs ORDER BY run_id")]
        last_totals = json.loads(conn.execute("SELECT totals_json FROM runs ORDER BY run_id DESC").fetchone()[0])
    assert statuses == ["running", "complete"]  # the killed run never got to record an ending
    assert n_responses == len(keys)  # complete: one answer per distinct question
    assert last_totals["cached"] == len(before) and last_totals["failed"] == 0
    # Nothing committed before the kill was asked again...
    assert all(asked_after[d] == asked_before[d] for d in before.values())
    # ...and only the requests in flight at the kill (at most the workers plus their buffer) were asked twice.
    twice = [d for d, n in asked_after.items() if n > 1]
    assert len(twice) <= 16
    assert all(n <= 2 for n in asked_after.values())


# ---- the key never reaches the study directory --------------------------------------------------
def test_fake_key_leaves_no_trace(tmp_path: Path) -> None:
    study = tmp_path / "study"
    env = {"BIASATLAS_CANARY_KEY": FAKE_KEY}
    with stub_mod.start_stub("--key", FAKE_KEY) as stub:
        run = cli(
            "run",
            "contact",
            "--study",
            str(study),
            "--model",
            "openai:stub-model",
            "--base-url",
            stub.url,
            "--api-key-env",
            "BIASATLAS_CANARY_KEY",
            "--limit",
            "20",
            env=env,
        )
        assert run.returncode == 0, run.stderr
        # A wrong key too: the stub echoes it in its 401s, which must not reach the store either.
        wrong = cli(
            "run",
            "contact",
            "--study",
            str(study),
            "--model",
            "openai:stub-model",
            "--base-url",
            stub.url,
            "--api-key-env",
            "BIASATLAS_CANARY_KEY",
            "--limit",
            "21",
            "--mode",
            "generate",
            env={"BIASATLAS_CANARY_KEY": FAKE_KEY + "x"},
        )
    assert wrong.returncode == 2 and "rejected the API key" in wrong.stderr
    summary = cli("summary", "--study", str(study), "--json")
    report = cli("report", "--study", str(study))
    assert summary.returncode == 0 and report.returncode == 0, report.stderr
    assert (study / "report.html").exists()
    assert "http" in json.loads(summary.stdout)["contact"]["last_run"]["info"]
    files = [f for f in study.rglob("*") if f.is_file()]
    assert any(f.name.endswith("-wal") or f.name == DB_NAME for f in files)
    for f in files:
        assert FAKE_KEY.encode() not in f.read_bytes(), f
    for out in (run, wrong, summary, report):
        assert FAKE_KEY not in out.stdout + out.stderr


# ---- bad input: one clear line -----------------------------------------------------------------
def test_bad_input_is_one_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env["COLUMNS"] = "400"  # rich wraps at 80 columns off a terminal
    base = ["run", "contact", "--study", str(tmp_path / "s"), "--limit", "5"]
    with stub_mod.start_stub() as stub, stub_mod.start_stub("--personality", "html") as html:
        cases = {
            "no API key": ["--model", "openai:gpt-4o-mini"],
            "unknown model 'nope'": ["--model", "openai:nope", "--base-url", stub.url],
            "no server at": ["--model", "openai:m", "--base-url", f"http://127.0.0.1:{_free_port()}/v1"],
            "not an OpenAI-compatible endpoint": ["--model", "openai:m", "--base-url", html.url],
        }
        for expected, extra in cases.items():
            out = subprocess.run([BIASATLAS, *base, *extra], capture_output=True, text=True, env=env, timeout=120)
            assert out.returncode == 2, out.stderr
            lines = [line for line in out.stderr.splitlines() if line.strip()]
            assert len(lines) == 1 and expected in lines[0], out.stderr
            assert "Traceback" not in out.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ---- a real OpenAI-compatible server: llama.cpp serving the embedded SmolLM2 -------------------
# (the session's shared servers: tests/integration/conftest.py, llama_url)
@pytest.mark.parametrize("mode", ["choice", "generate"])
def test_contact_probe_through_llama_cpp(llama_url: str, tmp_path: Path, mode: str) -> None:
    study = tmp_path / mode
    out = cli(
        "run",
        "contact",
        "--study",
        str(study),
        "--model",
        "openai:smollm2",
        "--base-url",
        llama_url,
        "--concurrency",
        "2",
        "--limit",
        "12",
        "--mode",
        mode,
        "--max-tokens",
        "4",
    )
    assert out.returncode == 0, out.stderr
    assert "failed 0" in out.stderr
    with Store(study) as store:
        frame = store.frame("contact")
        run = store.last_run("contact")
    assert len(frame) == 12 and (frame["status"] == "answered").all()
    assert run is not None
    http = run["totals"]["info"]["http"]
    assert http["prompt_tokens"] > 0 and http["failures"] == {}
    if mode == "choice":
        # llama.cpp returns top_logprobs: real probabilities over Yes/No, no fallback
        assert "choice_fallback" not in run["totals"]["info"]
        for probs in frame["option_probs"]:
            assert set(probs) == {"Yes", "No"} and sum(probs.values()) == pytest.approx(1.0)
        assert frame["option_probs"].map(lambda p: 0.0 < p["Yes"] < 1.0).any()
    else:
        assert frame["text"].str.len().gt(0).all()
        assert (frame["completion_tokens"] > 0).all()
    summary = cli("summary", "--study", str(study), "--json")
    assert summary.returncode == 0, summary.stderr
    assert json.loads(summary.stdout)["contact"]["items"]
