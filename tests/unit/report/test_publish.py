"""Publication outputs: readable column names, LaTeX that compiles-safe text, files for every table and figure."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
import pytest

from biasatlas.report.html import Section, write_report
from biasatlas.report.publish import column_label, latex_table, readable_columns, slug

# Written from what a reader of a paper expects to see, not from the code.
LABELS = [
    ("ci_low", "95% CI low"),
    ("ci_high", "95% CI high"),
    ("p_adj", "adjusted p"),
    ("toward_count", "Toward (n)"),
    ("biased_pct", "Biased %"),
    ("biased_ci_low", "Biased 95% CI low"),
    ("unreadable_pct", "Unreadable %"),
    ("model", "Model"),
    ("language", "Language"),
    ("n", "n"),
    ("cut_at_limit", "Cut at limit"),
    ("Δ % biased", "Δ % biased"),  # already for a reader: unchanged
    ("rating_mean", "Rating mean"),
    ("control_p", "Control p"),
    ("q", "q (BH)"),
    ("odds_ratio", "odds ratio"),
]


@pytest.mark.parametrize(("raw", "shown"), LABELS)
def test_column_labels(raw: str, shown: str) -> None:
    assert column_label(raw) == shown


def test_labels_that_would_clash_keep_the_raw_name() -> None:
    frame = pd.DataFrame({"p": [0.1], "p_value": [0.2]})
    assert list(readable_columns(frame).columns) == ["p", "p_value"]


def test_latex_escapes_cells_and_caption() -> None:
    tex = latex_table(pd.DataFrame({"group": ["50% & more_x"], "n": [3]}), "Rates of #1 & co")
    assert r"50\% \& more\_x" in tex
    assert r"\caption{Rates of \#1 \& co}" in tex
    assert "\\begin{table}" in tex and "\\toprule" in tex


def test_every_table_and_figure_becomes_files(tmp_path: Path) -> None:
    section = Section(title="Contact probe", key="contact")
    section.add_table(pd.DataFrame({"model": ["m"], "biased_pct": [12.5], "ci_low": [3.0]}), caption="By contact")
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    section.add_figure(fig, caption="A line")
    out = write_report(tmp_path, [section])
    files = sorted(p.name for p in (tmp_path / "report_files").iterdir() if p.name[0].isdigit())
    assert [Path(f).suffix for f in files] == [".csv", ".tex", ".pdf", ".svg"]
    # the paper set: a document of each section's first table, and the references as BibTeX
    assert {"paper.tex", "references.bib"} <= {p.name for p in (tmp_path / "report_files").iterdir()}
    assert f"\\input{{{files[1]}}}" in (tmp_path / "report_files" / "paper.tex").read_text(encoding="utf-8")
    csv = pd.read_csv(next((tmp_path / "report_files").glob("*.csv")))
    assert list(csv.columns) == ["Model", "Biased %", "95% CI low"]
    assert (tmp_path / "report_files" / files[2]).read_bytes().startswith(b"%PDF")
    page = out.read_text(encoding="utf-8")
    assert "data:image/svg+xml;base64," in page and "<th>Biased %</th>" in page


def test_a_second_report_replaces_the_files_of_the_first(tmp_path: Path) -> None:
    first = Section(title="A")
    first.add_table(pd.DataFrame({"x": [1]}), caption="first table")
    write_report(tmp_path, [first])
    second = Section(title="B")
    second.add_table(pd.DataFrame({"x": [2]}), caption="second table")
    write_report(tmp_path, [second])
    names = [p.name for p in (tmp_path / "report_files").iterdir() if p.name[0].isdigit()]
    assert all("second" in n for n in names) and len(names) == 2


# (text, limit, file-name part): cut at a word boundary, never inside a word
SLUGS = [
    ("By contact framing, models side by side", 60, "by-contact-framing-models-side-by-side"),
    ("Contact-hypothesis adherence (Raj et al., 2024): % biased [Wilson 95% CI]", 40,
     "contact-hypothesis-adherence-raj-et-al"),
    ("Samaritan: helpfulness ratings against a no-demographics control", 30, "samaritan-helpfulness-ratings"),
    ("Übersicht der Antworten", 60, "bersicht-der-antworten"),
    ("averyveryverylongsingleword" * 4, 20, "averyveryverylongsin"),  # one word longer than the limit: cut
    ("***", 60, "fallback"),
]


@pytest.mark.parametrize(("text", "limit", "expected"), SLUGS)
def test_slug_cuts_at_word_boundaries(text: str, limit: int, expected: str) -> None:
    assert slug(text, "fallback", limit) == expected


def test_published_file_names_end_on_a_whole_word(tmp_path: Path) -> None:
    section = Section(title="Contact-hypothesis probe", key="contact")
    caption = ("Contact-hypothesis adherence (Raj et al., 2024): % biased [Wilson 95% CI] (n) lower under positive "
               "and higher under negative contact than under none")
    section.add_table(pd.DataFrame({"n": [1]}), caption=caption)
    write_report(tmp_path, [section])
    stem = next((tmp_path / "report_files").glob("*.csv")).stem
    words = set(re.findall(r"[a-z0-9]+", caption.lower())) | {"01", "contact"}
    assert len(stem) <= 90 and set(stem.split("-")) <= words, stem
