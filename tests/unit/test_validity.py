"""The validity table counts what a reader could read, per model x language, and warns above 20%."""

from __future__ import annotations

import pandas as pd

from biasatlas.validity import validity_table, warnings


def _frame() -> pd.DataFrame:
    rows = []
    # model a, de: 10 answers, 3 unreadable (1 refusal, 1 hedge, 1 other language), one cut at the limit
    for i in range(7):
        rows.append(("a", "de", "answered", "yes", None, "stop" if i else "length"))
    rows += [("a", "de", "answered", None, "refusal", "stop"), ("a", "de", "answered", None, "hedge", "stop"),
             ("a", "de", "answered", None, "answer in another language (en)", "stop")]
    rows += [("a", "de", "failed", None, None, None)]
    # model a, en: all readable
    rows += [("a", "en", "answered", "no", None, "stop")] * 5
    return pd.DataFrame(rows, columns=["model", "language", "status", "answer", "reason", "finish_reason"])


def test_counts_per_cell() -> None:
    table = validity_table(_frame(), "answer").set_index(["model", "language"])
    de = table.loc[("a", "de")]
    assert de["answers"] == 10 and de["readable"] == 7 and de["failed"] == 1
    assert de["refusals"] == 1 and de["hedges"] == 1 and de["other_language"] == 1
    assert de["cut_at_limit"] == 1
    assert de["readable_pct"] == 70.0
    assert table.loc[("a", "en")]["readable_pct"] == 100.0


def test_warning_only_above_twenty_percent() -> None:
    lines = warnings(validity_table(_frame(), "answer"), "contact")
    assert len(lines) == 1
    assert "30.0% of 10 answers unreadable" in lines[0] and "language de" in lines[0]


def test_cut_answers_not_read_are_unreadable_with_reason_cut() -> None:
    rows = [("a", "en", "answered", 70.0, None, "length"), ("a", "en", "answered", None, "cut", "length"),
            ("a", "en", "answered", None, "cut", "length"), ("a", "en", "answered", None, "refusal", "length"),
            ("a", "en", "answered", 40.0, None, "stop")]
    frame = pd.DataFrame(rows, columns=["model", "language", "status", "rating", "parse_reason", "finish_reason"])
    row = validity_table(frame, "rating").set_index(["model", "language"]).loc[("a", "en")]
    assert row["cut_at_limit"] == 4 and row["cut_unread"] == 2 and row["refusals"] == 1
    assert row["readable"] == 2 and row["unreadable_pct"] == 60.0
