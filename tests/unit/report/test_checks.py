"""The validity section: one table with a flag per cell, no warning line repeated per cell (issue 28)."""

from __future__ import annotations

import pandas as pd

from biasatlas.report.checks import validity_section


def _validity(rows: list[tuple[str, str, int, float]]) -> pd.DataFrame:
    return pd.DataFrame([{"model": m, "language": lang, "answers": n, "readable": round(n * (100 - u) / 100),
                          "unreadable_pct": u, "readable_pct": 100 - u} for m, lang, n, u in rows])


def test_one_table_with_a_flag_column_instead_of_a_warning_per_cell() -> None:
    contact = _validity([("a", "de", 60, 15.0), ("a", "en", 30, 23.3), ("b", "de", 60, 40.0), ("b", "en", 30, 20.0)])
    samaritan = _validity([("a", "en", 20, 35.0), ("b", "en", 0, 0.0)])
    section = validity_section({"contact": contact, "samaritan": samaritan},
                               {"contact": "Contact", "samaritan": "Samaritan"})
    assert section is not None
    page = "".join(section.blocks)
    assert "Warning:" not in page
    assert page.count("<table") == 1
    table = section.files[0].frame
    assert list(table.columns[:3]) == ["Probe", "Model", "Language"]
    flags = {(p, m, lang): f for p, m, lang, f in table[["Probe", "Model", "Language", "Flag"]].itertuples(index=False)}
    unreadable = "over 20% unreadable"
    assert flags == {("Contact", "a", "de"): "", ("Contact", "a", "en"): unreadable,
                     ("Contact", "b", "de"): unreadable, ("Contact", "b", "en"): "",  # exactly 20%: not over
                     ("Samaritan", "a", "en"): unreadable, ("Samaritan", "b", "en"): ""}
    # one sentence says how many cells are flagged and what a flag means
    assert "3 of 6 cells" in page


def test_a_flags_column_of_the_validity_frames_is_shown_as_it_is() -> None:
    contact = _validity([("a", "de", 60, 5.0)]).assign(flags=[["few answers", "over 20% cut at the limit"]])
    section = validity_section({"contact": contact}, {"contact": "Contact"})
    assert section is not None
    assert section.files[0].frame["Flag"].tolist() == ["few answers; over 20% cut at the limit"]


def test_no_validity_rows_no_section() -> None:
    assert validity_section({"contact": pd.DataFrame()}, {"contact": "Contact"}) is None
