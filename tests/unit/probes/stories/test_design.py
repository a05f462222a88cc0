"""``run stories --design paper``: the paper's ten languages, one story a prompt and three extractors voting;
a value given otherwise is one usage line; the plan gives the paper's counts beside ours."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from biasatlas.cli.main import app
from biasatlas.probes import load_probe
from biasatlas.probes.base import ProbeConfigError
from biasatlas.probes.stories import design

THREE = ["fake:x1", "fake:x2", "fake:x3"]


def test_the_paper_design_sets_ten_languages_one_story_and_three_voting_extractors() -> None:
    values, said = design.apply({"extractors": THREE})
    assert sorted(values["languages"]) == sorted(["en", "fr", "es", "it", "pt", "nl", "uk", "ar", "hi", "zh"])
    assert values["samples"] == 1 and values["extractors"] == THREE
    text = "; ".join(said)
    assert "Le Jeune et al." in text and "majority" in text and "fake:x2" in text
    assert "not stated" in text  # what cannot be matched is said


@pytest.mark.parametrize("values, option", [
    ({"extractors": THREE, "languages": ["en"]}, "--lang"),
    ({"extractors": THREE, "samples": 2}, "--samples"),
    ({"extractors": ["fake:x1"]}, "--extractor"),
    ({}, "--extractor"),  # the generator alone: no vote
    ({"extractors": THREE, "extract": False}, "--no-extract"),
])
def test_a_value_the_paper_fixed_otherwise_is_refused(values: dict, option: str) -> None:
    with pytest.raises(ProbeConfigError, match=option):
        design.apply(values)


def test_the_plan_gives_the_papers_counts_beside_ours() -> None:
    probe = load_probe("stories")
    config = probe.config(design="paper", extractors=THREE, limit=40)
    prompts = probe.plan(config)
    plan = probe.plan_summary(prompts, config)
    block = plan["design"]
    assert block["prompts_per_language"]["ours"] == 2844 and block["prompts_per_language"]["paper"] == "~2,800"
    assert block["design_prompts"] == 28440 and block["asked_prompts"] == len(prompts) == 40
    assert sorted(plan["languages"]) == sorted(design.PAPER_LANGUAGES)
    assert "note" not in plan  # nothing left that differs from the paper's defaults


def test_cli_prints_what_the_design_sets_and_refuses_a_conflict(tmp_path: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(app, ["run", "stories", "--design", "paper", "--model", "fake:g", "--extractor",
                             ",".join(THREE), "--plan-only", "--study", str(tmp_path / "s")])
    assert ok.exit_code == 0, ok.output
    assert "design paper sets" in ok.output and '"design"' in ok.output
    bad = runner.invoke(app, ["run", "stories", "--design", "paper", "--model", "fake:g", "--plan-only",
                              "--study", str(tmp_path / "t")])
    assert bad.exit_code == 2 and "--extractor" in bad.output
