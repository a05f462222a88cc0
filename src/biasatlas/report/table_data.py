"""Report tables as data for the files: estimate cells split into numbers, constant columns, short model names.

A page cell ``12.3 [4.5, 20.1] (40)`` is one string for a reader; a CSV or LaTeX copy gets four numeric columns
instead (the estimate, ``ci_low``, ``ci_high``, ``n``), as the cell printed them (the probe's digits; the
statistics export has every digit).
"""

from __future__ import annotations

import math
import re
from typing import Any

import pandas as pd

#: the suffixes of the columns an estimate column is split into (the estimate keeps the column's name)
SPLIT = (" · 95% CI low", " · 95% CI high", " · n")

_NUM = r"[+−-]?\d+(?:\.\d+)?"
_ESTIMATE = re.compile(rf"^({_NUM})(?: \[({_NUM}), ({_NUM})\])?(?: \((\d+)(?:/(\d+))?\))?$")


def _float(text: str | None) -> float | None:
    return None if text is None else float(text.replace("−", "-"))


def parts(value: Any) -> tuple[float, float | None, float | None, int | None] | None:
    """(estimate, low, high, n) of an estimate cell, or None for any other value."""
    if not isinstance(value, str):
        return None
    m = _ESTIMATE.match(value.strip())
    if m is None or m[2] is None:  # a bare number is no estimate cell: it needs its interval
        return None
    n = m[5] or m[4]  # "(count/n)" gives n after the slash
    return float(_float(m[1]) or 0.0), _float(m[2]), _float(m[3]), None if n is None else int(n)


def _is_missing_text(value: Any) -> bool:
    return value is None or value in ("–", "") or (isinstance(value, float) and math.isnan(value))


def estimate_columns(frame: pd.DataFrame) -> list[int]:
    """Positions of the columns whose every value is an estimate cell (or missing), at least one of them."""
    found = []
    for i in range(frame.shape[1]):
        values = [v for v in frame.iloc[:, i].tolist() if not _is_missing_text(v)]
        if values and all(parts(v) is not None for v in values):
            found.append(i)
    return found


def _named(column: Any, suffix: str) -> Any:
    if isinstance(column, tuple):
        return (*column[:-1], f"{column[-1]}{suffix}")
    return f"{column}{suffix}"


def split_estimates(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with each estimate column replaced by its numbers: the estimate (the column's name), then
    ``NAME ci_low``, ``NAME ci_high`` and ``NAME n`` (n only where a cell gives one)."""
    positions = set(estimate_columns(frame))
    if not positions:
        return frame
    columns: list[Any] = []
    data: list[list[Any]] = []
    for i, column in enumerate(frame.columns):
        values = frame.iloc[:, i].tolist()
        if i not in positions:
            columns.append(column)
            data.append(values)
            continue
        split = [parts(v) if not _is_missing_text(v) else None for v in values]
        named = [(column, 0), (_named(column, SPLIT[0]), 1), (_named(column, SPLIT[1]), 2)]
        if any(s is not None and s[3] is not None for s in split):
            named.append((_named(column, SPLIT[2]), 3))
        for name, k in named:
            columns.append(name)
            data.append([math.nan if s is None or s[k] is None else s[k] for s in split])
    out = pd.DataFrame(dict(enumerate(data)), index=frame.index)
    for k, name in enumerate(columns):  # whole-number columns (n) as integers where every value is one
        series = out[k]
        if isinstance(name, (str, tuple)) and str(name[-1] if isinstance(name, tuple) else name).endswith(SPLIT[2]):
            out[k] = series.astype("Int64") if series.notna().all() else series
    index = pd.MultiIndex.from_tuples(columns) if isinstance(frame.columns, pd.MultiIndex) else columns
    return out.set_axis(index, axis=1)


#: a local or hub model id with a revision: ``local:smollm2@b179c9523d0e`` is shown as ``smollm2``
_MODEL_ID = re.compile(r"\b[a-z]+:(?:[\w.-]+/)?([\w.-]+?)(?:\.gguf)?@[0-9a-f]{8,}\b")


def short_models(texts: list[str]) -> dict[str, str]:
    """Model ids in ``texts`` -> their short display names, where no two ids of the texts share one."""
    ids: dict[str, str] = {}
    for text in texts:
        for m in _MODEL_ID.finditer(text):
            ids[m[0]] = m[1]
    names = list(ids.values())
    return {i: name for i, name in ids.items() if names.count(name) == 1}


def display_text(text: str, names: dict[str, str]) -> str:
    """``text`` with each model id of ``names`` as its short name."""
    return _MODEL_ID.sub(lambda m: names.get(m[0], m[0]), text) if names else text


def constant_columns(frame: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """``frame`` without its text columns of one value (two rows or more), and a sentence naming them."""
    if len(frame) < 2 or frame.shape[1] < 2:
        return frame, ""
    keep: list[int] = []
    said: list[str] = []
    for i, column in enumerate(frame.columns):
        series = frame.iloc[:, i]
        top = str(column[0]) if isinstance(column, tuple) and len(column) > 1 else ""
        text = not pd.api.types.is_numeric_dtype(series) and not any(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in series.tolist())
        values = {str(v) for v in series.tolist()}
        if text and not top and len(values) == 1 and len(keep) + (frame.shape[1] - i - 1) >= 1:
            label = column[-1] if isinstance(column, tuple) else column
            said.append(f"{label}: {values.pop()}")
        else:
            keep.append(i)
    if not said:
        return frame, ""
    return frame.iloc[:, keep], "; ".join(said) + "."


def model_label(frame: pd.DataFrame) -> pd.Series:
    """The model as the answers table shows it; ``model (mode)`` where a model ran in several modes."""
    if "mode" not in frame.columns:
        return frame["model"].astype(str)
    modes = frame.groupby("model")["mode"].transform("nunique")
    return frame["model"].astype(str).where(modes <= 1, frame["model"].astype(str) + " (" + frame["mode"] + ")")
