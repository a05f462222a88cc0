"""Models side by side: a long per-model table turned wide (design cells as rows, a column group per model).

The analyses give one row per model x cell; a reader compares models across a row. ``side_by_side``
pivots with pandas (``unstack``) into two-level columns, models on top in a stable order (sorted
display names, as in the overview grid) and the design cells' columns under an empty top label.
With one model the table stays flat, its model shown in a ``Model`` column as before.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from biasatlas.report.publish import column_label

#: the top label of the design-cell columns in a wide table (models label the other column groups)
KEY = ""
#: the mark of a test significant after correction, in the tables and the overview grid
MARK = " *"


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA


def estimate_cell(estimate: Any, low: Any, high: Any, n: Any = None, *, digits: int = 1,
                  signed: bool = False) -> str:
    """``12.3 [4.5, 20.1] (40)``: an estimate, its interval and n, as one cell; ``–`` when undefined."""
    if _missing(estimate):
        return "–"
    sign = "+" if signed else ""
    text = f"{estimate:{sign}.{digits}f}"
    if not (_missing(low) or _missing(high)):
        text += f" [{low:{sign}.{digits}f}, {high:{sign}.{digits}f}]"
    if not _missing(n):
        text += f" ({int(n)})"
    return text


def p_cell(p: Any, alpha: float = 0.05) -> str:
    """A p-value for a reader (:func:`~biasatlas.report.cells.format_p`), marked ``*`` below ``alpha``; ``–``
    when undefined."""
    from biasatlas.report.cells import format_p

    if _missing(p):
        return "–"
    return format_p(p) + (MARK if p < alpha else "")


def model_order(models: Iterable[Any]) -> list[str]:
    """The order models take in every table: sorted display names (the overview grid's order)."""
    return sorted({str(m) for m in models})


def side_by_side(frame: pd.DataFrame, rows: Sequence[str], values: Mapping[str, str], *,
                 model: str = "model") -> pd.DataFrame:
    """``frame`` (one row per model x cell) with the cells as rows and one column group per model.

    ``rows`` are the design columns that name a cell (kept in the frame's order of first appearance);
    ``values`` maps each shown column to its header. Rows a model lacks show ``–``. Column names of
    the result are for people: ``(model, value header)`` pairs, the design columns under ``KEY``; with
    one model a flat table ``Model``, design columns, value headers.
    """
    rows = [r for r in rows if r in frame.columns]
    if not rows:
        raise ValueError("side_by_side needs at least one design column that names a row")
    labels = {r: column_label(r) for r in rows}
    if frame.empty:
        return pd.DataFrame(columns=["Model", *labels.values(), *values.values()])
    models = model_order(frame[model])
    shown = frame.assign(**{model: frame[model].astype(str)})
    # missing design values would drop out of the index: shown as a dash, like empty cells
    shown[rows] = shown[rows].astype(object).where(shown[rows].notna(), "–")
    if len(models) == 1:
        flat = shown[[model, *rows, *values]].rename(columns={model: "Model", **labels, **values})
        return flat.reset_index(drop=True)
    order = shown[rows].drop_duplicates()
    indexed: pd.DataFrame = shown.drop_duplicates([*rows, model]).set_index([*rows, model])[list(values)]
    wide = pd.DataFrame(indexed.unstack(model))  # columns (value, model)
    # one design column makes a flat index, several a MultiIndex: the rows' order must match its kind
    wide = wide.reindex(pd.MultiIndex.from_frame(order) if len(rows) > 1 else pd.Index(order[rows[0]]))
    wide = wide.reindex(columns=pd.MultiIndex.from_tuples([(v, m) for m in models for v in values]))
    wide.columns = pd.MultiIndex.from_tuples([(c[1], values[c[0]]) for c in wide.columns.to_list()])
    keys = order.rename(columns=labels).reset_index(drop=True)
    keys.columns = pd.MultiIndex.from_tuples([(KEY, c) for c in keys.columns])
    body = wide.reset_index(drop=True).astype(object)
    return pd.concat([keys, body.where(body.notna(), "–")], axis=1)


def drill_spec(frame: pd.DataFrame, answers_model: Mapping[str, str] | None = None) -> dict[str, Any]:
    """What a click on a cell filters the answers by: each column's header, and the model of model columns.

    ``keys`` are the positions of the columns whose values name the cell (the answers table filters
    the columns it has by them), ``models`` the positions under a model's header, with the model as
    the answers table names it (``answers_model`` maps headers that differ, e.g. a leakage variant).
    """
    rename = answers_model or {}
    keys: dict[int, str] = {}
    models: dict[int, str] = {}
    for i, column in enumerate(frame.columns):
        if isinstance(column, tuple):
            top, label = str(column[0]), str(column[-1])
            if top == KEY:
                keys[i] = label
            else:
                models[i] = rename.get(top, top)
        else:
            keys[i] = str(column)
    return {"keys": keys, "models": models}

