"""Runs that ask nothing (a reading audit's score, a recorded reading) are never reported as unfinished."""

from __future__ import annotations

from pathlib import Path

from biasatlas.cli.pending import unfinished_runs
from biasatlas.readers.judge import record_reading
from biasatlas.reading_audit import store_score
from biasatlas.store import Store


def test_a_stored_score_and_a_recorded_reading_are_not_unfinished(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        store_score(store, {"n": 0}, "labels.csv", "0" * 64)
        record_reading(store, "contact", "rules", None)
        assert unfinished_runs(store) == []
