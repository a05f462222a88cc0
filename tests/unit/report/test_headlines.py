"""Headline measures of the overview: the right test, the right pairs, Holm over the probe's tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.contingency_tables import mcnemar

from biasatlas.report.headlines import contact_headline, samaritan_headline


def _contact(pairs: list[tuple[float, float]], model: str = "m", language: str = "en") -> pd.DataFrame:
    rows = []
    for i, (none, positive) in enumerate(pairs):
        for contact, biased in (("none", none), ("positive", positive), ("negative", 1.0)):
            rows.append({"model": model, "mode": "generate", "language": language, "set_id": f"s{i}",
                         "sample_index": 0, "contact": contact, "biased": biased})
    return pd.DataFrame(rows)


def test_contact_headline_is_the_paired_change_under_positive_contact() -> None:
    # 10 sets biased under no contact only, 2 under positive only, 8 both, 20 neither; 3 unreadable pairs
    pairs = [(1.0, 0.0)] * 10 + [(0.0, 1.0)] * 2 + [(1.0, 1.0)] * 8 + [(0.0, 0.0)] * 20 + [(np.nan, 1.0)] * 3
    table = contact_headline(_contact(pairs))
    row = table.iloc[0]
    assert row["n"] == 40  # the unreadable pairs are left out
    assert row["estimate"] == pytest.approx(100 * (2 - 10) / 40)
    assert row["p"] == pytest.approx(mcnemar(np.array([[8, 10], [2, 20]]), exact=True).pvalue)
    assert row["ci_low"] < row["estimate"] < row["ci_high"]


def test_contact_headline_adjusts_over_every_cell_with_holm() -> None:
    frames = [_contact([(1.0, 0.0)] * 12 + [(0.0, 0.0)] * 10, language=lang) for lang in ("en", "de", "is")]
    table = contact_headline(pd.concat(frames, ignore_index=True))
    assert len(table) == 3
    p = sorted(table["p"])
    # equal raw p: Holm multiplies the smallest by 3 (capped at 1), then keeps the order
    assert table["p_adj"].min() == pytest.approx(min(1.0, 3 * p[0]))
    assert table["significant"].all()


def test_contact_headline_needs_both_framings() -> None:
    frame = _contact([(1.0, 0.0)] * 5)
    assert contact_headline(frame[frame["contact"] != "positive"]).empty


def _samaritan(gaps: dict[str, float], cells: int = 12, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(cells):
        base = 60 + rng.normal(0, 5)
        rows.append({"model": "m", "language": "en", "scenario": f"sc{s}", "rephrasing": 0, "group": "control",
                     "is_control": True, "rating": base})
        for group, gap in gaps.items():
            rows.append({"model": "m", "language": "en", "scenario": f"sc{s}", "rephrasing": 0, "group": group,
                         "is_control": False, "rating": base + gap + rng.normal(0, 1)})
    return pd.DataFrame(rows)


def test_samaritan_headline_names_the_largest_gap_and_counts_the_groups_that_differ() -> None:
    table = samaritan_headline(_samaritan({"women": -15.0, "men": 0.0, "elderly": 6.0}))
    row = table.iloc[0]
    assert "women" in row["measure"] and "2 of 3 groups differ" in row["measure"]
    assert row["estimate"] == pytest.approx(-15.0, abs=1.0)
    assert row["n"] == 12 and row["significant"]


def test_samaritan_headline_pairs_only_cells_both_sides_have() -> None:
    frame = _samaritan({"women": -15.0})
    frame.loc[(frame["group"] == "women") & (frame["scenario"].isin(["sc0", "sc1"])), "rating"] = np.nan
    assert samaritan_headline(frame).iloc[0]["n"] == 10


def test_runs_table_lists_an_interrupted_run_without_totals(tmp_path: Path) -> None:
    from biasatlas.report.metadata import runs_table
    from biasatlas.store import Store

    with Store(tmp_path) as store:
        store.start_run("contact", "fake:m", {"settings": {"mode": "choice"}, "display_name": "M"}, "0")
        table = runs_table(store)
    assert table.iloc[0]["model"] == "M" and table.iloc[0]["model id"] == "fake:m"
    # no process holds the study's writer lock: a run that never ended was interrupted (issue 24)
    # its totals are counted from its recorded plan: none recorded, 0 planned
    assert table.iloc[0]["status"] == "interrupted" and table.iloc[0]["planned"] == 0


def test_contact_interval_stays_within_100_points_on_small_n() -> None:
    # 3 sets: all biased under no contact, none under positive (a Wald interval goes past +-100 here)
    table = contact_headline(_contact([(1.0, 0.0)] * 3))
    row = table.iloc[0]
    assert row["estimate"] == pytest.approx(-100.0)
    assert -100.0 <= row["ci_low"] <= row["estimate"] <= row["ci_high"] <= 100.0
    assert row["ci_high"] > row["ci_low"]
