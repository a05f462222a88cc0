"""The methods texts in the report: shipped with the package, written for readers, markdown rendered safely."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

import pytest

from biasatlas.probes import PROBE_MODULES
from biasatlas.report.methods_doc import for_readers, methods_block, methods_text, render_markdown


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


@pytest.mark.parametrize("probe", ["contact", "samaritan", "stories", "leakage"])
def test_the_methods_text_is_package_data(probe: str) -> None:
    source = resources.files("biasatlas.report").joinpath("methods", f"{probe}.md")
    assert source.is_file() and methods_text(probe) == source.read_text(encoding="utf-8")
    pyproject = (Path(__file__).resolve().parents[3] / "pyproject.toml").read_text(encoding="utf-8")
    assert '"report/methods/*.md"' in pyproject  # a wheel (non-editable install) carries it


DEVELOPER = re.compile(r"\b[Ii]ssues? \d|shared/papers|\bsrc/|\btests/|\.py\b|\b00[0-4]/00[0-4]\b|docs/|"
                       r"On the embedded model|all 630 prompts|PYTHONPATH")


@pytest.mark.parametrize("probe", ["contact", "samaritan", "stories", "leakage"])
def test_the_report_text_is_for_readers(probe: str) -> None:
    block = methods_block(probe)
    assert block is not None
    assert DEVELOPER.findall(block) == []
    assert "()" not in block and "(, " not in block


def test_for_readers_drops_issue_numbers_paths_and_one_runs_section() -> None:
    text = ("# Probe: deviations from papers 000/001\n\nCode: `src/x/` (`a`, `b`). What we do (issue 25). "
            "Until issue 25 it was worse. See [docs/languages.md](../languages.md) and "
            "(`shared/papers/001_*`, the design).\n\n## On the embedded model (tiny)\n\n630 prompts.\n\n"
            "## Next\n\nkept")
    out = for_readers(text)
    assert out == ("# Probe: deviations from papers 000 and 001\n\nWhat we do. See the biasatlas guide “languages” and "
                   "(the design).\n\n## Next\n\nkept")
