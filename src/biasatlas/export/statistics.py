"""The statistics table of one probe: every test its summary reports, one row each, in one shape.

Built from ``Probe.summarise(store)`` (what `biasatlas summary --json` prints): each probe's test
rows are mapped onto the columns of :data:`STATISTICS`, the same for every probe, so the tables
of several probes concatenate. A value a summary does not give stays empty. Contact and samaritan
rows come tidy from their summaries (:mod:`biasatlas.tidy.rows`); stories, leakage and debias rows are made
tidy here (:mod:`.tidy_other`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from biasatlas.export.tidy_other import debias_rows, leakage_rows, stories_rows
from biasatlas.tidy.columns import STATISTICS

Row = dict[str, Any]


def statistics_rows(probe: str, summary: dict[str, Any], alpha: float | None = None) -> list[Row]:
    """Every test of ``summary`` (the probe's summarise output) as rows of :data:`STATISTICS`.

    ``alpha`` is the level summarise was given, for a probe whose summary does not state it (stories).
    """
    if not summary:
        return []
    if summary.get("statistics") is not None:  # computed once by the probe's summarise (contact, samaritan)
        rows: list[Row] = summary["statistics"]
    else:
        mapper = MAPPERS.get(probe)
        if mapper is None:
            return []
        if probe == "stories":
            summary = {**summary, "alpha": alpha}
        rows = mapper(summary)
    return [{**dict.fromkeys(STATISTICS), "probe": probe, **{k: v for k, v in row.items() if k in STATISTICS}}
            for row in rows]


MAPPERS: dict[str, Callable[[dict[str, Any]], list[Row]]] = {
    "stories": stories_rows,
    "leakage": leakage_rows,
    "debias": debias_rows,
}
