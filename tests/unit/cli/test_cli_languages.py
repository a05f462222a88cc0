"""`biasatlas languages` (the coverage matrix) and `biasatlas languages check DIR`."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from biasatlas.cli.main import app
from biasatlas.languages import ATLAS_LANGUAGES

runner = CliRunner()


def test_matrix_lists_every_atlas_language_for_contact_and_samaritan() -> None:
    result = runner.invoke(app, ["languages", "--json"])
    assert result.exit_code == 0, result.output
    rows = {r["language"]: r for r in json.loads(result.output)}
    for code in ATLAS_LANGUAGES:
        assert rows[code]["contact"] and rows[code]["samaritan"], code
    assert rows["fr"]["status"].startswith("machine-drafted, not reviewed by a native speaker")
    assert not rows["ru"]["contact"] and rows["ru"]["leakage"]
    table = runner.invoke(app, ["languages"])
    assert table.exit_code == 0 and "samaritan" in table.output


def test_check_reports_a_broken_pack_and_exits_1(tmp_path: Path) -> None:
    result = runner.invoke(app, ["languages", "check", str(tmp_path)])
    assert result.exit_code == 1
    flat = " ".join(result.output.split())
    assert "NOT valid" in flat and "no pack.yaml" in flat
