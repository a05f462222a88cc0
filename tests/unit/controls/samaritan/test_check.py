"""The Samaritan control's judge on planted ratings: the probe's own analysis, read as planted vs found.

No model: ratings are planted into an outcomes frame shaped like the probe's reader output (one row per
prompt), then judged. Known truths: a -25 group among untouched ones is found and nothing else is; a
group planted the other way (+25) is flagged but not "found"; no planted effect finds nothing.
"""

from __future__ import annotations

import gc
import random
from collections.abc import Iterator

import pandas as pd
import pytest

from biasatlas.controls.samaritan import data as samaritan
from biasatlas.controls.samaritan.check import SamaritanVerdict, group_rows, judge


@pytest.fixture(scope="module", autouse=True)
def _frozen_heap() -> Iterator[None]:
    """statsmodels' multipletests runs gc.collect() on every call (0.2-0.6 s here with the prompts loaded);
    objects made before the tests need no collecting."""
    samaritan.measurement_prompts(1)  # builds and caches the prompts
    gc.freeze()
    yield
    gc.unfreeze()


def _outcomes(shifts: dict[str, float], scenarios: int = 8, noise: float = 3.0, unreadable: float = 0.0,
              seed: int = 0) -> tuple[pd.DataFrame, samaritan.Measurement]:
    m = samaritan.measurement_prompts(scenarios)
    rng = random.Random(seed)
    rows = []
    for p in m.prompts:
        meta = p.meta
        rating = 50 + 3 * (int(meta["scenario"][-2:], 36) % 9) + shifts.get(meta["group"], 0.0) + rng.gauss(0, noise)
        rows.append({"prompt_id": p.id, "model": "local:fake", "language": p.language, "temperature": 0.0,
                     "max_tokens": samaritan.MAX_TOKENS, "scenario": meta["scenario"], "rephrasing": meta["rephrasing"],
                     "category": meta["category"], "group": meta["group"], "phrasing": meta["phrasing"],
                     "sample_index": 0, "status": "answered",
                     "rating": float("nan") if rng.random() < unreadable else rating})
    return pd.DataFrame(rows), m


def _by_language(verdicts: list[SamaritanVerdict]) -> dict[str, SamaritanVerdict]:
    return {v.language: v for v in verdicts}


def test_a_planted_drop_of_25_is_found_with_an_interval_covering_it_and_no_untouched_group_flagged() -> None:
    frame, m = _outcomes({"teenager": -25.0})
    rows = group_rows(frame)
    verdicts = _by_language(judge(rows, m, outcomes=frame))
    for language in ("en", "de"):
        v = verdicts[language]
        assert v.detected and v.clean and not v.false_flags, v.as_dict()
        assert v.found is not None and v.found["ci_low"] < -25 < v.found["ci_high"]
        assert v.untouched == 3 and v.bound == 1 and v.answers == v.readable == 8 * 8


def test_a_rise_is_flagged_but_not_the_planted_direction() -> None:
    frame, m = _outcomes({"teenager": +25.0})
    verdicts = _by_language(judge(group_rows(frame), m))
    assert not verdicts["en"].detected and verdicts["en"].found and verdicts["en"].found["significant"] is True


def test_no_planted_effect_finds_nothing() -> None:
    frame, m = _outcomes({})
    verdicts = _by_language(judge(group_rows(frame), m))
    assert not any(v.detected for v in verdicts.values())
    assert all(v.clean for v in verdicts.values())


def test_an_untouched_group_that_moves_is_a_false_flag_and_two_exceed_the_bound() -> None:
    frame, m = _outcomes({"teenager": -25.0, "senior": -20.0, "middle-aged": 20.0})
    v = _by_language(judge(group_rows(frame), m))["de"]
    assert v.detected and sorted(v.false_flags) == ["middle-aged", "senior"] and not v.clean


@pytest.mark.parametrize("scenarios", [1])
def test_too_few_scenarios_are_untested_not_found(scenarios: int) -> None:
    frame, m = _outcomes({"teenager": -25.0}, scenarios=scenarios)
    verdicts = judge(group_rows(frame), m)
    assert not any(v.detected for v in verdicts)
    assert all(v.found is not None and v.found["verdict"] == "untested" for v in verdicts)


def test_unreadable_answers_are_counted() -> None:
    frame, m = _outcomes({"teenager": -25.0}, unreadable=0.25, seed=3)
    v = _by_language(judge(group_rows(frame), m, outcomes=frame))["en"]
    assert v.answers == 64 and 30 < v.readable < 64
