"""SIGINT and SIGTERM at random moments of a real run (setup, model load, planning, asking, writing):
one line, exit 130, the resume command, and nothing lost.

The console script runs against the OpenAI stub (tests/integration/servers/openai_stub.py, in a process
of its own). Each signal goes to a fresh process: half of them at a random moment of its first 2 s,
counted from the moment biasatlas's own first line has run (its SIGTERM handler is installed: the
interpreter's own start, before that, is not biasatlas's to handle), which on this 2-core machine is the
setup, imports, planning and the backend's start; the other half at a random moment of the first second
after the stub saw its first request (asking and writing). All runs write one study, each with its own
``--seed`` (other prompts), so later runs do not find everything answered.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import openai_stub as stub_mod  # tests/integration/servers/, on pytest's pythonpath (pyproject.toml)
import pytest

pytestmark = pytest.mark.slow

BIASATLAS = str(Path(sys.executable).parent / "biasatlas")
#: (signal, when): "start" counts from the handler's installation, "asking" from the run's first request.
SIGNALS = [(sig, when) for sig in (signal.SIGINT, signal.SIGTERM) for when in ("start", "asking")] * 5
CONCURRENCY = 4
#: one prompt set per group of the English plan: a balanced draw, so the run prints no balance warning and
#: its one stderr line is the interrupt (1,857 prompts: ~9 s at the stub's pace, every signal lands mid-run)
BALANCED_LIMIT = 1857
NOISE = ("Traceback", "Task exception", "Fatal error", "never retrieved", "Exception ignored", "RuntimeError")


def _handler_installed(pid: int) -> bool:
    """Whether the process catches SIGTERM yet (its ``SigCgt`` mask in /proc)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True  # gone: the signal is sent anyway (and the test then sees it ended too early)
    mask = next((line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:")), "0")
    return bool(int(mask, 16) >> (signal.SIGTERM - 1) & 1)


def _signal_at_random(
    args: list[str], sig: int, delay: float, first_request: Callable[[], bool] | None
) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run the CLI, send ``sig`` ``delay`` seconds after its handler is installed (or, with
    ``first_request``, after that says the run has asked), and wait for it to end."""
    proc = subprocess.Popen([BIASATLAS, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "COLUMNS": "400"})
    started = time.monotonic()
    while not _handler_installed(proc.pid) and time.monotonic() - started < 10:
        time.sleep(0.0005)
    while first_request is not None and not first_request() and time.monotonic() - started < 30:
        time.sleep(0.01)
    time.sleep(delay)
    assert proc.poll() is None, f"the run ended before the signal: {proc.stderr.read() if proc.stderr else ''}"
    os.kill(proc.pid, sig)
    out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), time.monotonic() - started


def test_any_signal_at_any_moment_is_one_line_exit_130_with_the_resume_command(tmp_path: Path) -> None:
    rng = random.Random(os.environ.get("BIASATLAS_SIGNAL_SEED", "24"))
    signals = SIGNALS[:]
    rng.shuffle(signals)
    study = tmp_path / "study"
    db = study / "biasatlas.db"
    with stub_mod.start_stub("--delay", "0.02") as stub:
        asked = [0]

        def first_request() -> bool:  # the stub has seen a request since the last check
            now = int(stub.stats()["requests"])
            new, asked[0] = now > asked[0], now
            return new

        for index, (sig, when) in enumerate(signals):
            first_request()
            args = ["run", "contact", "--model", "openai:stub-model", "--base-url", stub.url, "--study", str(study),
                    "--concurrency", str(CONCURRENCY), "--limit", str(BALANCED_LIMIT), "--seed", str(index)]
            delay = rng.uniform(0, 2.0) if when == "start" else rng.uniform(0, 1.0)
            done, seconds = _signal_at_random(args, sig, delay, first_request if when == "asking" else None)
            where = f"{signal.Signals(sig).name} {delay:.3f} s after {when} (run {index}): {done.stderr!r}"
            lines = [line for line in done.stderr.splitlines() if line.strip()]
            assert done.returncode == 130, where
            assert len(lines) == 1 and lines[0].startswith("interrupted"), where
            assert f"Resume: biasatlas run contact --model openai:stub-model --base-url {stub.url}" in lines[0], where
            assert not any(word in done.stderr + done.stdout for word in NOISE), where
            assert seconds < 15, where
        stats = stub.stats()
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        stored = conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
        runs = conn.execute("SELECT status, finished_at, totals_json FROM runs").fetchall()
    # Every run that got as far as its run record ended it as interrupted, with its totals.
    assert runs and all(status == "interrupted" and finished for status, finished, _ in runs), runs
    assert sum(json.loads(t)["new"] for _, _, t in runs) >= stored  # (a key planned twice counts twice)
    assert sum(json.loads(t)["new"] > 0 for _, _, t in runs) >= len(signals) // 2  # the asking half did ask
    # Nothing lost: every answer the stub sent was stored, but those in flight at the signal (at most
    # the workers and their buffer per run).
    sent = sum(stats["answered"].values())
    assert stored <= sent <= stored + len(signals) * 2 * CONCURRENCY, (stored, sent)
