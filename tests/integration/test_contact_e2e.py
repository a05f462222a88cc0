"""The contact probe end to end on the real embedded model (SmolLM2-135M), in en, de and is."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from biasatlas.backends.local import LocalBackend
from biasatlas.cli.main import app
from biasatlas.probes.contact import probe as contact
from biasatlas.records import GenerationSettings
from biasatlas.runner import run_plan
from biasatlas.store import Store

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def model() -> Iterator[LocalBackend]:
    backend = LocalBackend("smollm2")
    yield backend
    backend.close()


@pytest.mark.parametrize("mode", ["choice", "generate"])
@pytest.mark.parametrize(("language", "axis"), [("en", "religion"), ("de", "religion"), ("is", "nationality")])
def test_small_run(model: LocalBackend, tmp_path: Path, language: str, axis: str, mode: str) -> None:
    prompts = contact.build_prompts(contact.ContactConfig(languages=[language], axes=[axis], limit=12, seed=7))
    store = Store(tmp_path)
    totals = run_plan(prompts, model, store, GenerationSettings(mode=mode, max_tokens=8), progress=False)
    assert (totals.planned, totals.new, totals.failed) == (12, 12, 0)
    out = contact.outcomes(store.frame(probe="contact"))
    assert len(out) == 12 and set(out["contact"]) == {"none", "positive", "negative"}
    if mode == "choice":
        options = prompts[0].options
        for probs in out["option_probs"]:
            assert set(probs) == set(options)
            assert sum(probs.values()) == pytest.approx(1.0, abs=1e-6)
        assert set(out["decision"]) <= {"biased", "unbiased"}
        assert out["moved"].dropna().isin(["toward", "away", "same"]).all()
        assert out["p_moved"].dropna().isin(["toward", "away", "same"]).all()
        assert out["p_biased"].between(0, 1).all() and out["ch"].dropna().isin([0.0, 1.0]).all()
    else:
        assert out["text"].map(lambda t: isinstance(t, str)).all()
        # every answer is scored or carries the reason it is not
        assert (out["decision"].isin(["biased", "unbiased"]) | out["reason"].notna()).all()
    summary = contact.summarise(store)
    assert sum(r["n"] for r in summary["by_contact"]) == 12
    measures = {r["measure"] for r in summary["tests"]}
    if mode == "choice":  # every choice answer has a decision and a probability
        assert measures == {"decision", "P(biased)"}
    else:  # no probabilities; decision tests only where the small model's texts were readable
        assert measures <= {"decision"}
    store.close()


def test_cli_run_resume_summary_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    study = tmp_path / "de-religion"
    args = ["run", "contact", "--model", "smollm2", "--lang", "de", "--axis", "religion", "--limit", "9",
            "--study", str(study)]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output

    def no_load(self: LocalBackend) -> None:
        raise AssertionError("a fully cached rerun loaded the model")

    monkeypatch.setattr(LocalBackend, "_load", no_load)  # issue 28: a cached rerun loads nothing
    again = runner.invoke(app, args)
    assert again.exit_code == 0, again.output
    assert "nothing to ask" in again.output
    monkeypatch.undo()
    summary = runner.invoke(app, ["summary", "--study", str(study), "--json"])
    data = json.loads(summary.stdout)["contact"]
    assert data["last_run"]["planned"] == 9
    assert (data["last_run"]["cached"], data["last_run"]["new"]) == (9, 0)
    cell = data["by_contact"][0]
    assert cell["language"] == "de" and cell["n"] == 3
    assert {"unbiased_pct", "biased_pct", "none_pct", "biased_ci_low", "biased_ci_high"} <= set(cell)
    # the contact effect on the probabilities, on the 3 prompt sets, beside McNemar on the decisions
    logodds = next(r for r in data["tests"] if r["measure"] == "P(biased)" and r["method_kind"] == "paired t")
    assert logodds["n"] == 3 and logodds["p"] is not None and logodds["ci_low"] <= logodds["effect"]
    printed = runner.invoke(app, ["summary", "--study", str(study)])
    flat = " ".join(printed.output.split())
    assert printed.exit_code == 0 and "P(biased)" in flat
    assert "Contact-hypothesis adherence (Raj et al., 2024, Table 3)" in flat and "CH indicator" not in flat
    report = runner.invoke(app, ["report", "--study", str(study)])
    assert report.exit_code == 0
    html = (study / "report.html").read_text()
    assert "Contact-hypothesis probe" in html and "data:image/png;base64" in html


def test_cli_two_languages_generate_and_analysis_options(tmp_path: Path) -> None:
    runner = CliRunner()
    study = tmp_path / "de-is"
    # one design cell per language (scenario x principle x action), so 2 sets cover both languages
    args = ["run", "contact", "--model", "smollm2", "--lang", "de,is", "--axis", "religion", "--limit", "6",
            "--scenario", "education", "--principle", "equal_status", "--mode", "generate", "--max-tokens", "4",
            "--study", str(study)]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    summary = runner.invoke(app, ["summary", "--study", str(study), "--json", "--correction", "holm",
                                  "--alpha", "0.1"])
    assert summary.exit_code == 0, summary.output
    data = json.loads(summary.stdout)["contact"]
    assert data["last_run"]["planned"] == 6
    assert data["analysis"] == {"alpha": 0.1, "correction": "holm"}
    assert {r["language"] for r in data["by_contact"]} == {"de", "is"}
    assert {r["mode"] for r in data["by_contact"]} == {"generate"}
    assert all(r["correction"] == "holm" for r in data["tests"])
