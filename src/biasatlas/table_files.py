"""Plain column types and the files: Parquet (pyarrow) or CSV (UTF-8; text that a spreadsheet would run as
a formula escaped), each written whole, then renamed."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

FORMATS = ("parquet", "csv")


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def plain_types(frame: pd.DataFrame, types: dict[str, str] | None = None) -> pd.DataFrame:
    """Every column one plain type a Parquet reader and `datasets` accept (missing values stay missing).

    ``types`` (column -> integer, float, boolean or string) fixes a column's type. Other object
    columns become boolean, integer, float or string (nullable) when all their values are of that
    kind; lists and dicts become JSON text; a column of mixed kinds, or all missing, becomes text.
    """
    out = frame.copy()
    for column in out.columns:
        series = out[column]
        declared = (types or {}).get(column)
        if declared is not None:
            out[column] = _cast(series, declared)
            continue
        if series.dtype != object and not isinstance(series.dtype, pd.StringDtype):
            continue
        kinds = {_kind(v) for v in series.tolist() if not _missing(v)}
        if kinds == {"bool"}:
            out[column] = _cast(series, "boolean")
        elif kinds == {"int"}:
            out[column] = _cast(series, "integer")
        elif kinds and kinds <= {"int", "float"}:
            out[column] = _cast(series, "float")
        else:
            out[column] = _cast(series, "string")
    return out


def _cast(series: pd.Series, declared: str) -> pd.Series:
    if declared == "map":  # a mapping stays one (Parquet: a map); CSV writes it as JSON (to_csv)
        return series.map(lambda v: dict(v) if isinstance(v, dict) else None).astype(object)
    if declared == "string":
        return series.map(_text).astype("string")
    if declared == "boolean":
        return series.map(lambda v: None if _missing(v) else bool(v)).astype("boolean")
    numbers = pd.to_numeric(series.map(lambda v: np.nan if _missing(v) else v), errors="coerce")
    if declared == "integer":
        return numbers.astype("Int64")
    return numbers.astype("float64")


def _kind(value: Any) -> str:
    if isinstance(value, bool | np.bool_):
        return "bool"
    if isinstance(value, int | np.integer):
        return "int"
    if isinstance(value, float | np.floating):
        return "float"
    if isinstance(value, str):
        return "str"
    return "other"


def _text(value: Any) -> str | None:
    """Text as is, lists and dicts as JSON, other values as str; None when missing."""
    if _missing(value):
        return None
    if isinstance(value, list | tuple | dict):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


#: What a spreadsheet reads as the start of a formula (OWASP, "CSV Injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_cell(value: Any) -> Any:
    """Text that a spreadsheet would run as a formula, with a single quote before it; anything else as is
    (a number, -0.5 too, stays a number)."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def spreadsheet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` for a CSV file: every text cell and column name that starts like a formula escaped
    (:func:`spreadsheet_cell`); numeric columns untouched."""
    out = frame.copy()
    for column in out.columns:
        series = out[column]
        if series.dtype == object or isinstance(series.dtype, pd.StringDtype | pd.CategoricalDtype):
            out[column] = series.astype(object).map(spreadsheet_cell)
    names = [tuple(spreadsheet_cell(p) for p in c) if isinstance(c, tuple) else spreadsheet_cell(c)
             for c in out.columns]
    return out.set_axis(pd.MultiIndex.from_tuples(names) if isinstance(out.columns, pd.MultiIndex) else names, axis=1)


def to_csv(frame: pd.DataFrame, path: Path) -> None:
    """``frame`` as a CSV file (UTF-8) that no spreadsheet runs a formula of (:func:`spreadsheet_safe`); lines
    end in CRLF (RFC 4180), so a cell holding a lone carriage return is quoted and keeps its row whole."""
    frame = frame.copy()
    for column in frame.columns:  # a mapping (option_probs) as its JSON object
        if frame[column].dtype == object and frame[column].map(lambda v: isinstance(v, dict)).any():
            frame[column] = frame[column].map(lambda v: json.dumps(v, ensure_ascii=False) if isinstance(v, dict)
                                              else v)
    spreadsheet_safe(frame).to_csv(path, index=False, encoding="utf-8", lineterminator="\r\n")


def write_table(frame: pd.DataFrame, path: Path, fmt: str) -> Path:
    """Write ``frame`` to ``path`` (Parquet or CSV) through a temporary file in the same directory."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        if fmt == "parquet" and frame.empty:
            _empty_parquet(frame, tmp)
        elif fmt == "parquet":
            _write_parquet(frame, tmp)
        elif fmt == "csv":
            to_csv(frame, tmp)
        else:
            raise ValueError(f"format {fmt!r}: valid: {', '.join(FORMATS)}")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def _write_parquet(frame: pd.DataFrame, path: Path) -> None:
    """``frame`` as Parquet; a column of mappings (option -> probability) as a Parquet map: a struct would
    carry a field for every option of every row (a leakage export: 33 fields, 30 of them empty per row)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(frame, preserve_index=False)
    for column in frame.columns:
        if frame[column].dtype != object:  # mappings live only in object columns
            continue
        cells = frame[column].tolist()
        present = [v for v in cells if v is not None and not _missing(v)]
        if present and all(isinstance(v, dict) for v in present):
            as_map = pa.array([list(v.items()) if isinstance(v, dict) else None for v in cells],
                              type=pa.map_(pa.string(), pa.float64()))
            table = table.set_column(table.schema.get_field_index(column), column, as_map)
    pq.write_table(table, path)


def _empty_parquet(frame: pd.DataFrame, path: Path) -> None:
    """The columns and types of an empty ``frame``, with no row group: pandas writes one of 0 rows,
    and `datasets` takes the first row group's size as its batch size (0 fails the whole load)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.Schema.from_pandas(frame, preserve_index=False)
    pq.ParquetWriter(path, schema).close()


def guide_path(path: Path) -> Path:
    """Where the guide of a sheet ``path`` for people to fill in goes: beside it, ``PATH.md``."""
    return path.with_name(path.name + ".md")


def to_csv_with_guide(frame: pd.DataFrame, path: Path, guide: str) -> Path:
    """A sheet for people to fill in, as CSV (spreadsheet-safe), and its guide beside it; the guide's path."""
    to_csv(frame, path)
    target = guide_path(path)
    target.write_text(guide, encoding="utf-8")
    return target
