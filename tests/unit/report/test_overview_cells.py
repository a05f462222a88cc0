"""Overview cells: one estimate [CI] with its mark, flags as ⚑ icons with their text on hover, and the validity
section counting the same flags the cells show."""

from __future__ import annotations

import re

import pandas as pd

from biasatlas.report.checks import validity_section
from biasatlas.report.headlines import COLUMNS
from biasatlas.report.overview import grid_html


def _head(**values: object) -> pd.DataFrame:
    row = dict.fromkeys(COLUMNS)
    row.update({"model": "m", "language": "en", "measure": "Δ % biased, positive − no contact", "estimate": -12.5,
                "ci_low": -20.0, "ci_high": -4.0, "test": "McNemar exact", "n": 40, "p": 0.004, "p_adj": 0.008,
                "significant": True, "family": "contact", "correction": "BH", "mde": 9.0, **values})
    return pd.DataFrame([row], columns=COLUMNS)


VALIDITY = pd.DataFrame([{"model": "m", "language": "en", "answers": 100, "readable": 100, "readable_pct": 100.0,
                          "refusals": 0}])


def _cell(grid: str) -> str:
    start = grid.index("<td class='drill'")
    return grid[start:grid.index("</td>", start)]


def _visible(cell: str) -> str:
    """The cell's text as a reader sees it without hovering: tags and their attributes gone."""
    return re.sub(r"<[^>]+>", "", cell[cell.index(">") + 1:])


def test_a_cell_shows_one_estimate_with_its_interval_and_mark() -> None:
    cell = _cell(grid_html({"contact": _head()}, {"contact": VALIDITY}, {"contact": "Contact"}))
    text = _visible(cell)
    assert text.startswith("-12.5 [-20.0, -4.0]*")
    assert len(re.findall(r"\[[^\]]+\]", text)) == 1  # one interval in the cell
    assert "<br>" in cell and cell.count("<br>") == 1  # the estimate, then one line on the answers
    assert "readable 100% of 100 · refusals 0" in text
    assert "McNemar exact" in cell  # the test is in the hover
    assert "⚑" not in cell


def test_flags_are_icons_with_their_text_on_hover_escaped() -> None:
    notes = "too few units for McNemar exact: 3 pairs | answered <b>'Yes'</b> 100% of the time"
    heads = _head(flags="too_few_units,one_option", flag_notes=notes, significant=False)
    cell = _cell(grid_html({"contact": heads}, {"contact": VALIDITY}, {"contact": "Contact"}))
    icons = re.findall(r"<span class='flag' title='([^']*)'>⚑</span>", cell)
    assert icons == ["too few units for McNemar exact: 3 pairs",
                     "answered &lt;b&gt;&#x27;Yes&#x27;&lt;/b&gt; 100% of the time"]
    assert "<b>" not in cell
    assert "(no interval shown)" in _visible(cell)  # too few units: no interval


def test_the_validity_section_counts_the_flags_the_cells_show() -> None:
    heads = _head(flags="too_few_units,one_option", flag_notes="too few units: 3 pairs | one option 100%")
    validity = VALIDITY.assign(readable=40, readable_pct=40.0)  # 60% unreadable: a third flag, of the answers
    cell = _cell(grid_html({"contact": heads}, {"contact": validity}, {"contact": "Contact"}))
    assert cell.count("⚑") == 3
    section = validity_section({"contact": validity}, {"contact": "Contact"}, {"contact": heads})
    assert section is not None
    text = " ".join(section.blocks)
    assert "1 of 1 cells flagged" in text and "0 of 1" not in text
    for note in ("too few units: 3 pairs", "one option 100%", "60% of 100 answers unreadable"):
        assert note in text


def test_a_clean_cell_is_not_counted() -> None:
    section = validity_section({"contact": VALIDITY}, {"contact": "Contact"}, {"contact": _head()})
    assert section is not None and "0 of 1 cells flagged." in " ".join(section.blocks)
