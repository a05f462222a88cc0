"""Validity of the answers behind a probe's numbers, per model x language: can we read what was said?

A bias rate computed on the 30% of answers a reader could parse is a different quantity from one on all of
them. Every probe's summary and report carry this table, and a warning line for any cell where more
than 20% of the answers are unreadable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

UNREADABLE_WARNING = 0.20
CUT_REASON = "cut"  # the readers' reason for an answer cut at the token limit before its verdict was complete

# Reason words of the answer readers (biasatlas.parsing), matched as substrings of the reason.
CATEGORIES: dict[str, tuple[str, ...]] = {
    "refusals": ("refus",),
    "hedges": ("hedge", "both", "several", "ambiguous"),
    "other_language": ("language",),
}


def validity_table(
    outcomes: pd.DataFrame, value_column: str, by: tuple[str, ...] = ("model", "language")
) -> pd.DataFrame:
    """Per cell: answers, readable (n and %), refusals, hedges, answers in another language, cut at the limit,
    and ``cut_unread``: answers cut at the limit whose verdict was not complete before the cut (the readers'
    reason "cut"; they count as unreadable).

    ``outcomes`` holds one row per stored answer (status ``answered``) with the parsed ``value_column``
    (None/NaN when unreadable) and its ``reason``; ``finish_reason`` == "length" marks answers cut at the
    token limit when the store provides it. Rows of other statuses count as failed or pending.
    """
    import pandas as pd

    if outcomes.empty:
        return pd.DataFrame()
    frame = outcomes.copy()
    keys = [c for c in by if c in frame.columns]
    status = frame["status"] if "status" in frame.columns else pd.Series("answered", index=frame.index)
    answered = status == "answered"
    reason_column = next((c for c in ("reason", "parse_reason") if c in frame.columns), None)
    reason = (frame[reason_column].fillna("").astype(str).str.lower() if reason_column
              else pd.Series("", index=frame.index))
    readable = answered & frame[value_column].notna()
    columns: dict[str, Any] = {
        "answers": answered,
        "readable": readable,
        "failed": status == "failed",
        "pending": status == "pending",
    }
    for name, words in CATEGORIES.items():
        columns[name] = answered & ~readable & reason.map(lambda r, w=words: any(x in r for x in w))
    if "finish_reason" in frame.columns:
        columns["cut_at_limit"] = answered & (frame["finish_reason"] == "length")
    columns["cut_unread"] = answered & ~readable & (reason == CUT_REASON)
    flags = pd.DataFrame(columns, index=frame.index).astype(int)
    for key in keys:
        flags[key] = frame[key].astype(str)
    table = flags.groupby(keys, sort=True).sum().reset_index() if keys else flags.sum().to_frame().T
    table["readable_pct"] = (100 * table["readable"] / table["answers"].where(table["answers"] > 0)).round(1)
    table["unreadable_pct"] = (100 - table["readable_pct"]).round(1)
    return table


def warnings(table: pd.DataFrame, probe: str, threshold: float = UNREADABLE_WARNING) -> list[str]:
    """One line per cell where more than ``threshold`` of the answers are unreadable."""
    lines: list[str] = []
    if table.empty:
        return lines
    for row in table.to_dict("records"):
        if row["answers"] and row["unreadable_pct"] > 100 * threshold:
            where = ", ".join(f"{k} {row[k]}" for k in ("model", "language") if k in row)
            lines.append(
                f"{probe}: {row['unreadable_pct']:.1f}% of {row['answers']} answers unreadable ({where}); "
                "its rates describe the readable answers only"
            )
    return lines


def records(table: pd.DataFrame) -> list[dict[str, Any]]:
    """JSON-ready rows."""
    if table.empty:
        return []
    return [{str(k): (None if v != v else v) for k, v in row.items()} for row in table.to_dict("records")]
