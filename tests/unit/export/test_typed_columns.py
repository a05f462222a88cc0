"""Exports as typed data: run settings and mde as numbers, option probabilities as a map, not JSON text."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from biasatlas.export import _statistics_frame
from biasatlas.table_files import plain_types, to_csv


def test_statistics_settings_and_mde_are_numbers() -> None:
    frame = _statistics_frame([
        {"probe": "contact", "estimate": 0.1, "mde": "0.12", "n_groups": "7", "seed": "0", "samples": "3",
         "temperature": "0.7"},
        {"probe": "contact", "estimate": 0.2, "seed": "0; 1", "samples": "1", "temperature": "0.0"},
    ])
    assert frame["mde"].dtype == "float64" and frame["mde"].iloc[0] == 0.12
    assert str(frame["n_groups"].dtype) == "Int64" and frame["n_groups"].iloc[0] == 7
    assert str(frame["seed"].dtype) == "Int64" and frame["seed"].iloc[0] == 0 and pd.isna(frame["seed"].iloc[1])
    assert str(frame["samples"].dtype) == "Int64" and frame["temperature"].dtype == "float64"
    assert frame["run_settings"].iloc[1] == "seed 0; 1" and pd.isna(frame["run_settings"].iloc[0])


def test_option_probabilities_are_a_map_in_parquet_and_json_in_csv(tmp_path: Path) -> None:
    frame = plain_types(pd.DataFrame({"option_probs": [{"Ja": 0.7, "Nein": 0.3}, None]}), {"option_probs": "map"})
    frame.to_parquet(tmp_path / "a.parquet", index=False, engine="pyarrow")
    import pyarrow.parquet as pq

    column = pq.read_table(tmp_path / "a.parquet").schema.field("option_probs").type
    assert str(column).startswith(("struct", "map")), column
    to_csv(frame, tmp_path / "a.csv")
    text = pd.read_csv(tmp_path / "a.csv")["option_probs"].iloc[0]
    assert json.loads(text) == {"Ja": 0.7, "Nein": 0.3}
