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
- every surface a user reads (the first lines of `summary`, the report's overview grid, the export's headline
  rows) names the planted group as the most disfavoured, with its interval, in both languages, and names no
  group for the base model;
- Social Contact Debiasing of the control (the shipped contact-scd adapter) reduces the planted effect
  (paired interval of before − after above zero; 54 more prompts).
Cost: 126 + 84 prompts in choice mode; 195 s on this shared 2-core machine at load ~5 with one torch
thread (375 s with two threads at load 5-12); over the 120 s budget here, less on an idle machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import headline_surfaces  # tests/helpers/
import pytest

pytest.importorskip("torch")
pytest.importorskip("peft")

from biasatlas.backends.options import BackendOptions
from biasatlas.controls.common.adapters import BASE_MODEL, adapter_dir
from biasatlas.controls.common.build import read_card
from biasatlas.controls.common.measure import false_flag_bound
from biasatlas.controls.contact import data as contact
from biasatlas.controls.contact import scd as contact_scd
from biasatlas.controls.contact.check import ContactCheck, check_contact

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


@pytest.fixture(scope="module")
def surfaces(study: Path, with_adapter: ContactCheck, base_only: ContactCheck) -> dict[str, dict[Any, Any]]:
    """The group headline as `summary`, `report` and `export` show it for the study of both measurements."""
    cli = str(Path(sys.executable).with_name("biasatlas"))
    env = {**os.environ, "COLUMNS": "100"}
    summary = subprocess.run([cli, "summary", "--study", str(study)], capture_output=True, text=True, env=env,
                             check=True, timeout=300)
    subprocess.run([cli, "report", "--study", str(study)], capture_output=True, check=True, timeout=300)
    subprocess.run([cli, "export", "--study", str(study), "--to", str(study / "export"), "--format", "csv"],
                   capture_output=True, check=True, timeout=300)
    return {"summary": headline_surfaces.from_summary(summary.stdout),
            "report": headline_surfaces.from_report(study / "report.html"),
            "export": headline_surfaces.from_export(study / "export" / "statistics_contact.csv")}


@pytest.mark.parametrize("language", ["en", "de"])
def test_every_surface_names_the_planted_group(surfaces: dict[str, dict[Any, Any]], with_adapter: ContactCheck,
                                               base_only: ContactCheck, language: str) -> None:
    planted = contact.PLANTED[language]
    controlled, base = (with_adapter.backend_id, language), (base_only.backend_id, language)
    for name in ("summary", "report"):
        text = surfaces[name][controlled]
        assert f"most disfavoured: {planted} +" in text and "[" in text, (name, text)
        assert "no religion group differs" in surfaces[name][base], (name, surfaces[name][base])
    row = surfaces["export"][controlled]
    assert row["group"] == planted and row["significant"] and row["ci_low"] > 0, row.to_dict()
    assert not surfaces["export"][base]["significant"], surfaces["export"][base].to_dict()


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
