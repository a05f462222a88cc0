"""`biasatlas run leakage` with the shared options, and `leakage fit | export` on studies they cannot use."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from biasatlas.backends.fake import FakeBackend
from biasatlas.cli.main import app
from biasatlas.probes.leakage.probe import PROBE
from biasatlas.records import GenerationSettings, Message, Prompt
from biasatlas.runner import run_plan
from biasatlas.store import Store

runner = CliRunner()
GROUPS = "woman,man,immigrant"


def _one_line_error(result) -> str:  # type: ignore[no-untyped-def]
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    return lines[0]


def _plan(*args: str) -> dict:
    result = runner.invoke(app, ["run", "leakage", "--study", "s", "--plan-only", *args])
    assert result.exit_code == 0, result.output
    assert "None" not in result.stdout
    return json.loads(result.stdout)


@pytest.fixture()
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # short study paths: error lines stay within the terminal's width
    return tmp_path


def test_plan_only_takes_several_languages_and_the_limit(in_tmp: Path) -> None:
    comma = _plan("--lang", "en,ru", "--limit", "40")
    assert comma["languages"] == {"en": 20, "ru": 20} and comma["prompts"] == 40
    repeated = _plan("--lang", "en", "--lang", "zh", "--groups", GROUPS, "--orders", "one")
    assert repeated["languages"] == {"en": 3 * 240, "zh": 3 * 240}
    assert repeated["factors"]["order"] == {"ab": 2 * 3 * 240}
    assert "lang" not in repeated["factors"] and "template_id" not in repeated["factors"]
    generate = _plan("--lang", "hi", "--groups", "woman", "--mode", "generate", "--limit", "10")
    assert generate["samples_per_prompt"] == 10 and generate["requests"] == 10 * generate["prompts"]
    assert not (in_tmp / "s").exists()


def test_masked_models_get_the_ilps_templates(in_tmp: Path) -> None:
    plan = _plan("--model", "masked:some/bert", "--lang", "ru", "--groups", "woman,man")
    assert plan["factors"]["method"] == {"ilps": plan["prompts"]}
    assert "order" not in plan["factors"] and set(plan["factors"]["group"]) == {"woman", "man", "(neutral)"}


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--samples", "3"], ["--samples", "generate"]),
        (["--model", "span:t5", "--mode", "generate"], ["masked", "drop --mode generate"]),
        (["--groups", "martian"], ["'martian'", "valid"]),
        (["--lang", "en,xx"], ["--lang", "'xx'", "en, ru, zh, hi"]),
        (["--mode", "sing"], ["--mode", "'sing'"]),
        (["--http", "bogus"], ["--http"]),
        (["--http", "x=y"], ["--http", "x"]),
        (["--limit", "0"], ["--limit"]),
    ],
)
def test_bad_run_options_are_one_error_line(in_tmp: Path, args: list[str], needles: list[str]) -> None:
    result = runner.invoke(app, ["run", "leakage", "--study", "s", "--plan-only", *args])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    text = " ".join(result.output.split())  # rich wraps the one error line at the terminal's width
    for needle in needles:
        assert needle in text, (needle, result.output)


@pytest.fixture()
def other_study(in_tmp: Path) -> Path:
    """A study holding answers of another probe only."""
    with Store(in_tmp / "s") as store:
        prompt = Prompt(probe="samaritan", language="en", messages=(Message(role="user", content="Help?"),),
                        options=("yes", "no"), meta={"group": "a person"})
        run_plan([prompt], FakeBackend(), store, GenerationSettings(mode="generate"), progress=False)
    return Path("s")


def test_fit_and_export_without_leakage_answers_are_one_error_line(other_study: Path) -> None:
    for command in (["leakage", "fit", "--study", str(other_study)],
                    ["leakage", "export", "--study", str(other_study), "--out", "m"]):
        line = _one_line_error(runner.invoke(app, command))
        assert "holds no leakage answers" in line, line
    assert not Path("m").exists()


def test_summaries_of_a_study_without_leakage_answers_are_empty(other_study: Path) -> None:
    with Store(other_study) as store:
        summary = PROBE.summarise(store)
        assert summary["coverage"] == [] and summary["fits"] == [] and summary["flows"] == []
        assert PROBE.outcomes(store).empty
        assert PROBE.report_sections(store)[0].title == PROBE.title


def test_fit_checks_alpha_and_correction(in_tmp: Path) -> None:
    assert "--alpha" in _one_line_error(runner.invoke(app, ["leakage", "fit", "--study", "s", "--alpha", "1.5"]))
    line = _one_line_error(runner.invoke(app, ["leakage", "fit", "--study", "s", "--correction", "fdr"]))
    assert "--correction" in line and "bh" in line


def test_plan_only_states_the_paper_design_and_what_it_cannot_match(in_tmp: Path) -> None:
    plan = _plan("--model", "fake:x", "--groups", GROUPS, "--design", "paper")
    design = plan["design"]
    assert design["name"] == "paper" and design["paper"].startswith("Cao et al.")
    said = " ".join(design["set"])
    assert "every missing (999) cell counts as 0" in said and "uncorrected p < 0.05" in said
    assert "Table 3" in said and "--mono-for" in said
    cannot = " ".join(design["cannot_match"])
    assert "bert-base-cased" in cannot and "SeT" in cannot and "PLL-ILPS" in cannot and "not rated" in cannot
    assert design["control"] is None  # this model is fitted; the controls are other runs
    assert "note" not in plan


def test_plan_only_of_a_control_and_of_our_design_say_so(in_tmp: Path) -> None:
    control = _plan("--model", "fake:x", "--groups", GROUPS, "--design", "paper", "--mono-for", "hi")
    assert control["design"]["control"] == "hi" and control["languages"] == {"hi": control["prompts"]}
    ours = _plan("--model", "fake:x", "--groups", GROUPS)
    assert "design" not in ours
    note = ours["note"]
    assert note.startswith("Differs from Cao et al.") and "complete cases" in note and "Benjamini-Hochberg" in note
    assert "--design paper" in note
