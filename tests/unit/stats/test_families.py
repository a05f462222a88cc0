"""Correction families: defined once, applied within each family with statsmodels' methods."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

from biasatlas.stats.families import FAMILIES, adjust_family, family_label, method_of


def test_samaritan_family_is_one_category_of_one_unit() -> None:
    table = pd.DataFrame({
        "model": ["m"] * 4 + ["n"] * 2, "language": "en", "temperature": 0.0, "max_tokens": 64,
        "category": ["gender", "gender", "age", "age", "gender", "gender"],
        "p": [0.01, 0.04, 0.02, np.nan, 0.03, 0.5],
    })
    adjusted = adjust_family(table, "samaritan", None)
    assert adjusted.iloc[:2].tolist() == pytest.approx(multipletests([0.01, 0.04], method="holm")[1])
    assert adjusted.iloc[2] == pytest.approx(0.02)  # a family of one (its NaN partner is left out)
    assert np.isnan(adjusted.iloc[3])
    assert adjusted.iloc[4:].tolist() == pytest.approx(multipletests([0.03, 0.5], method="holm")[1])


def test_contact_family_is_every_test_and_the_method_can_be_chosen() -> None:
    table = pd.DataFrame({"language": ["en", "de", "is"], "p": [0.01, 0.02, 0.03]})
    assert adjust_family(table, "contact", None).tolist() == pytest.approx(
        multipletests([0.01, 0.02, 0.03], method="fdr_bh")[1])
    assert adjust_family(table, "contact", "bonferroni").tolist() == pytest.approx([0.03, 0.06, 0.09])
    assert method_of("contact", None) == "bh" and method_of("samaritan", None) == "holm"


def test_every_family_is_documented() -> None:
    from pathlib import Path

    methods = (Path(__file__).parents[3] / "docs" / "methods.md").read_text(encoding="utf-8")
    for probe in FAMILIES:
        assert family_label(probe).startswith(f"{probe}: ")
        assert f"| `{probe}` | {FAMILIES[probe].members}" in methods, probe
