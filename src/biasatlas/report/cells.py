"""Table cells as text for people: the one place a report turns a value into what a reader sees.

A missing value is '–' in the page, an empty cell in a CSV and '--' in LaTeX; a boolean is 'yes' or 'no';
a list or a mapping is its items joined; a float has 4 significant digits in the page and in LaTeX (the
CSV keeps every digit); a p-value (a column :func:`is_p_column` names) is :func:`format_p`'s, the one p
format of every display. Text keeps its line breaks (the page shows them, LaTeX gets a space, a CSV keeps
the text as it is) and never goes through ``repr``, so no ``None``, ``True`` or literal ``\\n`` reaches a
reader.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Mapping
from typing import Any

import pandas as pd

#: what a page shows for a value a cell does not have
MISSING = "–"


def is_missing(value: Any) -> bool:
    """None, NaN, pd.NA and NaT (not an empty list or an empty string)."""
    if value is None:
        return True
    if isinstance(value, (list, tuple, set, frozenset, dict)):
        return False
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # array-likes
        return False


#: below this a p-value is shown as a floor: a double cannot tell smaller values apart reliably (and 0 is
#: what an underflow leaves, never a p that was computed as exactly zero)
P_FLOOR = 1e-300


def format_p(value: Any) -> str:
    """A p-value for a reader: 3 significant digits, ``< 1e-300`` at or below the floor (never "0"),
    ``–`` where none was computed. Every display (page, LaTeX, terminal, hovers) uses this one."""
    if is_missing(value):
        return MISSING
    try:
        p = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(p):
        return MISSING
    return f"< {P_FLOOR:g}" if p < P_FLOOR else f"{p:.3g}"


#: a column of p-values: "p", "adjusted p", "p adj (BH)", "Wilcoxon p", "p (t; ...)", "q (BH)", "p_adj"
_P_COLUMN = re.compile(r"(^|[\s(_·])(p|q|p_adj|p_value|q_value|tost_p_adj|wilcoxon_p)($|[\s)_])")


def is_p_column(name: Any) -> bool:
    """True for a column that holds p-values (or BH q-values), by its name or its readable label."""
    label = str(name[-1] if isinstance(name, tuple) else name)
    return bool(_P_COLUMN.search(label)) and "p_biased" not in label


def _number(value: float) -> str:
    return f"{value:.4g}"


def cell_text(value: Any, *, digits: bool = True) -> str | None:
    """The text of one cell, or None for a missing value; ``digits``: floats to 4 significant digits."""
    if is_missing(value):
        return None
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # numpy scalars
        with contextlib.suppress(TypeError, ValueError):
            value = value.item()
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isinf(value):
            return "∞" if value > 0 else "−∞"
        return _number(value) if digits else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, Mapping):
        return "; ".join(f"{cell_text(k) or MISSING}: {cell_text(v, digits=digits) or MISSING}"
                         for k, v in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=str) if isinstance(value, (set, frozenset)) else value
        return ", ".join(cell_text(v, digits=digits) or MISSING for v in items)
    return str(value)


def display_text(value: Any, p_value: bool = False) -> str | None:
    """``cell_text``, with a number of a p-value column in :func:`format_p`'s format."""
    if p_value and not is_missing(value) and isinstance(value, (int, float)) and not isinstance(value, bool):
        return format_p(value)
    if p_value and hasattr(value, "dtype") and getattr(value.dtype, "kind", "") in "iuf":
        return format_p(value.item())
    return cell_text(value)


def page_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """Every cell as the page shows it (text; '–' where missing; p-values in the one p format)."""
    def one(value: Any, p_value: bool) -> str:
        text = display_text(value, p_value)
        if text is None:
            return MISSING
        return text.replace("\r\n", "\n").replace("\r", "\n")

    shown = frame.astype(object).copy()
    for i, column in enumerate(frame.columns):
        p_value = is_p_column(column)
        seen: dict[Any, str] = {}  # a column repeats its values: each is formatted once

        def once(v: Any, p: bool = p_value, seen: dict[Any, str] = seen) -> str:
            if isinstance(v, float) and v == 0:  # 0.0 and -0.0 are one key but may read apart
                return one(v, p)
            try:
                return seen[(type(v), v)]
            except KeyError:
                out = seen[(type(v), v)] = one(v, p)
                return out
            except TypeError:  # an unhashable cell (a list)
                return one(v, p)

        shown.isetitem(i, [once(v) for v in shown.iloc[:, i].tolist()])
    return shown


def file_cells(frame: pd.DataFrame, *, newline: str = "\n") -> pd.DataFrame:
    """Cells for CSV and LaTeX files: numbers stay numbers (the writer formats them), missing stays missing,
    every other value becomes text (booleans 'yes'/'no'); ``newline`` replaces line breaks in text."""

    def one(value: Any) -> Any:
        if is_missing(value):
            return None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value
        if hasattr(value, "dtype") and getattr(value.dtype, "kind", "") in "iuf":  # numpy numbers
            return value.item()
        text = cell_text(value, digits=False)
        if text is None or newline == "\n":
            return text
        return text.replace("\r\n", newline).replace("\r", newline).replace("\n", newline)

    shown = frame.copy()
    for column in range(shown.shape[1]):
        series = shown.iloc[:, column]
        if series.dtype.kind in "iuf":  # a numeric column: the writer formats it
            continue
        shown.isetitem(column, series.astype(object).map(one).to_numpy())
    return shown
