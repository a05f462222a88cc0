"""The report's validity section: one table of every probe, model and language, a flag column, one summary line.

A cell's flags come from the validity frames: their own ``flags`` column where a probe's validity gives
one, else the report's rule (more than ``UNREADABLE_WARNING`` of the answers unreadable: the probe's rates
then describe the readable answers only).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from biasatlas.report.html import Section
from biasatlas.report.publish import readable_columns

METHODS = (
    "Per probe, model and language: answers stored, answers a reader could read (the rates of every probe "
    "describe these only), refusals, hedges or both options, answers in another language, answers cut at the "
    "token limit. The Flag column marks the cells a reader should weigh with care."
)


def _flag_text(value: Any) -> str:
    if isinstance(value, (list, tuple, set)):
        return "; ".join(str(v) for v in value if str(v))
    return "" if value is None or value != value else str(value)


def flags(table: pd.DataFrame) -> list[str]:
    """The flag of each row: the frame's own ``flags`` where it has them, else the unreadable-share rule."""
    from biasatlas.validity import UNREADABLE_WARNING

    if "flags" in table.columns:
        return [_flag_text(v) for v in table["flags"]]
    limit = 100 * UNREADABLE_WARNING
    return [f"over {limit:.0f}% unreadable" if n and u > limit else ""
            for n, u in zip(table["answers"], table["unreadable_pct"], strict=True)]


def validity_table(validity: dict[str, pd.DataFrame], titles: dict[str, str],
                   headlines: dict[str, pd.DataFrame] | None = None) -> pd.DataFrame:
    """All probes' validity rows in one frame: probe, model, language, flag, then the counts and shares.

    With ``headlines`` (the overview's) a row's flag names every ⚑ its overview cell shows (report.flags).
    """
    frames = [t.assign(probe=titles.get(p, p), flag=_flags(t, None if headlines is None else headlines.get(p)))
              for p, t in validity.items() if not t.empty]
    if not frames:
        return pd.DataFrame()
    table = pd.concat(frames, ignore_index=True).drop(columns=["flags"], errors="ignore")
    first = [c for c in ("probe", "model", "language", "flag") if c in table.columns]
    return readable_columns(table[first + [c for c in table.columns if c not in first]])


def _flags(table: pd.DataFrame, headlines: pd.DataFrame | None) -> list[str]:
    if headlines is None:
        return flags(table)
    from biasatlas.report.flags import validity_notes

    return ["; ".join(notes) for notes in validity_notes(table, headlines)]


def validity_section(validity: dict[str, pd.DataFrame], titles: dict[str, str],
                     headlines: dict[str, pd.DataFrame] | None = None) -> Section | None:
    """The section: one sentence on the flagged cells, then the table (no line repeated per cell)."""
    table = validity_table(validity, titles, headlines)
    if table.empty:
        return None
    section = Section(title="Validity of the answers", key="validity", methods=METHODS)
    flagged = int((table["Flag"] != "").sum())
    section.add_text(f"{flagged} of {len(table)} cells flagged" + (" (the Flag column says why)." if flagged else "."))
    section.add_table(table, caption="Validity by probe, model and language")
    return section
