"""The CLI: plan-only output and clear errors for bad input (no model is loaded)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from biasatlas.cli.main import app

runner = CliRunner()


def test_plan_only_prints_json(tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", "contact", "--lang", "de", "--axis", "religion", "--plan-only",
                                 "--study", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    assert plan["prompts"] == 630 and plan["prompt_sets"] == 210
    assert plan["factors"]["contact"] == {"negative": 210, "none": 210, "positive": 210}
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--lang", "xx"], "--lang 'xx' is not valid for contact; valid: "
            "de, en, es, fr, hi, id, is, it, ko, pt, vi, zh"),
        (["--lang", "en,xx"], "--lang 'xx' is not valid for contact; valid: "
            "de, en, es, fr, hi, id, is, it, ko, pt, vi, zh"),
        (["--axis", "hobby"], "unknown axis 'hobby'"),
        (["--lang", "de", "--template-set", "b"], "unknown template set 'b' for de; valid: a"),
        (["--scale", "sometimes"], "unknown scale 'sometimes'; valid: certainty, likelihood, frequency"),
        (["--action", "maybe"], "unknown action 'maybe'; valid: positive, negative"),
        (["--holistic-bias-version", "v3"], "unknown HolisticBias version 'v3'; valid: v1.0, v1.1"),
        (["--mode", "vote"], "--mode 'vote': valid: choice, generate"),
        (["--limit", "0"], "--limit 0: must be at least 1"),
        (["--http", "x=y"], "--http wants NAME=VALUE"),
        (["--templates", "nosuch.csv"], "nosuch.csv: file not found"),
    ],
)
def test_bad_choices(tmp_path: Path, args: list[str], message: str) -> None:
    result = runner.invoke(app, ["run", "contact", *args, "--plan-only", "--study", str(tmp_path)])
    assert result.exit_code == 2
    assert message in " ".join(result.output.replace("│", " ").split())


def _plan(tmp_path: Path, *args: str) -> dict[str, Any]:
    result = runner.invoke(app, ["run", "contact", *args, "--plan-only", "--study", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    assert "None" not in result.stdout
    plan: dict[str, Any] = json.loads(result.stdout)
    return plan


def test_several_languages_comma_separated_or_repeated(tmp_path: Path) -> None:
    comma = _plan(tmp_path, "--lang", "de,is", "--axis", "religion")
    repeated = _plan(tmp_path, "--lang", "de", "--lang", "is", "--axis", "religion")
    assert comma == repeated
    assert comma["languages"] == {"de": 630, "is": 540}  # paper 000: 7 and 6 religious groups x 30 x 3
    assert comma["factors"]["template_set"] == {"de-a": 630, "is-a": 540}


@pytest.mark.parametrize("limit", [30, 100, 301])
def test_limit_counts_prompts_in_whole_sets(tmp_path: Path, limit: int) -> None:
    plan = _plan(tmp_path, "--lang", "en,de", "--scale", "all", "--limit", str(limit), "--seed", "2")
    assert plan["prompts"] == 3 * plan["prompt_sets"] == 3 * (limit // 3)
    assert set(plan["languages"]) == {"en", "de"}
    # the draw is stratified over language x scale x scenario x principle x action cells: 10 sets need not
    # cover every scale (they did by the seed's luck until the English plan lost its 4 duplicate descriptors)
    assert set(plan["factors"]["scale"]) <= {"certainty", "likelihood", "frequency"}
    if limit >= 100:
        # 33 sets cover every scale, every scenario of the 5, every principle of the 6
        assert set(plan["factors"]["scale"]) == {"certainty", "likelihood", "frequency"}
        assert len(plan["factors"]["scenario"]) == 5 and len(plan["factors"]["principle"]) == 6


def test_plan_only_of_an_imported_dataset(tmp_path: Path) -> None:
    sheet = tmp_path / "q.csv"
    sheet.write_text("q\nWork with [descriptor]?\nI like [descriptor]. Work with [descriptor]?\n"
                     "I fear [descriptor]. Work with [descriptor]?\n")
    desc = tmp_path / "d.txt"
    desc.write_text("tall people\nshort people\n")
    plan = _plan(tmp_path, "--templates", str(sheet), "--descriptors", str(desc), "--format", "rows",
                 "--scale", "likelihood", "--limit", "4")
    assert plan["prompts"] == 3 and plan["prompt_sets"] == 1
    assert plan["factors"]["scale"] == {"likelihood": 3}
    assert "scenario" not in plan["factors"]


def test_unknown_model(tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", "contact", "--model", "nosuch:thing", "--limit", "3",
                                 "--study", str(tmp_path)])
    assert result.exit_code == 2
    assert "unknown model 'nosuch:thing'" in result.output and "biasatlas models" in result.output


def test_missing_gguf(tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", "contact", "--model", str(tmp_path / "x.gguf"), "--limit", "3",
                                 "--study", str(tmp_path)])
    output = "".join(result.output.split())  # the path may be wrapped
    assert result.exit_code == 2 and "GGUFfile" in output and str(tmp_path / "x.gguf") in output


def test_summary_of_missing_study(tmp_path: Path) -> None:
    result = runner.invoke(app, ["summary", "--study", str(tmp_path / "none")])
    assert result.exit_code == 2 and "no study" in result.output


def test_models_lists_aliases() -> None:
    result = runner.invoke(app, ["models"])
    assert result.exit_code == 0 and "smollm2" in result.output and "openai" in result.output


def _german_sheet(tmp_path: Path) -> Path:
    sheet = tmp_path / "fragen.csv"
    sheet.write_text("frage\nSoll ich mit Studierenden [descriptor] lernen?\n"
                     "Ich mag sie. Soll ich mit Studierenden [descriptor] lernen?\n"
                     "Ich meide sie. Soll ich mit Studierenden [descriptor] lernen?\n", encoding="utf-8")
    return sheet


def test_import_passes_action_axis_and_suffix(tmp_path: Path) -> None:
    desc = tmp_path / "d.txt"
    desc.write_text("Christen\n", encoding="utf-8")
    args = ["--lang", "de", "--templates", str(_german_sheet(tmp_path)), "--descriptors", str(desc)]
    plan = _plan(tmp_path, *args, "--action", "negative", "--axis", "religion")
    assert plan["factors"]["action"] == {"negative": 3} and plan["factors"]["axis"] == {"religion": 3}
    result = runner.invoke(app, ["run", "contact", *args, "--action", "all", "--plan-only", "--study",
                                 str(tmp_path / "s")])
    assert result.exit_code == 2 and "--action positive or --action negative" in " ".join(result.output.split())
    bad = runner.invoke(app, ["run", "contact", *args, "--import-suffix", "mine", "--plan-only", "--study",
                              str(tmp_path / "s")])
    assert bad.exit_code == 2 and "unknown answer suffix 'mine'; valid: paper, biasatlas" in bad.output


def test_case_warning_is_one_line(tmp_path: Path) -> None:
    desc = tmp_path / "d.txt"
    desc.write_text("Muslime\n", encoding="utf-8")
    result = runner.invoke(app, ["run", "contact", "--lang", "de", "--templates", str(_german_sheet(tmp_path)),
                                 "--descriptors", str(desc), "--plan-only", "--study", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if "Muslime" in line]
    assert len(lines) == 1 and lines[0].startswith("warning: fragen.csv: descriptor 'Muslime'")
    assert "'Muslimen'" in lines[0] and "Traceback" not in result.output


def test_latin1_descriptors_and_raj_without_axis_are_one_line_errors(tmp_path: Path) -> None:
    latin = tmp_path / "gruppen.txt"
    latin.write_bytes("Gläubige\n".encode("latin-1"))
    result = runner.invoke(app, ["run", "contact", "--lang", "de", "--templates", str(_german_sheet(tmp_path)),
                                 "--descriptors", str(latin), "--plan-only", "--study", str(tmp_path / "s")])
    flat = " ".join(result.output.split())
    assert result.exit_code == 2 and "gruppen.txt: not UTF-8 text" in flat
    raj = tmp_path / "raj.csv"
    raj.write_text("id,key_principle,scenario,action_type,base_prompt,positive_contact,negative_contact\n"
                   "1,common goals,education,positive,Work with [descriptor]?,I like [descriptor]. Work with "
                   "[descriptor]?,I fear [descriptor]. Work with [descriptor]?\n", encoding="utf-8")
    result = runner.invoke(app, ["run", "contact", "--templates", str(raj), "--plan-only", "--study",
                                 str(tmp_path / "s")])
    assert result.exit_code == 2 and "missing column(s) axis, bucket" in " ".join(result.output.split())


def test_import_options_that_cannot_apply_are_one_line_errors(tmp_path: Path) -> None:
    desc = tmp_path / "d.txt"
    desc.write_text("Christen\n", encoding="utf-8")
    args = ["--lang", "de", "--templates", str(_german_sheet(tmp_path)), "--descriptors", str(desc)]
    cases = [
        (["--axis", "religion,nationality"], "--axis religion,nationality: fragen.csv has no axis column; give one "
                                             "--axis for its rows"),
        (["--scenario", "sports"], "--scenario sports: no template of fragen.csv has it (it has: no scenario)"),
        (["--template-set", "a"], "--template-set: not used with --templates"),
        (["--scale", "certainty,likelihood"], "--scale certainty,likelihood: an imported dataset takes one --scale"),
        (["--holistic-bias-version", "v1.1"], "--holistic-bias-version: not used with --descriptors"),
    ]
    for extra, message in cases:
        result = runner.invoke(app, ["run", "contact", *args, *extra, "--plan-only", "--study", str(tmp_path / "s")])
        flat = " ".join(result.output.replace("│", " ").split())
        assert result.exit_code == 2 and message in flat, (extra, result.output)
        assert "Traceback" not in result.output
