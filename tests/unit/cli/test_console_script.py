"""The console script itself (not CliRunner): every usage error is one line and exit 2, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = "import sys; from biasatlas.cli.entry import main; sys.argv[0] = 'biasatlas'; main()"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", SCRIPT, *args], capture_output=True, text=True, timeout=120,
                          env={"COLUMNS": "300", "PATH": "/usr/bin:/bin"})


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["run", "contact", "--concurrency", "0", "--plan-only", "--study", "{tmp}"], "--concurrency"),
        (["run", "contact", "--plan-only"], "--study"),
        (["run", "contact", "--http", "api_key=sk-secret-123", "--plan-only", "--study", "{tmp}"], "api_key"),
        (["run", "contact", "--limit", "-5", "--plan-only", "--study", "{tmp}"], "--limit"),
        (["run", "nosuchprobe"], "nosuchprobe"),
        (["summary", "--alpha", "2", "--study", "{tmp}"], "--alpha"),
    ],
)
def test_usage_error_is_one_line_exit_2(args: list[str], needle: str, tmp_path: Path) -> None:
    out = _cli(*[a.replace("{tmp}", str(tmp_path / "s")) for a in args])
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert out.returncode == 2, out.stderr
    assert len(lines) == 1 and needle in lines[0], out.stderr
    assert "Traceback" not in out.stderr and "sk-secret-123" not in out.stderr + out.stdout


def test_version() -> None:
    out = _cli("--version")
    assert out.returncode == 0 and out.stdout.strip().startswith("biasatlas ")


BAD = os.fsdecode(b"x\xff\xfe")  # bytes that are not UTF-8, as a shell passes them through


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["run", "contact", "--model", "fake:x", "--limit", "3", "--study", "{tmp}" + BAD], "--study"),
        (["run", "contact", "--model", "fake:" + BAD, "--limit", "3", "--study", "{tmp}"], "--model"),
        (["run", "contact", "--model", "fake:x", "--limit", "3", "--study={tmp}" + BAD], "--study"),
        (["summary", "--study", "{tmp}" + BAD], "--study"),
        (["export", "--study", "{tmp}", "--to", "{tmp}" + BAD], "--to"),
    ],
)
def test_arguments_that_are_not_utf8_are_one_line_exit_2_and_nothing_is_written(
    args: list[str], needle: str, tmp_path: Path
) -> None:
    out = _cli(*[a.replace("{tmp}", str(tmp_path / "s")) for a in args])
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert out.returncode == 2, out.stderr
    assert len(lines) == 1 and needle in lines[0] and "UTF-8" in lines[0], out.stderr
    assert "\\xff" in lines[0]  # the bytes shown, escaped
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", [["leakage", "fit"], ["associations"], ["summary"]])
def test_every_command_on_a_damaged_study_is_one_line_exit_2(command: list[str], tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from biasatlas.cli.main import app

    study = tmp_path / "s"
    run = ["run", "contact", "--model", "fake:x", "--lang", "en", "--axis", "ability", "--limit", "3"]
    assert CliRunner().invoke(app, [*run, "--study", str(study)]).exit_code == 0
    db = study / "biasatlas.db"
    data = bytearray(db.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    data[page:] = bytes((i * 37 + 11) % 251 for i in range(len(data) - page))  # damaged pages, not cut short
    db.write_bytes(bytes(data))
    out = _cli(*command, "--study", str(study))
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert out.returncode == 2, out.stderr
    assert len(lines) == 1 and "damaged" in lines[0] and "Traceback" not in out.stderr, out.stderr
