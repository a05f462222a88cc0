"""A model whose server cannot be reached (connection refused) is a stopped run for that model: its cells are
skipped with the reason, the later models are asked, the report is written, exit 4 (as for an always-500 model)."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import openai_stub as stub_mod  # tests/integration/servers/, on pytest's pythonpath (pyproject.toml)
import yaml
from typer.testing import CliRunner

from biasatlas.cli.main import app
from biasatlas.store import Store

runner = CliRunner()
PROBES = {"contact": {"languages": ["en"], "axes": ["religion"], "limit": 3},
          "samaritan": {"languages": ["en"], "limit": 2}}


def dead_port() -> int:
    """A port nothing listens on: bound, then closed."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_dead_server_stops_its_model_and_the_audit_goes_on(tmp_path: Path) -> None:
    study = tmp_path / "study"
    with stub_mod.start_stub_thread() as live:
        models = [{"name": "Alive", "model": "openai:stub-model", "base_url": live.url},
                  {"name": "Dead", "model": "openai:stub-model", "base_url": f"http://127.0.0.1:{dead_port()}/v1"},
                  {"name": "Later", "model": "fake:later"}]
        audit = tmp_path / "audit.yaml"
        audit.write_text(yaml.safe_dump({"models": models, "probes": PROBES}), encoding="utf-8")
        started = time.monotonic()
        result = runner.invoke(app, ["audit", str(audit), "--study", str(study), "--no-progress"])
        seconds = time.monotonic() - started
    assert result.exit_code == 4, result.output
    assert seconds < 60
    text = " ".join(result.output.split())
    assert "Traceback" not in result.output
    assert "skipped Dead · samaritan · en: its model stopped earlier" in text
    assert "report written" in text and (study / "report.html").is_file()
    with Store(study, readonly=True) as store:
        runs = store.runs()
        later = runs[runs["backend_id"] == "fake:later"]
        assert list(later["status"]) == ["complete", "complete"]  # the model after the dead one was asked, both cells
        assert not runs["config_json"].str.contains('"display_name": "Dead"').any()  # nothing began for it
        assert store.response_count() == int(runs["totals_json"].map(lambda t: json.loads(t)["new"]).sum())
    assert "stopped Dead: no server at" in text and "skipped Dead · contact · en" in text
    rerun = runner.invoke(app, ["audit", str(audit), "--study", str(study), "--no-progress"])
    assert rerun.exit_code == 4 and "report written" in rerun.output  # the rerun gets as far, no further
