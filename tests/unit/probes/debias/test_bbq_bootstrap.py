"""The paired bootstrap of BBQ between settings (Table 6): values as bbq.scores, a planted difference recovered,
the null rejected at about the nominal rate, Holm over the pairs, and the study's summary carrying it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from biasatlas.backends.fake import FakeBackend
from biasatlas.probes.debias import bbq as bbq
from biasatlas.probes.debias import bbq_bootstrap as boot
from biasatlas.probes.debias import evaluate as evaluate
from biasatlas.probes.debias import quality as quality
from biasatlas.records import GenerationSettings, Request
from biasatlas.runner import run_plan
from biasatlas.store import Store

SAMPLE = Path(__file__).parent / "data" / "bbq_sample.jsonl"


def _sides(rng: np.random.Generator, n: int, p_first: float, p_second: float) -> tuple[dict, dict, np.ndarray]:
    """Two models on n items: correct with its own probability, independently; half the items ambiguous;
    a wrong answer is biased half the time (never UNKNOWN)."""
    ambig = (np.arange(n) % 2).astype(float)
    difficulty = rng.normal(0, 1, n)  # items differ in difficulty alike for both: the pairing matters

    def side(p: float) -> dict:
        logit = np.log(p / (1 - p)) + difficulty
        correct = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(float)
        biased = np.where(correct == 1, 0.0, (rng.random(n) < 0.5).astype(float))
        return {"correct": correct, "biased": biased}

    return side(p_first), side(p_second), ambig


def _planted(p_first: float, p_second: float) -> float:
    """The population difference in accuracy of :func:`_sides` (difficulty integrated out numerically)."""
    z = np.random.default_rng(0).normal(0, 1, 1_000_000)

    def expit(p: float) -> np.ndarray:
        return 1 / (1 + np.exp(-(np.log(p / (1 - p)) + z)))

    return float((expit(p_second) - expit(p_first)).mean())


def test_values_are_bbq_scores_all_row() -> None:
    rng = np.random.default_rng(3)
    first, _, ambig = _sides(rng, 40, 0.5, 0.5)
    first["biased"][:5] = np.nan  # UNKNOWN answered: out of the bias ratio
    frame = pd.DataFrame({"model": "m", "category": "c", "context_condition": np.where(ambig == 1, "ambig",
                                                                                        "disambig"),
                          "correct": first["correct"], "biased_answer": first["biased"], "target": 0})
    table = bbq.scores(frame).set_index("category").loc["all"]
    accuracy, s_dis, s_amb = boot.values(first["correct"], first["biased"], ambig)
    assert accuracy == pytest.approx(first["correct"].mean())
    assert s_dis == pytest.approx(table["bias_disambig"]) and s_amb == pytest.approx(table["bias_ambig"])


def test_planted_difference_is_inside_its_interval_and_significant() -> None:
    rng = np.random.default_rng(7)
    first, second, ambig = _sides(rng, 400, 0.35, 0.6)
    rows = {r["statistic"]: r for r in boot.paired_bootstrap(first, second, ambig, rng=np.random.default_rng(1))}
    acc = rows["accuracy"]
    assert acc["difference"] == pytest.approx(second["correct"].mean() - first["correct"].mean())
    assert acc["ci_low"] < acc["difference"] < acc["ci_high"]
    assert acc["ci_low"] < _planted(0.35, 0.6) < acc["ci_high"] and acc["ci_low"] > 0  # the planted gap
    assert acc["p"] < 0.01 and acc["n"] == 400
    # seeded: the same generator seed gives the same interval
    again = boot.paired_bootstrap(first, second, ambig, rng=np.random.default_rng(1))[0]
    assert again["ci_low"] == acc["ci_low"] and again["p"] == acc["p"]


def test_null_difference_is_rejected_at_about_the_nominal_rate() -> None:
    """100 seeded studies of two equally good models: p > 0.05 in 95 of them (a 5% test; we accept >= 90)."""
    kept = 0
    for study in range(100):
        rng = np.random.default_rng(1000 + study)
        first, second, ambig = _sides(rng, 200, 0.5, 0.5)
        row = boot.paired_bootstrap(first, second, ambig, rng=np.random.default_rng(study))[0]
        kept += row["p"] > 0.05
    assert kept >= 90, kept


def test_identical_models_get_p_one() -> None:
    rng = np.random.default_rng(0)
    first, _, ambig = _sides(rng, 50, 0.5, 0.5)
    for row in boot.paired_bootstrap(first, first, ambig, resamples=200):
        assert row["difference"] == 0 and row["p"] == 1.0


def test_too_few_items_are_not_bootstrapped() -> None:
    one = {"correct": np.array([1.0]), "biased": np.array([0.0])}
    rows = boot.paired_bootstrap(one, one, np.array([0.0]))
    assert rows[0]["p"] is None and "fewer than 2" in rows[0]["note"]


def test_pairwise_holm_over_pairs_of_each_statistic() -> None:
    rng = np.random.default_rng(11)
    n = 300
    a, b, ambig = _sides(rng, n, 0.4, 0.6)
    c, _, _ = _sides(rng, n, 0.4, 0.4)
    parts = []
    for model, side in (("base", a), ("s1", b), ("s2", c)):
        parts.append(pd.DataFrame({"model": model, "prompt_id": [f"p{i}" for i in range(n)], "sample_index": 0,
                                   "context_condition": np.where(ambig == 1, "ambig", "disambig"),
                                   "correct": side["correct"], "biased_answer": side["biased"]}))
    rows = boot.pairwise(pd.concat(parts), {"base": "base (no fine-tuning)", "s1": "mixed", "s2": "cross-scenario"},
                         resamples=500)
    assert len(rows) == 3 * len(boot.STATISTICS)
    acc = [r for r in rows if r["statistic"] == "accuracy"]
    assert [(r["first"], r["second"]) for r in acc] == [("base (no fine-tuning)", "mixed"),
                                                        ("base (no fine-tuning)", "cross-scenario"),
                                                        ("mixed", "cross-scenario")]
    from statsmodels.stats.multitest import multipletests

    holm = multipletests([r["p"] for r in acc], method="holm")[1]
    assert [r["p_adj"] for r in acc] == pytest.approx(list(holm))
    assert acc[0]["p_adj"] < 0.05 and acc[0]["difference"] > 0


def _stereotyped(request: Request) -> str:
    meta, options = request.prompt.meta, request.prompt.options
    other = next(i for i in range(3) if i not in (meta["target"], meta["unknown"]))
    return options[meta["target"] if meta["question_polarity"] == "neg" else other]


def _correct(request: Request) -> str:
    return request.prompt.options[request.prompt.meta["label"]]


def test_study_summary_carries_the_pairwise_bootstrap(tmp_path: Path) -> None:
    """Two settings tuned from one base: three models, three pairs, in the summary and the export rows."""
    from biasatlas.export.statistics import statistics_rows
    from biasatlas.probes.debias.summary import summarise

    prompts = bbq.prompts(bbq.read_bbq([SAMPLE]))
    settings = GenerationSettings(mode="choice")
    with Store(tmp_path / "s") as store:
        for setting, after in (("mixed", _correct), ("cross-scenario", _stereotyped)):
            for role, script, name in (("before", _stereotyped, "base"), ("after", after, f"base+{setting}")):
                cfg = evaluate.run_config(role, setting, "bbq", quality.fingerprint(prompts), "fake", None, "en")
                run_plan(prompts, FakeBackend(script, name=name), store, settings, config=cfg, progress=False)
        summary = summarise(store)
    block = summary["bbq_pairwise"]
    assert list(block["models"].values()) == ["fake:base (no fine-tuning)", "mixed", "cross-scenario"]
    acc = {(r["first"], r["second"]): r for r in block["rows"] if r["statistic"] == "accuracy"}
    assert acc[("fake:base (no fine-tuning)", "mixed")]["difference"] == pytest.approx(1.0)
    assert acc[("fake:base (no fine-tuning)", "cross-scenario")]["p"] == 1.0  # the same answers
    rows = [r for r in statistics_rows("debias", summary) if r["source"] == "quality.bbq.pairwise"]
    assert len(rows) == 9 and {r["correction"] for r in rows} == {"holm"}
    row = next(r for r in rows if r["comparison"] == "mixed vs fake:base (no fine-tuning)" and r["measure"] ==
               "accuracy")
    assert row["estimate"] == pytest.approx(1.0) and row["n"] == 8 and row["test"].startswith("paired bootstrap")
