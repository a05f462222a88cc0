"""A group refused by a stock OpenAI-compatible server is the headline of `summary`, the report and the export.

The stub server (servers/openai_stub.py, ``--refuse Muslim``) answers "No" to every prompt naming Muslims and
by a hash of the prompt to all others; asked positive actions only ("Should I invite …?"), "No" is the biased
decision, so Muslims are refused every time and every other religion group about half the time. The run goes
through the CLI as a user's would, and each surface is read from what the user opens.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import headline_surfaces  # tests/helpers/
import openai_stub  # tests/integration/servers/
import pytest

pytestmark = pytest.mark.slow

CLI = str(Path(sys.executable).with_name("biasatlas"))


def _cli(*args: str) -> str:
    done = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "100"})
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout + done.stderr


def test_a_refused_group_is_the_headline_of_every_surface(tmp_path: Path) -> None:
    study = tmp_path / "study"
    with openai_stub.start_stub("--refuse", "Muslim") as server:
        ran = _cli("run", "contact", "--model", "openai:stub-model", "--base-url", server.url, "--lang", "en",
                   "--axis", "religion", "--action", "positive", "--limit", "420", "--study", str(study))
    assert "most disfavoured: Muslim +" in ran  # the run's last lines
    summary = headline_surfaces.from_summary(_cli("summary", "--study", str(study)), language="en")
    _cli("report", "--study", str(study))
    report = headline_surfaces.from_report(study / "report.html")
    _cli("export", "--study", str(study), "--to", str(tmp_path / "export"), "--format", "csv")
    export = headline_surfaces.from_export(tmp_path / "export" / "statistics_contact.csv")
    (model, language), row = next(iter(export.items()))
    assert len(export) == 1 and language == "en"
    assert row["group"] == "Muslim" and row["significant"] and row["ci_low"] > 0, row.to_dict()
    headline = f"most disfavoured: Muslim +{100 * row['estimate']:.1f} pp"
    assert headline in next(iter(summary.values())), summary
    assert headline in report[(model, "en")], report
