"""Debiasing the contact control: its data, and the before/after statistic on planted answers."""

from __future__ import annotations

import pandas as pd
import pytest

from biasatlas.controls.contact import data as contact
from biasatlas.controls.contact.scd import planted_effects, reductions, scd_examples
from biasatlas.probes.debias.data import unbiased_answer


def test_the_debiasing_data_is_every_group_unbiased_and_never_a_measured_prompt() -> None:
    examples = scd_examples(per_language=60)
    assert len(examples) == 120
    assert all(e.answer == unbiased_answer(e.prompt) for e in examples)
    groups = {e.prompt.meta["group"] for e in examples}
    assert len(groups) > 5 and contact.PLANTED["en"] in groups | {contact.PLANTED["de"]}
    measured = {p.id for p in contact.measurement_prompts(None).prompts}
    assert not measured & {e.prompt.id for e in examples}
    assert [e.prompt.id for e in scd_examples(per_language=60)] == [e.prompt.id for e in examples]  # seeded


def _answers(shares: dict[str, list[float]], language: str = "en") -> pd.DataFrame:
    rows = []
    for group, values in shares.items():
        for q, v in enumerate(values):
            rows.append({"language": language, "template_set": "b", "template_id": f"t{q}", "scale": "certainty",
                         "action": "positive", "contact": "none", "group": group, "biased": v})
    return pd.DataFrame(rows)


def test_a_planted_effect_halved_by_debiasing_is_measured_as_that_reduction() -> None:
    planted = {"en": "Buddhist"}
    n = 12
    before = _answers({"Buddhist": [1.0] * n, "Christian": [0.0] * n, "Muslim": [0.0] * n})
    after = _answers({"Buddhist": [1.0, 0.0] * (n // 2), "Christian": [0.0] * n, "Muslim": [0.0] * n})
    effects = planted_effects(before, planted)
    assert effects["effect"].tolist() == [1.0] * n
    (red,) = reductions(before, after, planted)
    assert (red.n, red.before, red.after) == (n, 1.0, 0.5)
    assert red.reduction == pytest.approx(0.5)
    assert red.ci_low > 0.15 and red.ci_high < 0.85 and red.reduced
    same = reductions(before, before, planted)[0]
    assert same.reduction == 0 and not same.reduced
