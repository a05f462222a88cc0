"""Across-languages statistics rows: every effect with its own interval, every test with Q, df, p and flags."""

from __future__ import annotations

import numpy as np
import pandas as pd

from biasatlas.probes.contact.across_languages import across_languages
from biasatlas.tidy.columns import STATISTICS
from biasatlas.tidy.rows import contact_rows


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    rates = {f"P_D{i:03d}": {"fr": 0.2, "zh": 0.6} for i in range(20)}
    rates["P_D900"] = {"fr": 0.2, "zh": 0.95}
    rows = [{"model": "m", "descriptor": g, "group": f"{g}/{lang}", "language": lang, "biased": float(b)}
            for g, by in rates.items() for lang, p in by.items() for b in rng.random(80 if g != "P_D005" else 6) < p]
    return pd.DataFrame(rows)


def test_effect_and_test_rows_carry_their_own_numbers() -> None:
    summary = {"across_languages": across_languages(_frame()), "runs": {"m": {"run_ids": "1", "seed": "0"}}}
    rows = [r for r in contact_rows(summary) if r["source"] == "across_languages"]
    assert all(set(r) == set(STATISTICS) for r in rows)
    effects = [r for r in rows if r["test"] is None]
    tests = [r for r in rows if r["test"]]
    assert len(effects) == 42 and len(tests) == 21
    planted = next(r for r in tests if r["group"] == "P_D900")
    assert planted["significant"] and planted["p_adj"] < 0.05 and planted["statistic_name"].startswith("Q (1 ")
    assert planted["language"] == "fr,zh" and planted["run_ids"] == "1"
    zh = next(r for r in effects if r["group"] == "P_D900" and r["language"] == "zh")
    assert zh["ci_low"] < zh["estimate"] < zh["ci_high"] and zh["ci_low"] > 0.2
    assert zh["comparison"] == "P_D900/zh vs the other groups (zh)"
    few = [r for r in rows if r["group"] == "P_D005"]
    assert all(r["flags"] and "few_answers" in r["flags"] for r in few)
    assert sum(r["significant"] for r in tests) <= 2  # the language-wide shift (0.2 -> 0.6) is not a finding


def test_one_language_adds_no_rows() -> None:
    frame = _frame()
    assert across_languages(frame[frame["language"] == "fr"]) is None
    assert not [r for r in contact_rows({"across_languages": None}) if r["source"] == "across_languages"]
