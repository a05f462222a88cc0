"""The methods texts in the report: markdown rendered safely, no links into docs/, citations (issue 28)."""

from __future__ import annotations

from pathlib import Path

import pytest

from biasatlas.probes import PROBE_MODULES
from biasatlas.report.methods_doc import METHODS_DIR, methods_block, render_markdown


def test_markup_in_the_text_is_shown_as_text() -> None:
    html = render_markdown("A <script>alert(1)</script> and <b>bold</b> & `<i>code</i>`")
    assert "<script>" not in html and "<b>" not in html and "<i>" not in html
    assert "&lt;script&gt;" in html and "&amp;" in html and "<code>&lt;i&gt;code&lt;/i&gt;</code>" in html


def test_links_keep_their_text_and_images_their_alt_text() -> None:
    html = render_markdown("See [the readers](../readers.md) and ![a chart](x.png).")
    assert "href" not in html and "<img" not in html and "<p>See the readers and a chart.</p>" in html
    unsafe = render_markdown("[js](javascript:alert(1))")  # markdown-it refuses the link: it stays text
    assert "<a" not in unsafe and "href" not in unsafe


def test_headings_sit_below_the_section_heading_and_tables_render() -> None:
    html = render_markdown("# Title\n\n## Part\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
    assert "<h3>Title</h3>" in html and "<h4>Part</h4>" in html and "<table>" in html and "<td>1</td>" in html


def test_paper_numbers_become_linked_citations() -> None:
    html = render_markdown("# Contact probe: deviations from papers 001 and 000\n\nAs in 001 Table 3.")
    assert "<a class='cite' href='#ref-ikae2025'>Ikae et al., 2025</a>" in html
    assert "As in <a class='cite' href='#ref-raj2024'>Raj et al., 2024</a>, Table 3." in html
    assert "paper" not in html.split("</h3>")[0].lower().replace("papers", "")  # no bare numbers left


@pytest.mark.parametrize("probe", ["contact", "samaritan", "stories", "leakage"])
def test_every_published_probe_has_its_methods_in_the_report(probe: str) -> None:
    assert probe in PROBE_MODULES
    block = methods_block(probe)
    assert block is not None and block.startswith("<details") and "<h3>" in block
    assert "docs/methods" not in block.split("<h3>", 1)[0]


def test_no_methods_file_no_block(tmp_path: Path) -> None:
    assert methods_block("contact", tmp_path) is None
    assert METHODS_DIR.name == "methods"
