"""The shared llama.cpp servers are watched: a server that dies is reported in one line (how it exited, after how
many answered requests, where its log is), and the tests after it fail at once with that reason."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = pytest.mark.slow


def test_a_server_killed_by_a_signal_is_named_in_one_line(tmp_path: Path, llama_servers: ModuleType) -> None:
    log = tmp_path / "llama-server-1.log"
    log.write_text('INFO:     127.0.0.1:1 - "GET /v1/models HTTP/1.1" 200 OK\n'
                   + 'INFO:     127.0.0.1:1 - "POST /v1/chat/completions HTTP/1.1" 200 OK\n' * 3)
    proc = subprocess.Popen([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"])
    proc.wait(timeout=30)
    fleet = llama_servers.Fleet(["http://127.0.0.1:1/v1"], [proc.pid], [proc], [log])
    assert fleet.dead() == (f"the llama.cpp server exited with signal {int(signal.SIGSEGV)} (SIGSEGV) after 3 "
                            f"answered requests: see its log at {log}")


def test_a_live_server_is_not_reported(llama_servers: ModuleType) -> None:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        fleet = llama_servers.Fleet(["http://127.0.0.1:1/v1"], [proc.pid], [proc], [Path("/nonexistent.log")])
        assert fleet.dead() is None
    finally:
        proc.kill()
        proc.wait()
