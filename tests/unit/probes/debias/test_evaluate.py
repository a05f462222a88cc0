"""Before/after pairing, tables and tests, summary and report section — with scripted fake models."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from biasatlas.backends.fake import FakeBackend
from biasatlas.probes.debias import evaluate as evaluate
from biasatlas.probes.debias import quality as quality
from biasatlas.probes.debias.data import unbiased_answer
from biasatlas.probes.debias.probe import PROBE
from biasatlas.probes.debias.splits import build_split
from biasatlas.records import GenerationSettings, Request
from biasatlas.report.html import write_report
from biasatlas.runner import run_plan
from biasatlas.store import Store


def _always_first(request: Request) -> str:
    return request.prompt.options[0]  # affirmative: biased exactly on the negative-action prompts


def _unbiased(request: Request) -> str:
    return unbiased_answer(request.prompt)


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("debias")
    split = build_split("cross-scenario", limit=140, seed=0)
    settings = GenerationSettings(mode="choice")
    qa = quality.qa_prompts(limit=6)
    with Store(path) as store:
        for role, script, name in (("before", _always_first, "base"), ("after", _unbiased, "base+lora")):
            cfg = evaluate.run_config(role, "cross-scenario", "test", split.fingerprint(), "fake", None, "en")
            run_plan(split.test, FakeBackend(script, name=name), store, settings, config=cfg, progress=False)
            qcfg = evaluate.run_config(role, "cross-scenario", "qa", quality.fingerprint(qa), "fake", None, "en")
            qcfg["probe"] = "debias"
            answer = (lambda r: r.prompt.meta["reference"]) if role == "after" else (lambda r: "I do not know")
            run_plan(qa, FakeBackend(answer, name=name), store, quality.QA_SETTINGS, config=qcfg, progress=False)
    return path


def test_pairs_and_tables(study: Path) -> None:
    split = build_split("cross-scenario", limit=140, seed=0)
    negative = sum(1 for p in split.test if p.meta["action"] == "negative")
    with Store(study) as store:
        comps = evaluate.comparisons(store)
        assert len(comps) == 1 and comps[0]["before_model"] == "fake:base"
        paired = evaluate.paired_outcomes(store, comps[0])
        assert len(paired) == len(split.test)
        tables = evaluate.all_tables(paired)
    overall = tables["overall"].set_index("contact")
    assert overall["before_biased"].sum() == negative  # 'Yes' to 'avoid' is biased, 'Yes' to 'collaborate' not
    assert overall["after_biased"].sum() == 0
    row = overall.loc["none"]
    assert row["n_pairs"] == len(split.test) // 3
    assert row["effect"] == pytest.approx(-row["before_biased"] / row["n_pairs"])
    assert row["p"] < 0.05 and row["p_adj"] >= row["p"]
    assert set(tables["by_scenario"]["scenario"]) == {"sports", "community", "healthcare"}
    assert "McNemar exact" in row["test"]


def test_summary_report_and_quality(study: Path) -> None:
    with Store(study) as store:
        summary = PROBE.summarise(store)
        sections = PROBE.report_sections(store)
    comp = summary["contact"][0]
    assert comp["setting"] == "cross-scenario" and comp["part"] == "test"
    assert {"overall", "by_scale", "by_scenario", "by_principle", "by_axis"} <= set(comp["tables"])
    qa = next(q for q in summary["quality"] if q["task"] == "qa")
    assert qa["n"] == 6 and qa["rouge_l_after"] == pytest.approx(1.0) and qa["rouge_l_before"] < 0.2
    assert sections and "Social Contact Debiasing" in sections[0].title
    html = write_report(study, sections).read_text()
    text = re.sub(r"<[^>]+>", "", html)  # the citation is a link to the references
    assert "By scale and contact (Raj et al., 2024, Table 4)" in text and "ROUGE-L" in html


def test_outcomes_one_row_per_answer_of_each_side(study: Path) -> None:
    split = build_split("cross-scenario", limit=140, seed=0)
    with Store(study) as store:
        frame = PROBE.outcomes(store)
    assert len(frame) == 2 * len(split.test)
    assert list(frame.columns[:4]) == ["setting", "part", "fingerprint", "role"]
    assert frame.groupby("role")["prompt_id"].nunique().to_dict() == {"after": len(split.test),
                                                                      "before": len(split.test)}
    assert frame.loc[frame["role"] == "after", "biased"].sum() == 0
    negative = sum(1 for p in split.test if p.meta["action"] == "negative")
    assert frame.loc[frame["role"] == "before", "biased"].sum() == negative
    assert {"scale", "contact", "scenario", "decision"} <= set(frame.columns)


def test_outcomes_of_a_study_without_comparison(tmp_path: Path) -> None:
    with Store(tmp_path / "empty") as store:
        assert PROBE.outcomes(store).empty
        assert PROBE.summarise(store) == {}


def test_alpha_and_correction_of_the_before_after_tests(study: Path) -> None:
    with Store(study) as store:
        default = PROBE.summarise(store)
        strict = PROBE.summarise(store, alpha=0.01, correction="bonferroni")
        with pytest.raises(ValueError, match="correction 'magic'"):
            PROBE.summarise(store, correction="magic")
        with pytest.raises(TypeError, match="unknown analysis option"):
            PROBE.summarise(store, level=0.1)
    assert default["analysis"] == {"alpha": 0.05, "correction": "bh"}
    assert strict["analysis"] == {"alpha": 0.01, "correction": "bonferroni"}
    rows_bh = default["contact"][0]["tables"]["by_scenario"]
    rows_bonf = strict["contact"][0]["tables"]["by_scenario"]
    n_tests = sum(1 for t in default["contact"][0]["tables"].values() for r in t if r["p"] is not None)
    for a, b in zip(rows_bh, rows_bonf, strict=True):
        assert a["p"] == b["p"] is not None and b["correction"] == "bonferroni"
        assert b["p_adj"] == pytest.approx(min(1.0, a["p"] * n_tests))
        assert a["p_adj"] <= b["p_adj"]


def test_rouge_l_is_the_packages_f1() -> None:
    assert quality.rouge_l(["Paris is the capital"], ["Paris"]) == [pytest.approx(2 * 1 * 0.25 / 1.25)]
    assert quality.rouge_l(["the Pacific"], ["the Pacific Ocean"])[0] == pytest.approx(0.8)


def test_report_when_no_answer_changed() -> None:
    from biasatlas.probes.debias import report as debias_report

    undefined = {"p": None, "ci_low": None, "ci_high": None, "effect": None}
    summary = {"contact": [], "quality": [{"task": "qa", "setting": "mixed", "n": 3, "rouge_l_before": 0.5,
                                           "rouge_l_after": 0.5, "difference": undefined, "wilcoxon": {"p": 1.0},
                                           "examples": []}]}
    section = debias_report.sections(summary)[0]
    assert any("p=–" in block for block in section.blocks)


def test_two_base_models_on_one_split_are_two_comparisons(tmp_path: Path) -> None:
    """Two base models tuned on the same split: each has its own before/after pair (one used to overwrite
    the other: the latest run won, silently)."""
    split = build_split("cross-scenario", limit=140, seed=0)
    settings = GenerationSettings(mode="choice")
    with Store(tmp_path) as store:
        for base in ("alpha", "beta"):
            for role, script, name in (("before", _always_first, base), ("after", _unbiased, f"{base}+lora")):
                cfg = evaluate.run_config(role, "cross-scenario", "test", split.fingerprint(), f"fake:{base}",
                                          None, "en")
                run_plan(split.test, FakeBackend(script, name=name), store, settings, config=cfg, progress=False)
        comps = evaluate.comparisons(store)
        pairs = {(c["before_model"], c["after_model"]) for c in comps}
        assert pairs == {("fake:alpha", "fake:alpha+lora"), ("fake:beta", "fake:beta+lora")}
        for comp in comps:
            assert len(evaluate.paired_outcomes(store, comp)) == len(split.test)
        frame = PROBE.outcomes(store)
        summary = PROBE.summarise(store)
        sections = PROBE.report_sections(store)
    html = write_report(tmp_path, sections).read_text()
    assert "fake:alpha+lora" in html and "fake:beta+lora" in html
    assert len(frame) == 4 * len(split.test)
    assert len(summary["contact"]) == 2
    assert {c["model_spec"] for c in summary["contact"]} == {"fake:alpha", "fake:beta"}
