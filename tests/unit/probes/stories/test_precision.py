"""Issue 25.3: p and q of the associations keep their full precision in JSON (and CSV)."""

from __future__ import annotations

import io
import json
from functools import lru_cache

import pandas as pd

from biasatlas.probes.stories.analysis import association_records, associations, per_model_records
from biasatlas.probes.stories.seeds import load_seeds
from biasatlas.stats.associations import AssociationConfig, AssociationResult

CONFIG = AssociationConfig(resamples=20_000, stages=(500, 4_000))


@lru_cache(maxsize=1)
def _result() -> AssociationResult:
    """Planted: senior -> retired in 15 of 20 stories, no other age retired (cell p 6.12e-14, q 3.05e-12)."""
    dims = {d: "unknown" for d in load_seeds("en").dimensions}
    plan = {"senior": {"retired": 15, "stable": 5}, **{a: {"stable": 10, "student": 10} for a in
                                                        ("child", "adolescent", "young_adult", "adult")}}
    rows = [{**dims, "model": "m", "language": "en", "base_attribute": "age", "base_value": a, "age": a,
             "employment_status": b} for a, counts in plan.items() for b, n in counts.items() for _ in range(n)]
    return associations(pd.DataFrame(rows), False, CONFIG)


def test_json_records_keep_tiny_p_and_q() -> None:
    """Planted: a strong association whose cell p is far below 1e-10; the JSON must say the same number."""
    result = _result()
    frame = result.associations
    assert 1e-15 < frame["p"].min() < 1e-10  # precondition: a p that 10 decimals printed as 0.0
    records = json.loads(json.dumps(association_records(result)))
    for record, (_, row) in zip(records, frame.iterrows(), strict=True):
        assert record["p"] == row["p"] and record["q"] == row["q"]
    per_slice = result.per_slice
    per = json.loads(json.dumps(per_model_records(result)))
    for record, (_, row) in zip(per, per_slice.iterrows(), strict=True):
        assert record["p"] == row["p"] and record["q_by"] == row["q_by"] and record["lift"] == row["lift"]


def test_json_records_are_plain_json() -> None:
    records = association_records(_result())
    text = json.dumps(records, allow_nan=False)  # no NaN, no numpy scalars
    assert isinstance(json.loads(text)[0]["models"], list)


def test_csv_keeps_full_precision() -> None:
    frame = _result().per_slice
    back = pd.read_csv(io.StringIO(frame.to_csv(index=False)))
    assert back["p"].tolist() == frame["p"].tolist() and back["q_by"].tolist() == frame["q_by"].tolist()
