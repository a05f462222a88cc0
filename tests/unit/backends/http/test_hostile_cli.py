"""Hostile servers through the CLI: exit code, seconds to give up, and the one-line message.

Exit 4 ("stopped") says the reason and the command that resumes; setup problems are one line,
exit 2; Ctrl-C is exit 130 without an asyncio trace. Each case prints a row of the table of
issue 14 (``pytest -s``). The other hostile cases run on the backend alone (test_hostile.py): a CLI
start costs seconds.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from biasatlas.store import Store

BIASATLAS = str(Path(sys.executable).parent / "biasatlas")
FAKE_KEY = "sk-biasatlas-cli-hostile-51c0e9b7aa"
FAST = ["--http", "timeout=1", "--http", "deadline=4", "--http", "max-wait=1", "--http", "backoff-initial=0.05",
        "--http", "retry-after-max=0.5"]


def biasatlas(study: Path, url: str, *extra: str, env: dict[str, str] | None = None) -> tuple[int, float, str]:
    """Run ``biasatlas run contact`` (60 prompts): exit code, seconds, stderr."""
    args = [BIASATLAS, "run", "contact", "--study", str(study), "--model", "openai:stub-model", "--base-url", url,
            "--limit", "60", "--concurrency", "4", "--structured", "off", "--mode", "generate", *extra]
    started = time.perf_counter()
    out = subprocess.run(args, capture_output=True, text=True, timeout=120, env={**os.environ, **(env or {})})
    return out.returncode, time.perf_counter() - started, out.stderr


def last_line(stderr: str) -> str:
    return [line for line in stderr.splitlines() if line.strip()][-1]


@pytest.mark.parametrize(
    ("flags", "extra", "words"),
    [
        (("--chat-status", "401"), (), "the server rejects the credentials"),
        (("--chat-status", "429", "--retry-after", "3600"), (), "asks to wait 3600 s (Retry-After)"),
        (("--chat-body", "html"), (), "5 answers in a row were not OpenAI API answers"),
        (("--chat-body", "hang"), ("--http", "max-retries=100"), "no answer for 1 s (max-wait)"),
        (("--chat-status", "500"), ("--http", "max-retries=2"),
         "no answer for 1 s (max-wait) while requests kept failing (last: HTTP 500: stub status 500"),
    ],
)
def test_a_hostile_server_stops_the_run_with_exit_4(stub: Any, tmp_path: Path, flags: tuple[str, ...],
                                                    extra: tuple[str, ...], words: str) -> None:
    with stub.start_stub(*flags) as server:
        code, seconds, stderr = biasatlas(tmp_path / "study", server.url, *FAST, *extra,
                                          env={"OPENAI_API_KEY": FAKE_KEY})
    line = last_line(stderr)
    ran = re.search(r"pending \d+ in ([0-9.]+) s", stderr)  # the run itself, without the CLI's start-up
    print(f"\n| {' '.join(flags)} | {code} | {ran.group(1) if ran else '?'} of {seconds:.1f} | {line[:160]} |")
    assert code == 4, stderr
    assert line.startswith("stopped: ") and words in line and "Resume: biasatlas run contact" in line, stderr
    assert "Traceback" not in stderr and FAKE_KEY not in stderr
    with Store(tmp_path / "study") as store:  # nothing lost: every prompt is answered, failed or pending
        run = store.last_run("contact")
    assert run is not None and run["status"] == "stopped"


def test_a_redirect_loop_at_setup_is_one_line_exit_2(stub: Any, tmp_path: Path) -> None:
    with stub.start_stub("--redirect-loop") as server:
        code, seconds, stderr = biasatlas(tmp_path / "study", server.url)
    lines = [line for line in stderr.splitlines() if line.strip()]
    print(f"\n| 307 redirect loop | {code} | {seconds:.1f} | {lines[-1]} |")
    assert code == 2 and len(lines) == 1 and "redirects in a loop" in lines[0], stderr


def test_url_credentials_with_a_key_are_one_line_exit_2(tmp_path: Path) -> None:
    url = "http://user:hunter2secret@127.0.0.1:9/v1"
    code, seconds, stderr = biasatlas(tmp_path / "study", url, env={"OPENAI_API_KEY": FAKE_KEY})
    lines = [line for line in stderr.splitlines() if line.strip()]
    print(f"\n| credentials in the URL + API key | {code} | {seconds:.1f} | {lines[-1]} |")
    assert code == 2 and len(lines) == 1 and "give one or the other" in lines[0], stderr
    assert "hunter2secret" not in stderr and FAKE_KEY not in stderr


def test_an_api_key_setting_is_not_echoed(stub: Any, tmp_path: Path) -> None:
    code, seconds, stderr = biasatlas(tmp_path / "study", "http://127.0.0.1:9/v1", "--http", f"api_key={FAKE_KEY}")
    print(f"\n| --http api_key=... | {code} | {seconds:.1f} | {last_line(stderr)} |")
    # not 2 yet: cli/main.py catches click's UsageError, not typer's bundled one (reported to the lead)
    assert code != 0 and FAKE_KEY not in stderr and "--api-key-env" in stderr, stderr


def test_ctrl_c_mid_run_is_exit_130_without_an_asyncio_trace(stub: Any, tmp_path: Path) -> None:
    with stub.start_stub("--delay", "0.5") as server:
        args = [BIASATLAS, "run", "contact", "--study", str(tmp_path / "study"), "--model", "openai:stub-model",
                "--base-url", server.url, "--limit", "60", "--concurrency", "8", "--structured", "off",
                "--mode", "generate"]
        # As a terminal's Ctrl-C reaches a foreground command: a test run started in the background by a
        # non-interactive shell (CI) ignores SIGINT, and a child inherits that (the run then never stops).
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        deadline = time.monotonic() + 60
        while server.stats()["requests"] < 9 and time.monotonic() < deadline:  # under way: an answer, 8 out
            time.sleep(0.02)
        started = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
        seconds = time.perf_counter() - started
    print(f"\n| Ctrl-C mid-run | {proc.returncode} | {seconds:.1f} | {last_line(stderr)} |")
    assert proc.returncode == 130, stderr
    assert "never retrieved" not in stderr and "Traceback" not in stderr and "was destroyed" not in stderr, stderr
    assert last_line(stderr).startswith("interrupted: ")
