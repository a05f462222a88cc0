"""A rerun with another decoding is its own set of answers in summary, report and export, with its own run."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from biasatlas.cli.main import app

runner = CliRunner()
RUN = ["run", "contact", "--model", "fake:a", "--lang", "en", "--axis", "religion", "--limit", "3",
       "--mode", "generate", "--no-progress"]
GREEDY = "fake:a [greedy, max_tokens 10]"
SAMPLED = "fake:a [temperature 0.7, top_p 1, seed 0, max_tokens 10]"


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    study = tmp_path_factory.mktemp("decodings") / "study"
    for extra in ([], ["--temperature", "0.7"]):
        result = runner.invoke(app, [*RUN, "--study", str(study), *extra])
        assert result.exit_code == 0, result.output
    return study


def test_summary_shows_both_decodings(study: Path) -> None:
    result = runner.invoke(app, ["summary", "--study", str(study), "--json"])
    assert result.exit_code == 0, result.output
    contact = json.loads(result.output)["contact"]
    assert contact["items"] == {"answered": 6}
    assert {row["model"] for row in contact["by_contact"]} == {GREEDY, SAMPLED}


def test_the_export_keeps_each_answer_with_its_decoding_and_run(study: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["export", "--study", str(study), "--to", str(tmp_path / "x"), "--format", "csv"])
    assert result.exit_code == 0, result.output
    answers = pd.read_csv(tmp_path / "x" / "answers_contact.csv")
    counts = answers.groupby(["model", "decoding", "run_id"]).size().to_dict()
    assert counts == {(GREEDY, "greedy, max_tokens 10", 1): 3,
                      (SAMPLED, "temperature 0.7, top_p 1, seed 0, max_tokens 10", 2): 3}
    assert set(answers["model_id"]) == {"fake:a"}
    statistics = pd.read_csv(tmp_path / "x" / "statistics_contact.csv")
    assert set(statistics["model"]) == {GREEDY, SAMPLED}


def test_the_report_shows_both_decodings(study: Path) -> None:
    result = runner.invoke(app, ["report", "--study", str(study)])
    assert result.exit_code == 0, result.output
    page = (study / "report.html").read_text(encoding="utf-8")
    assert "fake:a [greedy, max_tokens 10]" in page and "temperature 0.7, top_p 1, seed 0" in page


def test_readers_sample_draws_from_both_decodings(study: Path, tmp_path: Path) -> None:
    out = tmp_path / "labels.csv"
    result = runner.invoke(app, ["readers", "sample", "--study", str(study), "--n", "50", "--out", str(out)])
    assert result.exit_code == 0, result.output
    sample = pd.read_csv(out)
    assert len(sample) == 6 and sample["answer_key"].nunique() == 6  # both decodings' answers, each once
