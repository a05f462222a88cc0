"""Issue 29 end to end: the contact and Samaritan probes in French and Chinese on the embedded model
(SmolLM2-135M), small plans (one model load); every answer is read or carries its reason."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from biasatlas.backends.local import LocalBackend
from biasatlas.probes.contact import probe as contact
from biasatlas.probes.samaritan import plan as samaritan_plan
from biasatlas.probes.samaritan.probe import PROBE as SAMARITAN
from biasatlas.records import GenerationSettings
from biasatlas.runner import run_plan
from biasatlas.store import Store

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def model() -> Iterator[LocalBackend]:
    backend = LocalBackend("smollm2")
    yield backend
    backend.close()


def test_contact_in_french_and_chinese(model: LocalBackend, tmp_path: Path) -> None:
    config = contact.ContactConfig(languages=["fr", "zh"], principles=["equal_status"], limit=6, seed=5)
    prompts = contact.build_prompts(config)
    assert {p.language for p in prompts} == {"fr", "zh"} and len(prompts) == 6
    for p in prompts:  # the MMHB form of the noun's agreement is in the prompt
        assert p.meta["descriptor_source"] == "mmhb" and p.meta["descriptor_form"] in p.messages[0].content
    store = Store(tmp_path)
    totals = run_plan(prompts, model, store, GenerationSettings(mode="choice", max_tokens=4), progress=False)
    assert (totals.planned, totals.new, totals.failed) == (6, 6, 0)
    out = contact.outcomes(store.frame(probe="contact"))
    assert set(out["language"]) == {"fr", "zh"} and set(out["decision"]) <= {"biased", "unbiased"}
    for probs, prompt_options in zip(out["option_probs"], out["options"], strict=True):
        assert set(probs) == set(prompt_options) and sum(probs.values()) == pytest.approx(1.0, abs=1e-6)
    summary = contact.summarise(store)
    assert sum(r["n"] for r in summary["by_contact"]) == 6
    # two languages: the across-languages block is there (groups in both languages get a test)
    block = summary["across_languages"]
    assert block is not None and "Cochran's Q" in block["method"]
    assert {r["language"] for r in block["effects"]} <= {"fr", "zh"}
    store.close()


def test_samaritan_in_french_and_chinese(model: LocalBackend, tmp_path: Path) -> None:
    prompts = [p for lang in ("fr", "zh")
               for p in samaritan_plan.build_prompts(["gender"], lang, n_scenarios=1, max_tokens=6)[:2]]
    assert len(prompts) == 4 and {p.meta["phrasing"] for p in prompts} == {"person", "Man"}
    store = Store(tmp_path)
    totals = run_plan(prompts, model, store, GenerationSettings(mode="generate", max_tokens=6), progress=False)
    assert (totals.new, totals.failed) == (4, 0)
    ratings = SAMARITAN.outcomes(store)
    assert set(ratings["language"]) == {"fr", "zh"} and (ratings["status"] == "answered").all()
    read = ratings["rating"].notna()
    assert ratings.loc[read, "rating"].between(1, 100).all()
    assert ratings.loc[~read, "parse_reason"].notna().all()
    store.close()
