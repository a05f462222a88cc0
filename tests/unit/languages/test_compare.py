"""Across languages: planted truths are recovered (a group that differs, one that does not), and the
test holds its level under the null."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from biasatlas.languages.compare import METHOD, effects_by_language, language_differences

LANGS = ("fr", "es", "zh", "ko")


def _frame(rates: dict[str, dict[str, float]], n: int, seed: int, model: str = "m") -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [{"model": model, "descriptor": g, "language": lang, "biased": float(b)}
            for g, by_lang in rates.items() for lang, p in by_lang.items() for b in rng.random(n) < p]
    return pd.DataFrame(rows)


def test_a_planted_difference_is_found_and_an_equal_group_is_not() -> None:
    frame = _frame({"P_D001": dict.fromkeys(LANGS, 0.3),
                    "P_D002": {"fr": 0.1, "es": 0.1, "zh": 0.6, "ko": 0.6}}, n=300, seed=1)
    effects = effects_by_language(frame)
    assert len(effects) == 8 and (effects["n"] == 300).all()
    d2 = effects[effects["group"] == "P_D002"].set_index("language")
    assert d2.loc["fr", "ci_low"] < 0.1 < d2.loc["fr", "ci_high"]
    assert d2.loc["zh", "ci_low"] < 0.6 < d2.loc["zh", "ci_high"]
    tests = language_differences(frame).set_index("group")
    assert tests.loc["P_D002", "differs"] and tests.loc["P_D002", "p_adj"] < 1e-10
    assert not tests.loc["P_D001", "differs"] and tests.loc["P_D001", "dof"] == 3
    assert tests.attrs["method"] == METHOD and "chi-square" in METHOD


def test_level_under_the_null() -> None:
    # 200 groups with the same share in every language: about 5% raw p-values below 0.05
    frame = _frame({f"g{i}": dict.fromkeys(LANGS, 0.4) for i in range(200)}, n=60, seed=7)
    tests = language_differences(frame)
    share = float((tests["p"] < 0.05).mean())
    assert 0.01 <= share <= 0.10
    assert tests["differs"].sum() <= 2  # after Benjamini-Hochberg


def test_groups_asked_in_one_language_and_constant_shares() -> None:
    frame = pd.DataFrame({"descriptor": ["a", "a", "b", "b", "b", "b"],
                          "language": ["fr", "fr", "fr", "fr", "zh", "zh"],
                          "biased": [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]})
    tests = language_differences(frame)
    assert list(tests["group"]) == ["b"] and tests.loc[0, "p"] == 1.0 and tests.loc[0, "model"] == "all"
    with pytest.raises(ValueError, match="lacks"):
        language_differences(frame.drop(columns="biased"))
