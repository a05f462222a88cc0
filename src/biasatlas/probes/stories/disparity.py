"""Group disparity of the stories probe: which prompted groups carry the most significant associations.

A story is prompted with one group (attribute A = a: an origin, a gender, ...); the mining tests every cell of
the A × B tables (Fisher, BY over the cells: :mod:`biasatlas.stats.associations`). The group rows are those
tests, read by group: per attribute A, each group a with the number of its cells found (q below alpha), its
strongest association (by lift) and that cell's q; the group with the most (ties: the smallest q) is the
headline of A (:func:`biasatlas.tidy.disparity.stories_group_rows`, the rows the export holds too). No
group-vs-rest test is added: a cell's test already compares the group's stories with the overall distribution.
The headline sentence goes first in the summary and at the top of the probe's report section.
"""

from __future__ import annotations

from typing import Any

METHODS = ("Stories: per prompted attribute A, each group's count of association cells the mining finds (its "
           "Fisher tests, BY over the cells of the tables, q below alpha), its strongest association by lift; "
           "the headline group carries the most (ties: the smallest q). A count of findings, not a test of "
           "its own; the stories of every model and language pooled, as the association table.")


def statistics(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The group rows (``source`` = group disparity) of a stories summary, at the summary's alpha."""
    from biasatlas.stats.associations import AssociationConfig
    from biasatlas.tidy.disparity import stories_group_rows

    alpha = AssociationConfig().alpha if summary.get("alpha") is None else float(summary["alpha"])
    return stories_group_rows(summary.get("associations") or [], alpha)


def headline_lines(summary: dict[str, Any]) -> list[str]:
    """One line per prompted attribute: the group that carries the most significant associations."""
    from biasatlas.tidy.disparity import headline_lines as lines

    return [f"group disparity · stories · {row.get('attribute')}: {text}" for row, text in lines(statistics(summary))]


def print_headline(summary: dict[str, Any], console: Any) -> None:
    """The summary's first lines (plain text: a group name is never read as markup)."""
    for line in headline_lines(summary):
        console.print(line, markup=False, soft_wrap=True)


def add_to_sections(sections: list[Any], summary: dict[str, Any]) -> None:
    """The headline sentences and the group table at the top of the probe's first report section."""
    from biasatlas.report.disparity_block import add_group_counts, prepend

    rows = statistics(summary)
    if sections and rows:
        prepend(sections[0], lambda block: add_group_counts(block, rows, METHODS))
