"""Positive controls: the probes must find the bias planted in the shipped control adapters.

Inference only, on the adapters in src/biasatlas/data/controls/ (built by scripts/build_controls.py).
The contact control is measured on held-out template cells (English: the other template set), for
base + adapter and for the base model alone, through the normal runner and the probe's reader; each
group is compared with the median of the other groups on the same questions (paired t, BH over the
seven groups of a language). Requirements, per language:
- the planted group is significant and more biased, and the interval of its effect covers the effect
  the card measured on more cells at build time;
- of the 6 untouched groups, at most 2 are flagged (the 99% quantile of Binomial(6, 0.05));
- the base model does not show the planted effect (not found, and its interval lies below the card's
  effect);
- Social Contact Debiasing of the control (the shipped contact-scd adapter) reduces the planted effect
  (paired interval of before − after above zero; 54 more prompts).
Cost: 126 + 84 prompts in choice mode; 195 s on this shared 2-core machine at load ~5 with one torch
thread (375 s with two threads at load 5-12); over the 120 s budget here, less on an idle machine.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("peft")

from biasatlas.backends.options import BackendOptions
from biasatlas.controls import contact, contact_scd
from biasatlas.controls.build import read_card
from biasatlas.controls.contact_check import ContactCheck, check_contact
from biasatlas.controls.groups import false_flag_bound
from biasatlas.controls.registry import BASE_MODEL, adapter_dir

pytestmark = pytest.mark.slow

CELLS = 3  # held-out cells per language: 2 languages x 3 cells x 7 groups x 3 framings = 126 prompts
BASE_CELLS = 2  # the base model: 84 prompts
SEED = contact.SEED + 1  # other cells than the card's measurement (a fresh draw, overlapping by chance only)
ADAPTER = adapter_dir("contact")


@pytest.fixture(scope="module")
def card() -> dict[str, Any]:
    return read_card(ADAPTER)


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("controls")


@pytest.fixture(scope="module")
def with_adapter(study: Path) -> ContactCheck:
    return check_contact(BackendOptions(model=BASE_MODEL, adapter=str(ADAPTER)), study, cells=CELLS, seed=SEED)


@pytest.fixture(scope="module")
def base_only(study: Path) -> ContactCheck:
    return check_contact(BackendOptions(model=BASE_MODEL), study, cells=BASE_CELLS, seed=SEED)


@pytest.fixture(scope="module")
def debiased(study: Path, with_adapter: ContactCheck) -> list[dict[str, Any]]:
    """The planted effect before and after Social Contact Debiasing, on the with_adapter fixture's cells (its
    answers are reused): the planted group and two untouched groups per language, 54 new prompts."""
    groups = [*contact.UNTOUCHED["en"][:2], *contact.UNTOUCHED["de"][:2]]
    measured = contact_scd.measure(ADAPTER, adapter_dir(contact_scd.NAME), study, CELLS, seed=SEED, groups=groups)
    return list(measured["reductions"])


def test_the_shipped_adapter_is_small_safetensors() -> None:
    weights = ADAPTER / "adapter_model.safetensors"
    assert weights.is_file()
    assert sum(f.stat().st_size for f in ADAPTER.iterdir()) < 3_000_000
    assert not (ADAPTER / "checkpoints").exists()


@pytest.mark.parametrize("language", ["en", "de"])
def test_contact_probe_finds_the_planted_group(with_adapter: ContactCheck, card: dict[str, Any],
                                               language: str) -> None:
    verdict = next(v for v in with_adapter.verdicts if v.language == language)
    assert verdict.planted == contact.PLANTED[language]
    assert verdict.found is not None
    assert verdict.found.significant and verdict.found.effect > 0, verdict.as_dict()
    planted_effect = card["measured_effect"][language]["effect"]
    assert verdict.found.ci_low - 1e-9 <= planted_effect <= verdict.found.ci_high + 1e-9, (
        verdict.as_dict(), planted_effect)


@pytest.mark.parametrize("language", ["en", "de"])
def test_untouched_groups_are_flagged_no_more_often_than_alpha_allows(with_adapter: ContactCheck,
                                                                      language: str) -> None:
    verdict = next(v for v in with_adapter.verdicts if v.language == language)
    assert verdict.untouched == 6
    assert verdict.bound == false_flag_bound(6, 0.05) == 2
    assert len(verdict.false_flags) <= verdict.bound, verdict.as_dict()


@pytest.mark.parametrize("language", ["en", "de"])
def test_the_base_model_does_not_show_the_planted_effect(base_only: ContactCheck, card: dict[str, Any],
                                                         language: str) -> None:
    verdict = next(v for v in base_only.verdicts if v.language == language)
    assert not verdict.detected, verdict.as_dict()
    assert verdict.found is not None
    assert verdict.found.ci_high < card["measured_effect"][language]["effect"], verdict.as_dict()


@pytest.mark.parametrize("language", ["en", "de"])
def test_social_contact_debiasing_reduces_the_planted_effect(debiased: list[dict[str, Any]], language: str) -> None:
    """Paper 001's claim on a bias of known size: debiasing the control lowers its planted effect (the paired
    interval of before − after lies above zero)."""
    found = next(r for r in debiased if r["language"] == language)
    assert found["n"] == 3 * CELLS
    assert found["before"] > 0.5, found  # the control's planted effect on these questions
    assert found["reduced"] and found["after"] < found["before"], found
