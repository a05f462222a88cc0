"""Samaritan across-languages statistics rows: each language's gap with its own interval, each Q test with its
df, p, BH-adjusted p, I² and flags; a test that could not be made is not called significant or not."""

from __future__ import annotations

import numpy as np
import pandas as pd

from biasatlas.probes.samaritan.across_languages import language_differences
from biasatlas.tidy.columns import STATISTICS
from biasatlas.tidy.rows import samaritan_rows


def _block() -> dict[str, object]:
    """Three groups in fr and zh: 'senior' 9 points lower in zh, 'male' the same, 'female' with 1 zh scenario."""
    rows = []
    for group, zh_gap, zh_n in (("senior", -9.0, 40), ("male", 0.0, 40), ("female", 0.0, 1)):
        for language, gap, n in (("fr", 0.0, 40), ("zh", zh_gap, zh_n)):
            rows.append({"model": "m", "temperature": 0.0, "max_tokens": 64, "category": "x", "group": group,
                         "language": language, "phrasings": group.title(), "left_out": "", "n": n,
                         "effect": gap + 0.3, "ci_low": gap - 1.0 if n > 1 else np.nan,
                         "ci_high": gap + 1.6 if n > 1 else np.nan, "sd_diff": 3.0 if n > 1 else np.nan,
                         "only_rating": np.nan})
    effects = pd.DataFrame(rows)
    tests = language_differences(effects, alpha=0.01)
    records = [{k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in r.items()}
               for r in effects.to_dict(orient="records")]
    test_records = [{k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in r.items()}
                    for r in tests.to_dict(orient="records")]
    return {"method": "Q", "alpha": 0.01, "min_pairs": 30, "effects": records, "tests": test_records}


def test_effect_and_test_rows_carry_their_own_numbers() -> None:
    summary = {"settings": {"alpha": 0.01}, "groups": [], "across_languages": _block(),
               "runs": {"m": {"run_ids": "7", "seed": "0"}}}
    rows = [r for r in samaritan_rows(summary) if r["source"] == "across_languages"]
    assert all(set(r) == set(STATISTICS) and r["probe"] == "samaritan" for r in rows)
    effects, tests = [r for r in rows if r["test"] is None], {r["group"]: r for r in rows if r["test"]}
    assert len(effects) == 6 and set(tests) == {"senior", "male", "female"}
    zh = next(r for r in effects if r["group"] == "senior" and r["language"] == "zh")
    assert (zh["estimate"], zh["ci_low"], zh["ci_high"], zh["n"]) == (-8.7, -10.0, -7.4, 40)
    assert zh["ci_method"] == "Student t" and "rating points" in zh["estimand"] and zh["run_ids"] == "7"
    assert zh["flags"] is None and zh["temperature"] == 0.0 and zh["max_tokens"] == 64
    senior = tests["senior"]
    assert senior["significant"] and senior["p_adj"] < 0.01 and senior["statistic_name"] == "Q (1 degrees of freedom)"
    assert senior["language"] == "fr,zh" and senior["effect_size_name"].startswith("I²")
    assert senior["family"] == "across languages: the groups of one model x decoding"
    assert tests["male"]["significant"] is False and tests["male"]["p"] > 0.5
    female = tests["female"]  # one scenario in zh: no variance, no test
    assert female["p"] is None and female["significant"] is None and "not_tested" in female["flags"]
    few = next(r for r in effects if r["group"] == "female" and r["language"] == "zh")
    assert few["flags"] == "few_pairs" and few["ci_low"] is None and few["ci_level"] is None


def test_one_language_adds_no_rows() -> None:
    assert not [r for r in samaritan_rows({"groups": [], "across_languages": None})
                if r["source"] == "across_languages"]
