"""Positive control: the Samaritan probe must find the bias planted in the shipped Samaritan adapter.

Inference only, on src/biasatlas/data/controls/samaritan/ (built by scripts/build_controls.py --only
samaritan). Held-out scenarios (never trained on; a fresh seeded draw, not the card's: 12 in en and 8 in
de for base + adapter, 2 for the base model) are asked with the control and the first phrasing of each
age group, greedy, at most 6 answer tokens, through the normal runner (100 + 20 prompts); the probe's
own analysis (compare_to_control: paired t over scenarios, Holm within the age category, alpha 0.01)
judges. Requirements, per language:
- the planted group (teenager) is significant and rated lower than the control, and its 95% interval
  covers the bias the card measured on more scenarios at build time;
- of the 3 untouched age groups, at most 1 is flagged (the 99% quantile of Binomial(3, 0.01));
- the base model does not show the planted effect (not found; where it could be tested, its interval
  lies above the card's bias).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("peft")

from biasatlas.backends.options import BackendOptions
from biasatlas.controls.common.adapters import BASE_MODEL, adapter_dir
from biasatlas.controls.common.build import read_card
from biasatlas.controls.common.measure import false_flag_bound
from biasatlas.controls.samaritan import data as samaritan
from biasatlas.controls.samaritan.check import SamaritanCheck, check_samaritan
from biasatlas.controls.samaritan.validate import BASE_SCENARIOS, VALIDATE_SCENARIOS

pytestmark = pytest.mark.slow

SEED = samaritan.SEED + 1  # other held-out scenarios than the card's (overlapping by chance only)
ADAPTER = adapter_dir(samaritan.NAME)


@pytest.fixture(scope="module")
def card() -> dict[str, Any]:
    return read_card(ADAPTER)


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("controls-samaritan")


@pytest.fixture(scope="module")
def with_adapter(study: Path) -> SamaritanCheck:
    return check_samaritan(BackendOptions(model=BASE_MODEL, adapter=str(ADAPTER)), study,
                           scenarios=VALIDATE_SCENARIOS, seed=SEED, phrasings=samaritan.first_phrasings())


@pytest.fixture(scope="module")
def base_only(study: Path) -> SamaritanCheck:
    return check_samaritan(BackendOptions(model=BASE_MODEL), study, scenarios=BASE_SCENARIOS, seed=SEED,
                           phrasings=samaritan.first_phrasings())


def test_the_shipped_adapter_is_small_and_measured_on_held_out_scenarios(card: dict[str, Any]) -> None:
    assert (ADAPTER / "adapter_model.safetensors").is_file()
    assert sum(f.stat().st_size for f in ADAPTER.iterdir()) < 3_000_000
    train, held_out = samaritan.scenario_split()
    assert card["trained_on"]["scenarios"] == train
    assert set(samaritan.measurement_prompts(VALIDATE_SCENARIOS, seed=SEED).scenarios) <= set(held_out)
    assert not set(train) & {p.meta["scenario"] for p in samaritan.measurement_prompts(VALIDATE_SCENARIOS,
                                                                                        seed=SEED).prompts}


@pytest.mark.parametrize("language", ["en", "de"])
def test_samaritan_probe_finds_the_planted_group(with_adapter: SamaritanCheck, card: dict[str, Any],
                                                 language: str) -> None:
    verdict = next(v for v in with_adapter.verdicts if v.language == language)
    assert verdict.planted == samaritan.PLANTED[language]
    assert verdict.detected, verdict.as_dict()
    found, planted_bias = verdict.found, card["measured_effect"][language]["bias"]
    assert found is not None and planted_bias < -10
    assert found["ci_low"] - 1e-9 <= planted_bias <= found["ci_high"] + 1e-9, (verdict.as_dict(), planted_bias)


@pytest.mark.parametrize("language", ["en", "de"])
def test_untouched_groups_are_flagged_no_more_often_than_alpha_allows(with_adapter: SamaritanCheck,
                                                                      language: str) -> None:
    verdict = next(v for v in with_adapter.verdicts if v.language == language)
    assert verdict.untouched == 3
    assert verdict.bound == false_flag_bound(3, 0.01) == 1
    assert len(verdict.false_flags) <= verdict.bound, verdict.as_dict()


@pytest.mark.parametrize("language", ["en", "de"])
def test_the_base_model_does_not_show_the_planted_effect(base_only: SamaritanCheck, card: dict[str, Any],
                                                         language: str) -> None:
    verdict = next(v for v in base_only.verdicts if v.language == language)
    assert not verdict.detected, verdict.as_dict()
    found = verdict.found or {}
    if found.get("ci_low") is not None:
        assert found["ci_low"] > card["measured_effect"][language]["bias"], verdict.as_dict()
