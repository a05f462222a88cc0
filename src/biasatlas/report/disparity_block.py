"""The group-disparity block of a probe's report section: the forest plot of every family and its table.

A primitive: it renders the rows it is given; the run's last lines (which load the probes) are
:mod:`biasatlas.report.disparity`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from biasatlas.report.html import Section

COLUMNS = {"model": "model", "mode": "mode", "language": "language", "temperature": "T", "axis": "axis",
           "category": "category", "group": "group", "n": "n questions", "units": "units", "estimate": "effect",
           "ci_low": "CI low", "ci_high": "CI high", "p": "p", "p_adj": "p adj (Holm)", "significant": "differs",
           "mde": "MDE", "flags": "⚑ flags", "test": "test"}


def add_disparity(section: Section, rows: Sequence[dict[str, Any]], family: str, methods: str,
                  drill: str = "") -> None:
    """Add the headline sentences, the forest plot and the table of ``rows`` (one probe's disparity rows);
    ``drill`` names the probe whose answers a click on a group's point narrows to that group."""
    from biasatlas.report.plots import disparity_forest
    from biasatlas.tidy.disparity import SOURCE, headline_lines

    rows = [r for r in rows if r.get("source") == SOURCE]
    if not rows:
        return
    for row, text in headline_lines(rows):
        where = " · ".join(str(row[k]) for k in ("model", "mode", "language") if row.get(k))
        section.add_text(f"Group disparity, {where}: {text}")
    main = [r for r in rows if r.get("contact") in (None, "all") and r.get("measure") in ("decision", "rating")]
    figure = disparity_forest(main, family, drill=bool(drill))
    if figure is not None:
        section.add_plot(figure, drill=drill, caption="Group disparity: each group against the other groups of its "
                         f"{family}, ordered by effect, with 95% intervals; red: differs (Holm-adjusted p below "
                         "alpha), hollow grey: not a finding (its flag in the hover). " + methods)
    table = pd.DataFrame([r for r in rows if r.get("group")])
    if "contact" in table.columns:
        table = table.rename(columns={"contact": "framing"})
    shown = [c for c in ("framing", "measure", *COLUMNS) if c in table.columns and table[c].notna().any()]
    section.add_table(table[shown].rename(columns=COLUMNS), caption="Group disparity, every group: effect = the "
                      f"group − the other groups of its {family} (shares: 0-1; ratings: rating points), its 95% "
                      "interval, the exact or t test, p adjusted (Holm) over the groups of the family, the MDE "
                      "of a group at this size; framing 'all' is the headline level (the framings pooled).",
                      drill=drill)


STORY_COLUMNS = {"attribute": "attribute A", "group": "group (A = a)", "estimate": "significant associations",
                 "compared_attribute": "strongest: B", "compared_value": "= b", "effect_size": "lift",
                 "p_adj": "q (BY)", "group_headline": "headline"}


def add_group_counts(section: Section, rows: Sequence[dict[str, Any]], methods: str) -> None:
    """Stories: the headline sentence of each attribute and the table of its groups (no interval to plot: a
    group's figure is a count of the mining's findings)."""
    from biasatlas.tidy.disparity import SOURCE, headline_lines

    rows = [r for r in rows if r.get("source") == SOURCE]
    if not rows:
        return
    for row, text in headline_lines(rows):
        section.add_text(f"Group disparity, {row.get('attribute')}: {text}")
    table = pd.DataFrame(rows)
    table = table.sort_values(["attribute", "estimate"], ascending=[True, False], kind="stable")
    shown = [c for c in STORY_COLUMNS if c in table.columns]
    section.add_table(table[shown].rename(columns=STORY_COLUMNS), caption="Group disparity, every prompted group: "
                      "its association cells found by the mining (q below alpha), its strongest association by "
                      "lift and that cell's q. " + methods)


def prepend(section: Section, build: Callable[[Section], None]) -> None:
    """Put what ``build`` adds to a section at the top of ``section`` (its plots under their own ids)."""
    block = Section(title=section.title, key=f"{section.key or section.title}-groups")
    build(block)
    section.blocks[0:0] = block.blocks
    section.data.update(block.data)
    section.files[0:0] = block.files
    section.has_plots = section.has_plots or block.has_plots
