"""An audit file's ``title`` is the report's page title and heading; a study without one keeps the default."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from biasatlas.cli.main import app

runner = CliRunner()
TITLE = "Religion bias in German: SmolLM2 & friends"


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("titled")
    audit = root / "audit.yaml"
    audit.write_text(yaml.safe_dump({
        "title": TITLE,
        "models": [{"name": "Alpha", "model": "fake:a"}],
        "probes": {"contact": {"languages": ["de"], "axes": ["religion"], "limit": 6}},
    }), encoding="utf-8")
    result = runner.invoke(app, ["audit", str(audit), "--study", str(root / "study")])
    assert result.exit_code == 0, result.output
    return (root / "study" / "report.html").read_text(encoding="utf-8")


def test_the_audit_title_is_the_page_title(page: str) -> None:
    assert "<title>Religion bias in German: SmolLM2 &amp; friends</title>" in page


def test_the_audit_title_is_the_heading(page: str) -> None:
    assert "<h1>Religion bias in German: SmolLM2 &amp; friends</h1>" in page


def test_a_study_without_a_title_keeps_the_default(tmp_path: Path) -> None:
    study = tmp_path / "study"
    result = runner.invoke(app, ["run", "contact", "--study", str(study), "--model", "fake:a", "--lang", "de",
                                 "--axis", "religion", "--limit", "3", "--no-progress"])
    assert result.exit_code == 0, result.output
    assert runner.invoke(app, ["report", "--study", str(study)]).exit_code == 0
    page = (study / "report.html").read_text(encoding="utf-8")
    assert "<title>biasatlas report · study</title>" in page and "<h1>biasatlas report</h1>" in page
