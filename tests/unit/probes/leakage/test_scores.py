"""ILPS cells from stored masked-model log-probabilities: each group against the baseline of its agreement
class (plural Russian templates: one baseline for every group; older studies: the gender)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from biasatlas.probes.leakage.plan import build_prompts
from biasatlas.probes.leakage.scores import ilps_cells, matrix


def _frame(language: str, groups: list[str], logp: dict[str, float], *, drop_agreement: bool = False) -> pd.DataFrame:
    """A study frame of answered ILPS prompts whose option log-probability is ``logp[group]`` for every trait."""
    rows = []
    for prompt in build_prompts([language], method="ilps", group_names=groups):
        meta = dict(prompt.meta)
        if drop_agreement:
            meta.pop("agreement")
        value = logp[meta["group"]]
        rows.append({**meta, "model": "masked:m", "mode": "choice", "language": language, "status": "answered",
                     "options": prompt.options,
                     "info_json": json.dumps({"option_logprobs": dict.fromkeys(prompt.options, value)})})
    return pd.DataFrame(rows)


def test_plural_russian_groups_share_one_baseline() -> None:
    frame = _frame("ru", ["woman", "man"], {"(neutral)": -5.0, "woman": -3.0, "man": -4.0})
    assert set(frame["agreement"]) == {"pl"}
    m = matrix(ilps_cells(frame), "masked:m [ilps-pll]", "ru")
    assert m["woman"].tolist() == pytest.approx([2.0] * 32) and m["man"].tolist() == pytest.approx([1.0] * 32)


def test_studies_without_the_agreement_field_pair_by_gender() -> None:
    frame = _frame("hi", ["woman", "man"], {"(neutral)": -5.0, "woman": -3.0, "man": -4.5}, drop_agreement=True)
    m = matrix(ilps_cells(frame), "masked:m [ilps-pll]", "hi")
    assert m["woman"].tolist() == pytest.approx([2.0] * 32) and m["man"].tolist() == pytest.approx([0.5] * 32)
