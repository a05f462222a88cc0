"""schema.md says what the columns hold (issue 26: `model` is the display name in an audit, `model_id` had none)."""

from __future__ import annotations

from biasatlas.export.schema import describe
from biasatlas.tidy.columns import STATISTICS


def test_model_and_model_id_are_described_as_they_are_filled() -> None:
    assert "display name" in (describe("contact", "model") or "")
    model_id = describe("samaritan", "model_id") or ""
    assert "Backend id" in model_id and "display name" in model_id


def test_the_statistics_table_has_the_columns_issue_26_asks_for() -> None:
    for column in ("estimand", "ci_method", "headline", "family", "correction", "flags", "flag_notes", "min_units",
                   "discordant_b", "discordant_c", "sd_diff", "seed", "samples", "temperature", "run_ids",
                   "aggregation", "scale", "mode", "measure", "category", "group"):
        assert STATISTICS.get(column), column
