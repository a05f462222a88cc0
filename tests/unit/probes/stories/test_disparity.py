"""Stories' group headline: the group that carries the most significant associations of each prompted attribute,
first in the summary (and in `summary --json`) and at the top of the report section, escaped."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console

from biasatlas.probes.stories.disparity import add_to_sections, headline_lines, statistics
from biasatlas.probes.stories.probe import PROBE, with_group_rows
from biasatlas.report.html import Section


def _cell(attribute: str, value: str, compared: str, lift: float, q: float) -> dict[str, Any]:
    return {"base_attribute": attribute, "base_value": value, "compared_attribute": "occupation",
            "compared_value": compared, "lift": lift, "q": q, "p": q / 10, "count": 12, "row_total": 40,
            "cramers_v": 0.2, "fraction": 0.3, "models": ["m"], "languages": ["en"]}


SUMMARY = {"alpha": 0.05, "associations": [
    _cell("region", "Oceania", "farmer", 3.1, 0.001), _cell("region", "Oceania", "diver", 2.0, 0.01),
    _cell("region", "Europe", "banker", 1.5, 0.02), _cell("region", "Asia", "cook", 1.2, 0.3),
    _cell("gender", "<b>women</b>", "nurse", 2.5, 0.004), _cell("gender", "men", "pilot", 1.1, 0.6)]}


def test_each_attribute_names_the_group_with_the_most_associations() -> None:
    rows = statistics(SUMMARY)
    assert {(r["attribute"], r["group"]): r["estimate"] for r in rows} == {
        ("region", "Oceania"): 2, ("region", "Europe"): 1, ("region", "Asia"): 0, ("gender", "<b>women</b>"): 1,
        ("gender", "men"): 0}
    lines = headline_lines(SUMMARY)
    assert len(lines) == 2
    assert "group disparity · stories · region: most associations: Oceania (2 significant; strongest " \
           "occupation = farmer, lift 3.10, q 0.001 (BY))" in lines


def test_no_association_says_so() -> None:
    summary = {"alpha": 0.05, "associations": [_cell("region", "Asia", "cook", 1.2, 0.3)]}
    assert headline_lines(summary) == ["group disparity · stories · region: no region group carries a significant "
                                       "association"]
    assert headline_lines({"associations": []}) == []


def test_the_summary_holds_the_rows_and_prints_the_headline_first() -> None:
    summary = with_group_rows({**SUMMARY, "counts": {}}, 0.05)
    assert summary["group_disparity"] == statistics(SUMMARY)
    buffer = io.StringIO()
    PROBE.print_summary(summary, Console(file=buffer, width=300))
    first = buffer.getvalue().splitlines()[:2]
    assert all(line.startswith("group disparity · stories · ") for line in first)
    assert any("<b>women</b>" in line for line in first)  # plain text, never markup


def test_the_report_section_starts_with_the_headline_and_escapes_the_groups() -> None:
    section = Section(title="Stories")
    section.add_text("the section's own first paragraph")
    add_to_sections([section], SUMMARY)
    html = "".join(section.blocks)
    assert html.index("Group disparity, region: most associations: Oceania") < html.index("own first paragraph")
    assert "<b>women</b>" not in html and "&lt;b&gt;women&lt;/b&gt;" in html
    assert "significant associations" in html
