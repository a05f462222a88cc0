"""Paper numbers become author–year citations linked to the references (issue 28); cases written from the
captions and notes the report shows."""

from __future__ import annotations

import pytest

from biasatlas.report.citations import REFERENCES, cite_papers, link_citations

CASES = [
    ("By contact framing (paper 001 Table 3)", "By contact framing (Raj et al., 2024, Table 3)"),
    ("By group (paper 000 Tables 5-8)", "By group (Ikae et al., 2025, Tables 5-8)"),
    ("adheres (paper 001)", "adheres (Raj et al., 2024)"),
    ("Adherence is paper 001's (Table 3): lower", "Adherence is Raj et al., 2024 (Table 3): lower"),
    ("uncorrected (paper 003 §4.5)", "uncorrected (Fagan et al., 2025, §4.5)"),
    ("Model associations follow Cao et al. (paper 004).", "Model associations follow Cao et al. (Cao et al., 2024)."),
    ("The scoring of 001 Table 2 (000 §3.4)", "The scoring of Raj et al., 2024, Table 2 (Ikae et al., 2025, §3.4)"),
    ("papers 000 and 001", "Ikae et al., 2025; Raj et al., 2024"),
    ("StereoTales (paper 002)", "StereoTales (Le Jeune et al., 2025)"),
    # numbers that are not papers stay as they are
    ("p = 0.001 Table", "p = 0.001 Table"),
    ("seed 001 and 0.004", "seed 001 and 0.004"),
    ("shared/papers/001_raj.pdf Table 3", "shared/papers/001_raj.pdf Table 3"),
    ("paper 007 Table 1", "paper 007 Table 1"),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_cite_papers(text: str, expected: str) -> None:
    assert cite_papers(text) == expected


def test_citations_link_to_their_reference() -> None:
    html = link_citations("Raj et al. (2024); Ikae et al., 2025, Table 3; Holm, 1979; Raj et al. 2031")
    assert html == ("<a class='cite' href='#ref-raj2024'>Raj et al. (2024)</a>; "
                    "<a class='cite' href='#ref-ikae2025'>Ikae et al., 2025</a>, Table 3; "
                    "<a class='cite' href='#ref-holm1979'>Holm, 1979</a>; Raj et al. 2031")
    assert link_citations("Benjamini &amp; Hochberg, 1995") == (
        "<a class='cite' href='#ref-bh1995'>Benjamini &amp; Hochberg, 1995</a>")


def test_every_reference_has_a_unique_key() -> None:
    assert len({r.key for r in REFERENCES}) == len(REFERENCES)
