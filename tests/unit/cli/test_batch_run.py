"""`biasatlas batch run`: every way it ends is one line and a documented exit code, never a traceback: an
unreachable or Ray-Client address, an answers folder that cannot be made, an interrupt (130, the resume
command), a server given up (4), unreadable input lines (named, 1). Ray itself is not started here."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from biasatlas.batch import ray_engine
from biasatlas.batch.ray_engine import RayInterrupted, RayRun
from biasatlas.cli.main import app

pytest.importorskip("ray", reason="the [ray] extra")
runner = CliRunner()
LINE = json.dumps({"custom_id": "k1", "method": "POST", "url": "/v1/chat/completions",
                   "body": {"model": "m", "messages": [{"role": "user", "content": "q"}]}})


def batch_in(tmp_path: Path, text: bytes | None = None) -> Path:
    path = tmp_path / "in.jsonl"
    path.write_bytes((LINE + "\n").encode() if text is None else text)
    return path


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run(*args: str) -> tuple[int, list[str]]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "argv", ["biasatlas", "batch", "run", *args])  # what the resume command repeats
        result = runner.invoke(app, ["batch", "run", *args])
    assert "Traceback" not in result.output
    return result.exit_code, [" ".join(x.split()) for x in result.output.splitlines() if x.strip()]


def test_help_names_the_extra() -> None:
    result = runner.invoke(app, ["batch", "run", "--help"], env={"COLUMNS": "200"})
    assert "Needs the [ray] extra." in " ".join(result.output.split())


@pytest.mark.parametrize("scheme", ["", "ray://"])
def test_an_address_nobody_listens_on_is_one_line(tmp_path: Path, scheme: str) -> None:
    address = f"{scheme}127.0.0.1:{closed_port()}"
    code, lines = run("--in", str(batch_in(tmp_path)), "--out", str(tmp_path / "out"),
                      "--base-url", "http://127.0.0.1:9/v1", "--address", address)
    assert code == 2 and len(lines) == 1, lines
    # without Ray Client's extra the line says what to install; with it, that nothing listens there
    assert "pip install 'ray[client]'" in lines[0] or f"cannot reach the Ray cluster at {address}" in lines[0]
    assert not (tmp_path / "out").exists()


def test_an_answers_folder_that_cannot_be_made_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    code, lines = run("--in", str(batch_in(tmp_path)), "--out", str(tmp_path / "afile" / "out"),
                      "--base-url", "http://127.0.0.1:9/v1")
    assert code == 2 and len(lines) == 1 and "cannot read the batch input or write the answers" in lines[0]


def test_an_interrupt_says_what_is_kept_and_how_to_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*args: object, **kwargs: object) -> RayRun:
        raise RayInterrupted(RayRun(lines=10, answered=3, skipped=2))

    monkeypatch.setattr(ray_engine, "run_ray", interrupted)
    code, lines = run("--in", str(batch_in(tmp_path)), "--out", str(tmp_path / "out"),
                      "--base-url", "http://127.0.0.1:9/v1")
    assert code == 130 and len(lines) == 1, lines
    assert lines[0].startswith("interrupted: 3 lines answered in this job, 5 in all, kept in ")
    assert "Resume: biasatlas batch run --in" in lines[0]


def test_a_server_given_up_exits_4_with_the_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stopped = RayRun(lines=50_000, answered=10, errors=2, stopped="http://s0/v1: no answer for 60 s (max-wait)")
    monkeypatch.setattr(ray_engine, "run_ray", lambda *a, **k: stopped)
    code, lines = run("--in", str(batch_in(tmp_path)), "--out", str(tmp_path / "out"),
                      "--base-url", "http://s0/v1")
    assert code == 4
    assert any(x.startswith("stopped: http://s0/v1: no answer for 60 s (max-wait); 49988 lines not answered")
               and "Resume: biasatlas batch run" in x for x in lines), lines


def test_unreadable_lines_are_named_and_the_exit_is_1(tmp_path: Path) -> None:
    text = b"\xff\xfe not utf-8\n" + b"[" * 100_000 + b"]" * 100_000 + b"\n"
    code, lines = run("--in", str(batch_in(tmp_path, text)), "--out", str(tmp_path / "out"),
                      "--base-url", "http://127.0.0.1:9/v1")  # nothing left to ask: no Ray starts
    assert code == 1
    assert lines[0].endswith("in.jsonl:1: not UTF-8") and lines[1].endswith("JSON nested too deeply)")
    assert "2 unreadable" in lines[2]


def test_a_bad_base_url_is_one_line_before_anything_is_written(tmp_path: Path) -> None:
    code, lines = run("--in", str(batch_in(tmp_path)), "--out", str(tmp_path / "out"), "--base-url", "ftp://x")
    assert code == 2 and len(lines) == 1 and "not a URL" in lines[0]
    assert not (tmp_path / "out").exists()
