"""`biasatlas run stories`, `stories judge` and `associations`: shared options, aliases, bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from biasatlas.backends.fake import FakeBackend
from biasatlas.cli.main import app
from biasatlas.records import Request
from biasatlas.store import Store

runner = CliRunner()


def _plan(tmp_path: Path, *args: str) -> dict[str, Any]:
    result = runner.invoke(app, ["run", "stories", "--study", str(tmp_path / "s"), *args, "--plan-only"])
    assert result.exit_code == 0, result.output
    assert "None" not in result.stdout
    return json.loads(result.stdout)


def test_plan_only_takes_several_languages_and_a_prompt_limit(tmp_path: Path) -> None:
    plan = _plan(tmp_path, "--lang", "en,fr", "--lang", "es", "--limit", "30")
    assert plan["prompts"] == 30 and set(plan["languages"]) == {"en", "es", "fr"}
    assert plan["extractors"] == ["smollm2"]  # the generator by default
    assert plan["extraction_requests_at_most"] == 30


def test_samples_extractors_and_no_extract(tmp_path: Path) -> None:
    plan = _plan(tmp_path, "--limit", "4", "--samples", "3", "--extractor", "fake:a,fake:b", "--model", "fake:g")
    assert plan["requests"] == 12 and plan["extractors"] == ["fake:a", "fake:b"]
    assert plan["extraction_requests_at_most"] == 24
    assert _plan(tmp_path, "--limit", "4", "--no-extract")["extractors"] == []


def test_stories_per_prompt_is_a_deprecated_alias_of_samples(tmp_path: Path) -> None:
    plan = _plan(tmp_path, "--limit", "4", "--stories-per-prompt", "2")
    assert plan["samples_per_prompt"] == 2
    clash = runner.invoke(app, ["run", "stories", "--study", str(tmp_path / "s"), "--stories-per-prompt", "2",
                                "--samples", "3", "--plan-only"])
    assert clash.exit_code == 2 and "--samples" in clash.output


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--http", "bogus"], "--http"),
        (["--lang", "en,xx"], "--lang"),
        (["--mode", "choice"], "--mode"),
        (["--limit", "0"], "--limit"),
        (["--extract-max-tokens", "0"], "--extract-max-tokens"),
        (["--stories-per-prompt", "0"], "--stories-per-prompt"),
    ],
)
def test_bad_run_option_is_one_line_exit_2(tmp_path: Path, args: list[str], needle: str) -> None:
    result = runner.invoke(app, ["run", "stories", "--study", str(tmp_path / "s"), *args, "--plan-only"])
    assert result.exit_code == 2, result.output
    assert needle in result.output


def _script(request: Request) -> str:
    if request.prompt.probe == "stories-extract":
        return json.dumps({"age": {"value": "senior", "evidence": ""}})
    return "Amina, 67, had retired."


def test_run_stores_stories_and_extractions_and_says_how_many(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr("biasatlas.backends.registry.make_backend",
                        lambda spec, **_: FakeBackend(_script, name=spec.split(":", 1)[1]))
    study = tmp_path / "s"
    result = runner.invoke(app, ["run", "stories", "--study", str(study), "--model", "fake:gen", "--limit", "6",
                                 "--samples", "2", "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "stories: 12 answered, 0 refusals, 0 empty" in result.output
    with Store(study) as store:
        assert len(store.frame(probe="stories")) == 12
        assert len(store.frame(probe="stories-extract")) == 12


def test_judge_takes_the_backend_options(tmp_path: Path) -> None:
    result = runner.invoke(app, ["stories", "judge", "--help"])
    assert result.exit_code == 0
    for option in ("--http", "--base-url", "--api-key-env", "--concurrency", "--batch-size", "--judge"):
        assert option in result.output
    bad = runner.invoke(app, ["stories", "judge", "--study", str(tmp_path), "--http", "bogus"])
    assert bad.exit_code == 2 and "--http" in bad.output
    missing = runner.invoke(app, ["stories", "judge", "--study", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2 and "no study" in missing.output


def test_judge_opens_each_judge_with_the_shared_options(tmp_path: Path, monkeypatch) -> None:
    from biasatlas.probes.stories import profiles as profiles_module
    from biasatlas.probes.stories.synth import Planted, synthetic_profiles

    profiles = synthetic_profiles(["m"], ["en"], 1500, planted={"m": [Planted("income_level", "low", "education",
                                                                              "basic", 0.9)]}, seed=1)
    monkeypatch.setattr(profiles_module, "load_profiles", lambda store: (profiles, {}))
    seen: list[tuple[str, dict[str, Any]]] = []

    def make_backend(spec: str, **options: Any) -> FakeBackend:
        seen.append((spec, options))
        return FakeBackend(lambda r: "harm: 4, realistic: yes", name=spec.split(":", 1)[1])

    monkeypatch.setattr("biasatlas.backends.registry.make_backend", make_backend)
    Store(tmp_path).close()
    result = runner.invoke(app, ["stories", "judge", "--study", str(tmp_path), "--judge", "fake:a,fake:b",
                                 "--k", "1", "--concurrency", "3", "--http", "timeout=7"])
    assert result.exit_code == 0, result.output
    assert [s for s, _ in seen] == ["fake:a", "fake:b"]
    assert all(o["concurrency"] == 3 and str(o["timeout"]) == "7" for _, o in seen)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--correction", "holm"], "valid: bh"),
        (["--correction", "nope"], "--correction"),
        (["--alpha", "1.5"], "--alpha"),
        (["--strategy", "fast"], "--strategy"),
        (["--resamples", "0"], "--resamples"),
    ],
)
def test_associations_bad_analysis_option_is_one_line(tmp_path: Path, args: list[str], needle: str) -> None:
    result = runner.invoke(app, ["associations", "--study", str(tmp_path), *args])
    assert result.exit_code == 2, result.output
    assert needle in result.output


def test_the_plan_states_the_defaults_that_differ_from_the_paper_once(tmp_path: Path) -> None:
    note = _plan(tmp_path, "--limit", "4")["note"]
    assert "English only" in note and "three extractors" in note and note.count("Differs") == 1
    assert "note" not in _plan(tmp_path, "--limit", "4", "--lang", "en,fr", "--extractor", "fake:a,fake:b",
                               "--model", "fake:g")
