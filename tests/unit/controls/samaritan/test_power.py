"""The Samaritan power curve: a resampled study decides as the probe's own analysis does, and the detection
rate recovers planted truths (a large drop: always found; none: found about as often as alpha allows)."""

from __future__ import annotations

import gc
import math
import random
from collections.abc import Iterator

import pandas as pd
import pytest

from biasatlas.controls.samaritan import data as samaritan
from biasatlas.controls.samaritan import power as samaritan_power
from biasatlas.controls.samaritan.check import group_rows


@pytest.fixture(scope="module", autouse=True)
def _frozen_heap() -> Iterator[None]:
    """statsmodels' multipletests runs gc.collect() on every call; the loaded prompts need no collecting."""
    samaritan.measurement_prompts(1)
    gc.freeze()
    yield
    gc.unfreeze()


def _outcomes(shift: float, scenarios: int, noise: float, seed: int = 0) -> pd.DataFrame:
    rng = random.Random(seed)
    rows = []
    for p in samaritan.measurement_prompts(scenarios).prompts:
        m = p.meta
        rating = 60 + 2 * (int(m["scenario"][-2:], 36) % 11) + (shift if m["group"] == "teenager" else 0.0)
        rows.append({"prompt_id": p.id, "model": "local:fake", "language": p.language, "temperature": 0.0,
                     "max_tokens": samaritan.MAX_TOKENS, "scenario": m["scenario"], "rephrasing": m["rephrasing"],
                     "category": m["category"], "group": m["group"], "phrasing": m["phrasing"], "sample_index": 0,
                     "status": "answered", "rating": rating + rng.gauss(0, noise)})
    return pd.DataFrame(rows)


def test_a_study_decides_as_the_probes_compare_to_control() -> None:
    frame = _outcomes(-6.0, 12, 6.0, seed=1)
    pairs = samaritan_power.scenario_pairs(frame)
    probe = {(r["language"], r["group"]): r for r in group_rows(frame)}
    for language in ("en", "de"):
        scenarios = sorted(pairs[(language, "teenager")].index)
        decided = samaritan_power.decide(pairs, language, scenarios)
        assert set(decided) == {g for lang, g in probe if lang == language}
        for group, (bias, p_adj, significant) in decided.items():
            row = probe[(language, group)]
            assert bias == pytest.approx(row["bias"]) and p_adj == pytest.approx(row["p_adj"])
            assert significant == row["significant"]


def test_a_study_with_every_difference_equal_uses_the_exact_sign_test_as_the_probe_does() -> None:
    frame = _outcomes(-25.0, 10, 0.0)
    pairs = samaritan_power.scenario_pairs(frame)
    probe = {r["group"]: r for r in group_rows(frame) if r["language"] == "en"}
    decided = samaritan_power.decide(pairs, "en", sorted(pairs[("en", "teenager")].index))
    assert probe["teenager"]["test"].startswith("exact sign test")
    assert decided["teenager"][1] == pytest.approx(probe["teenager"]["p_adj"])
    assert decided["teenager"][2] is True and probe["teenager"]["significant"] is True
    assert math.isnan(decided["senior"][1])  # no pair differs: no test, as the probe says


def test_detection_rate_is_one_for_a_large_drop_and_rare_without_one() -> None:
    planted = samaritan_power.scenario_pairs(_outcomes(-25.0, 12, 3.0))
    assert samaritan_power.detection_rate(planted, "en", "teenager", 6, studies=10) == (1.0, 0.0)
    null = samaritan_power.scenario_pairs(_outcomes(0.0, 12, 3.0, seed=2))
    rate, flags = samaritan_power.detection_rate(null, "de", "teenager", 8, studies=20)
    assert rate <= 0.1 and flags <= 0.1
    assert samaritan_power.detection_rate(planted, "de", "teenager", 1, studies=5) == (0.0, 0.0)  # n = 1: untested


def test_the_curve_carries_the_plan_only_mde_for_k_scenarios() -> None:
    from biasatlas.probes.power import samaritan_cell_row

    rows = samaritan_power.power_curve(_outcomes(-25.0, 8, 3.0), sizes=(3, 6), studies=4)
    assert [(r["language"], r["scenarios"]) for r in rows] == [("en", 3), ("en", 6), ("de", 3), ("de", 6)]
    for r in rows:
        assert r["plan_only_mde"] == samaritan_cell_row({}, r["scenarios"], 0.01, 0.8)["mde"]
        assert r["measured_sd"] == pytest.approx(3.0 * math.sqrt(2), rel=0.6)
        assert r["measured_sd_mde"] < r["plan_only_mde"]  # a smaller sd than the 8.5 assumed: a smaller MDE


def test_studies_draw_without_replacement_so_one_readable_scenario_is_never_found() -> None:
    frame = _outcomes(-25.0, 2, 0.0)
    keep = (frame["group"] != "teenager") | (frame["scenario"] == frame["scenario"].min())
    pairs = samaritan_power.scenario_pairs(frame[keep])  # the planted group readable in one scenario only
    assert len(pairs[("en", "teenager")]) == 1
    # with replacement, 16 draws of 2 scenarios repeat that one about 8 times: "every difference -25", p 0.008
    assert samaritan_power.detection_rate(pairs, "en", "teenager", 16, studies=10) == (0.0, 0.0)
