"""The story probe end to end on the embedded model, as generator and extractor, through the CLI."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from biasatlas.cli.main import app
from biasatlas.store import Store

pytestmark = pytest.mark.slow


def test_stories_end_to_end_on_smollm2(tmp_path):
    study = tmp_path / "study"
    runner = CliRunner()
    args = ["run", "stories", "--model", "smollm2", "--lang", "en", "--limit", "2", "--max-tokens", "40",
            "--extract-max-tokens", "64", "--study", str(study)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    with Store(study) as store:
        stories = store.frame(probe="stories")
        extractions = store.frame(probe="stories-extract")
    assert len(stories) == 2 and (stories["status"] == "answered").all()
    assert stories["text"].str.len().min() > 0
    assert set(extractions["story_prompt_id"]) <= set(stories["prompt_id"])

    result = runner.invoke(app, ["associations", "--study", str(study), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    answers = data["counts"]["extraction"]["answers"]
    # the tiny model's JSON is poor: every answer is accounted for, none silently dropped
    assert sum(answers.values()) == len(extractions)
    # a story is a profile when at least one extraction could be read; else it is counted apart
    stories_counts = data["counts"]["stories"]
    assert data["counts"]["profiles"] + stories_counts["all_extractions_rejected"] == 2
    if not data["global"]["associations"]:
        assert data["global"]["empty_reason"]

    summary = runner.invoke(app, ["summary", "--study", str(study), "--json"])
    assert summary.exit_code == 0, summary.output
    assert json.loads(summary.stdout)["stories"]["counts"]["stories"]["answered"] == 2
    report = runner.invoke(app, ["report", "--study", str(study)])
    assert report.exit_code == 0, report.output
    assert "Open-ended stories" in (study / "report.html").read_text(encoding="utf-8")
