"""The run's last lines name the group-disparity headline of each axis (here a fake model: no group differs)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from biasatlas.cli.main import app

runner = CliRunner()


def test_a_contact_run_ends_with_the_group_disparity_headline(tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", "contact", "--model", "fake", "--lang", "de", "--axis", "religion",
                                 "--study", str(tmp_path)])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    last = [line for line in lines if line.startswith("group disparity ")]
    assert last and lines[-len(last):] == last  # the last lines
    assert "religion" in last[0] and ("most disfavoured: " in last[0] or "no religion group differs: " in last[0])

