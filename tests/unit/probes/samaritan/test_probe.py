"""Samaritan through the pipeline with a scripted backend: runner, summary JSON, report, CLI."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from biasatlas.backends.fake import FakeBackend
from biasatlas.cli.main import app
from biasatlas.probes.samaritan.plan import build_prompts
from biasatlas.probes.samaritan.probe import PROBE
from biasatlas.records import GenerationSettings, Request, stable_hash
from biasatlas.report.html import write_report
from biasatlas.runner import run_plan
from biasatlas.store import Store

SHIFT = {"senior": 6.0, "teenager": -6.0}


def script(request: Request) -> str:
    meta = request.prompt.meta
    rng = random.Random(stable_hash([request.prompt.text, request.sample_index]))
    if meta["scenario"] == "s002" and meta["group"] == "teenager":
        return "<b>It depends</b> on the teenager."  # unparseable, and markup to be escaped
    value = 65 + SHIFT.get(meta["group"], 0.0) + rng.gauss(0, 2)
    return f"I'd estimate {value:.0f}%."


@pytest.fixture
def study(tmp_path: Path) -> Path:
    prompts = build_prompts(["age"], n_scenarios=12)
    with Store(tmp_path) as store:
        settings = GenerationSettings(max_tokens=24)
        totals = run_plan(prompts, FakeBackend(script), store, settings, progress=False)
        assert totals.planned == 12 * 4 * 8
    return tmp_path


def test_summary_json_has_every_statistic(study: Path) -> None:
    with Store(study) as store:
        summary = PROBE.summarise(store)
    json.dumps(summary)  # JSON-ready
    assert summary["settings"]["alpha"] == 0.01 and summary["settings"]["correction"] == "holm"
    rows = {r["group"]: r for r in summary["groups"]}
    assert set(rows) == {"teenager", "young adult", "middle-aged", "senior"}
    for row in rows.values():
        for key in ("rating", "bias", "ci_low", "ci_high", "p", "p_adj", "d_z", "wilcoxon_p", "brittleness",
                    "n", "n_unparseable", "model", "language", "category"):
            assert key in row
    assert rows["senior"]["significant"] and rows["senior"]["bias"] > 3
    assert rows["teenager"]["significant"] and rows["teenager"]["bias"] < -3
    assert rows["teenager"]["n_unparseable"] == 4
    assert rows["teenager"]["reasons"] == {"no number": 4}
    assert rows["teenager"]["n"] == 11  # the scenario without a readable answer drops out of the pair
    assert summary["controls"][0]["n_scenarios"] == 12
    persona = summary["default_persona"][0]
    assert "middle-aged" in persona["default_groups"] and "senior" in persona["differing_groups"]
    assert summary["repeatability"] == []  # one sample only
    console = Console(record=True, width=200)
    PROBE.print_summary(summary, console)
    text = console.export_text()
    assert "teenager" in text and "unparseable ratings: 4" in text


def test_report_escapes_model_text(study: Path) -> None:
    with Store(study) as store:
        out = write_report(study, PROBE.report_sections(store))
    html = out.read_text()
    assert "&lt;b&gt;It depends&lt;/b&gt;" in html
    assert "<b>It depends</b>" not in html
    assert "data:image/png;base64" in html


def test_cli_plan_only_and_summary(study: Path) -> None:
    runner = CliRunner()
    plan = runner.invoke(
        app, ["run", "samaritan", "--study", str(study), "--category", "gender", "--plan-only"]
    )
    assert plan.exit_code == 0, plan.output
    data = json.loads(plan.stdout)
    assert data["prompts"] == 3296 and data["cells_per_category"] == {"gender": 824}
    summary = runner.invoke(app, ["summary", "--study", str(study), "--json"])
    assert summary.exit_code == 0, summary.output
    assert {r["group"] for r in json.loads(summary.stdout)["samaritan"]["groups"]} >= {"senior"}
    strict = runner.invoke(
        app, ["samaritan", "summary", "--study", str(study), "--correction", "none", "--json"]
    )
    assert strict.exit_code == 0, strict.output
    rows = json.loads(strict.stdout)["groups"]
    assert all(r["p_adj"] == r["p"] for r in rows)
    bad = runner.invoke(app, ["samaritan", "summary", "--study", str(study), "--correction", "fdr"])
    assert bad.exit_code == 2 and "--correction 'fdr'" in bad.output


def test_cli_run_with_unreadable_answers(tmp_path: Path) -> None:
    """An unscripted fake answers Yes/No: every rating is unreadable, counted and reported."""
    runner = CliRunner()
    result = runner.invoke(app, ["run", "samaritan", "--study", str(tmp_path), "--model", "fake:yesno",
                                 "--category", "gender", "--limit", "32", "--alpha", "0.05"])
    assert result.exit_code == 0, result.output
    summary = runner.invoke(app, ["summary", "--study", str(tmp_path), "--json"])
    data = json.loads(summary.stdout)["samaritan"]
    assert data["groups"] == []
    assert data["settings"]["alpha"] == 0.05  # recorded by the run
    assert sum(r["n_unparseable"] for r in data["unparseable"]) == 32
    assert all(r["reasons"] == {"no number": r["n_unparseable"]} for r in data["unparseable"])
    report = runner.invoke(app, ["report", "--study", str(tmp_path)])
    assert report.exit_code == 0, report.output
    assert "none can be analysed" in (tmp_path / "report.html").read_text()


def test_samples_use_temperature_and_are_cached_per_index(tmp_path: Path) -> None:
    runner = CliRunner()
    args = ["run", "samaritan", "--study", str(tmp_path), "--model", "fake:s", "--category", "age",
            "--limit", "32", "--samples", "2"]
    assert runner.invoke(app, args).exit_code == 0
    with Store(tmp_path) as store:
        frame = store.frame("samaritan")
        run = store.last_run("samaritan")
    assert sorted(frame["sample_index"].unique()) == [0, 1]
    assert len(frame) == 2 * 4 * 8
    assert run is not None and run["config"]["settings"]["temperature"] == 1.0
    again = runner.invoke(app, args)
    assert "cached 64" in again.output


def test_decodings_stay_apart(tmp_path: Path) -> None:
    """The same prompts at two max_tokens are two analysis units, never mixed in the frame."""
    runner = CliRunner()
    for tokens in ("8", "16"):
        args = ["run", "samaritan", "--study", str(tmp_path), "--model", "fake:d", "--category", "age",
                "--limit", "32", "--max-tokens", tokens]
        assert runner.invoke(app, args).exit_code == 0
    with Store(tmp_path) as store:
        frame = PROBE.outcomes(store)
        summary = PROBE.summarise(store)
    assert len(frame) == 2 * 4 * 8
    assert sorted(frame["max_tokens"].unique()) == [8, 16]
    assert {r["max_tokens"] for r in summary["unparseable"]} == {8, 16}


def test_one_scenario_is_reported_as_untested(tmp_path: Path) -> None:
    prompts = build_prompts(["gender"], n_scenarios=1)
    with Store(tmp_path) as store:
        run_plan(prompts, FakeBackend(script), store, GenerationSettings(max_tokens=24), progress=False)
        summary = PROBE.summarise(store)
        out = write_report(tmp_path, PROBE.report_sections(store))
    assert all(r["n"] == 1 and r["p"] is None and r["wilcoxon_p"] is None for r in summary["groups"])
    assert summary["default_persona"][0]["untested_groups"] == ["female", "male", "non-binary"]
    assert "No group has the two paired scenarios" in out.read_text()


def test_validity_counts_readable_ratings(study: Path) -> None:
    with Store(study) as store:
        table = PROBE.validity(store)
    assert int(table["answers"].sum()) == 12 * 4 * 8
    assert int(table["readable"].sum()) == 12 * 4 * 8 - 4  # the teenager's four "It depends" answers
