"""The leakage probe end to end on the fake backend: scores, coverage, summary, report, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from rich.console import Console
from typer.testing import CliRunner

from biasatlas.backends.fake import FakeBackend
from biasatlas.cli.main import app
from biasatlas.probes.leakage.analysis import analyse
from biasatlas.probes.leakage.data import lexicon
from biasatlas.probes.leakage.human import load_human
from biasatlas.probes.leakage.plan import build_prompts
from biasatlas.probes.leakage.probe import PROBE
from biasatlas.probes.leakage.scores import association_cells, matrix, theme_choices
from biasatlas.records import GenerationSettings, Request
from biasatlas.report.html import write_report
from biasatlas.runner import run_plan
from biasatlas.store import Store

FAVOURITE = "wealthy"


def likes_wealth(request: Request) -> str:
    """Names 'wealthy' whenever offered, else the option shown second; for 'woman' it rambles (unmatched) when
    generating. In choice mode the fake gives the named option probability 0.9."""
    meta, lex = request.prompt.meta, lexicon(request.prompt.language)
    choice = request.settings.mode == "choice"
    if meta["group"] == "woman" and not choice:
        return "<b>Once upon a time</b>"
    if FAVOURITE in (meta["trait_a"], meta["trait_b"]):
        form = lex.form(FAVOURITE, meta["gender"])
        return form if choice else f"I choose '{form}'."
    return request.prompt.options[1]


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Store:
    store = Store(tmp_path_factory.mktemp("leakage") / "study")
    prompts = build_prompts(["en", "ru"], group_names=["woman", "man", "immigrant"], orders="one")
    run_plan(prompts, FakeBackend(likes_wealth), store, GenerationSettings(mode="generate", temperature=1.0),
             samples=1, progress=False)
    run_plan(prompts, FakeBackend(likes_wealth), store, GenerationSettings(mode="choice"), progress=False)
    return store


def follows_en_humans(request: Request) -> str:
    """Names the option English humans rate stronger for the group (choice mode: probability 0.9)."""
    meta, human = request.prompt.meta, HUMAN_EN
    first = human.at[meta["trait_a"], meta["group"]] >= human.at[meta["trait_b"], meta["group"]]
    return request.prompt.options[0 if first == (meta["order"] == "ab") else 1]


HUMAN_EN = load_human(None)["en"]
FITTED_GROUPS = ["woman", "man", "gay man", "lesbian", "single mother", "housewife"]


@pytest.fixture(scope="module")
def fitted(tmp_path_factory: pytest.TempPathFactory) -> Store:
    """Six shared groups in en and ru, choice mode: 192 complete cells per fit, above the default minimums."""
    store = Store(tmp_path_factory.mktemp("leakage-fitted") / "study")
    prompts = build_prompts(["en", "ru"], group_names=FITTED_GROUPS, orders="one")
    run_plan(prompts, FakeBackend(follows_en_humans), store, GenerationSettings(mode="choice"), progress=False)
    return store


def test_generate_scores_count_matches_and_keep_unmatched(study: Store) -> None:
    choices = theme_choices(study.frame(probe="leakage"))
    gen = choices[choices["mode"] == "generate"]
    assert len(gen) == 2 * 3 * 240
    woman = gen[gen["group"] == "woman"]
    assert (woman["level"] == "unmatched").all() and woman["p_a"].isna().all()
    assert set(gen.loc[gen["group"] != "woman", "level"]) <= {"exact", "contains"}
    cells = association_cells(study.frame(probe="leakage"))
    m = matrix(cells, "fake:fake [theme/generate]", "ru")
    # 'wealthy' wins each of its 15 comparisons: score 1; the woman column has no matched answer.
    assert m.loc["wealthy", "man"] == 1.0 and m.loc["wealthy", "immigrant"] == 1.0
    assert m["woman"].isna().all()
    n = cells[(cells["variant"] == "fake:fake [theme/generate]") & (cells["trait"] == "wealthy")]["n"]
    assert set(n) == {15}


def test_choice_scores_are_normalised_option_probabilities(study: Store) -> None:
    choices = theme_choices(study.frame(probe="leakage"))
    ch = choices[choices["mode"] == "choice"]
    assert ((ch["p_a"] + ch["p_b"] + ch["p_neither"]).round(9) == 1).all()
    cells = association_cells(study.frame(probe="leakage"))
    m = matrix(cells, "fake:fake [theme/choice]", "en")
    assert m.loc["wealthy", "man"] == pytest.approx(0.9)  # the fake gives its answer 0.9


def test_summary_and_report(study: Store) -> None:
    summary = PROBE.summarise(study)
    json.dumps(summary)  # JSON-ready
    cov = pd.DataFrame(summary["coverage"])
    gen = cov[cov["variant"].str.contains("generate")]
    assert set(gen["match_unmatched"]) == {240}  # the woman's answers
    assert all(r["unmatched_reasons"] == {"no option": 240} for r in gen.to_dict("records"))
    assert {f["target"] for f in summary["fits"]} == {"en", "ru"}
    sections = PROBE.report_sections(study)
    out = write_report(study.dir, sections)
    html = out.read_text()
    assert "Cross-language stereotype leakage" in html and "data:image/png;base64" in html
    assert "<b>Once upon a time</b>" not in html and "&lt;b&gt;Once upon a time" in html


def test_analysis_zero_fill_and_bad_mono(study: Store) -> None:
    plain = analyse(study)
    filled = analyse(study, zero_fill=True)
    assert sum(f.n_obs for f in filled.fits) >= sum(f.n_obs for f in plain.fits)
    with pytest.raises(ValueError, match="neither a file nor exactly one model"):
        analyse(study, mono={"en": "no-such-model"})


def test_cli_run_fit_export_summary(tmp_path: Path) -> None:
    runner = CliRunner()
    study = tmp_path / "s"
    plan = runner.invoke(app, ["run", "leakage", "--model", "fake:x", "--lang", "zh,hi", "--plan-only",
                               "--groups", "woman,Hui person", "--study", str(study)])
    assert plan.exit_code == 0, plan.output
    planned = json.loads(plan.stdout)
    assert planned["prompts"] == 2 * 2 * 480 and planned["factors"]["category"]["nonshared"] == 2 * 480
    run = runner.invoke(app, ["run", "leakage", "--model", "fake:x", "--lang", "en", "--groups",
                              "man,woman,feminist", "--orders", "one", "--study", str(study)])
    assert run.exit_code == 0, run.output
    fit = runner.invoke(app, ["leakage", "fit", "--study", str(study), "--json", "--figure", str(tmp_path / "f.png")])
    assert fit.exit_code == 0, fit.output
    data = json.loads(fit.stdout)
    assert data["fits"][0]["target"] == "en" and data["fits"][0]["n_complete"] == 3 * 32
    assert (tmp_path / "f.png").stat().st_size > 1000
    export = runner.invoke(app, ["leakage", "export", "--study", str(study), "--out", str(tmp_path / "m")])
    assert export.exit_code == 0, export.output
    exported = list((tmp_path / "m").glob("*_EN.csv"))
    assert len(exported) == 1
    mono = runner.invoke(app, ["leakage", "fit", "--study", str(study), "--json", "--mono", f"en={exported[0]}"])
    assert mono.exit_code == 0, mono.output
    assert json.loads(mono.stdout)["fits"][0]["formula"].endswith("+ mono")
    summary = runner.invoke(app, ["summary", "--study", str(study), "--json"])
    assert summary.exit_code == 0 and "leakage" in json.loads(summary.stdout)
    bad = runner.invoke(app, ["run", "leakage", "--model", "fake:x", "--lang", "en,xx", "--study", str(study)])
    assert bad.exit_code == 2 and "--lang 'xx' is not valid for leakage" in bad.output
    nostudy = runner.invoke(app, ["leakage", "fit", "--study", str(tmp_path / "none")])
    assert nostudy.exit_code == 2 and "no study" in nostudy.output


def test_summarise_takes_alpha_and_correction(fitted: Store) -> None:
    default = PROBE.summarise(fitted)
    assert (default["settings"]["alpha"], default["settings"]["correction"]) == (0.05, "bh")
    strict = PROBE.summarise(fitted, alpha=0.01, correction="bonferroni")
    assert (strict["settings"]["alpha"], strict["settings"]["correction"]) == (0.01, "bonferroni")
    assert all(f["usable"] for f in default["fits"]) and len(default["fits"]) == 2

    def coefficients(summary: dict) -> dict:
        return {(f["variant"], f["target"], c["term"]): c for f in summary["fits"] for c in f["coefficients"]}

    loose, tight = coefficients(default), coefficients(strict)
    assert loose and loose.keys() == tight.keys()
    # Only the cross-language human terms are adjusted (2 fits x 3 sources); the own language's is not a test.
    humans = [k for k in loose if k[2].startswith("human_") and k[2] != f"human_{k[1]}"]
    assert len(humans) == 6 and all(loose[k]["p_adj"] is not None for k in humans)
    assert all(loose[k]["p_adj"] is None for k in loose if k not in humans)
    # Bonferroni adjusts at least as much as BH; the estimates do not change, a 99% CI is wider than a 95% one.
    assert all(tight[k]["p_adj"] >= loose[k]["p_adj"] - 1e-12 for k in humans)
    assert any(tight[k]["p_adj"] > loose[k]["p_adj"] for k in humans)
    for k, c in loose.items():
        assert tight[k]["estimate"] == c["estimate"]
        assert tight[k]["ci_high"] - tight[k]["ci_low"] > c["ci_high"] - c["ci_low"]
    with pytest.raises(TypeError, match="bogus"):
        PROBE.summarise(study, bogus=1)


def test_fit_cli_passes_alpha_and_correction(fitted: Store) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["leakage", "fit", "--study", str(fitted.dir), "--json", "--alpha", "0.01",
                                 "--correction", "bonferroni"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    direct = PROBE.summarise(fitted, alpha=0.01, correction="bonferroni")
    assert any(c["p_adj"] is not None for f in direct["fits"] for c in f["coefficients"])
    assert data == json.loads(json.dumps(direct, default=str))
    console = Console(width=250, record=True)
    PROBE.print_summary(direct, console)
    text = console.export_text()
    assert "99% CI" in text and "p (bonferroni)" in text and "95% CI" not in text


def test_outcomes_one_row_per_answer_with_the_decision(study: Store) -> None:
    frame = PROBE.outcomes(study)
    assert len(frame) == len(study.frame(probe="leakage")) == 2 * 2 * 3 * 240
    for column in ("language", "group", "trait_a", "trait_b", "order", "mode", "decision", "match", "reason"):
        assert column in frame.columns
    gen = frame[frame["mode"] == "generate"]
    woman = gen[gen["group"] == "woman"]
    assert woman["decision"].isna().all() and set(woman["match"]) == {"unmatched"}
    offered = gen[(gen["group"] != "woman") & ((gen["trait_a"] == FAVOURITE) | (gen["trait_b"] == FAVOURITE))]
    assert set(offered["decision"]) == {FAVOURITE}
    choice = frame[frame["mode"] == "choice"]
    others = choice[(choice["trait_a"] != FAVOURITE) & (choice["trait_b"] != FAVOURITE)]
    assert (others["decision"] == others["trait_b"]).all()  # the fake names the option shown second
    assert set(choice["match"]) == {"choice"}
