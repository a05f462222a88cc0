"""LaTeX copies of report tables: text pdflatex typesets as it is, fitting a plain article's text width. pdflatex
itself runs in tests/integration/test_report_browser.py; these cases check what the files say."""

from __future__ import annotations

import pandas as pd
import pytest

from biasatlas.report.latex import escape, label_for, latex_table

# (text, what pdflatex must be given) — TeX specials, signs pdflatex has no glyph for in text mode,
# letters T1 has (kept), characters it has not (a '?'), control characters (dropped)
ESCAPES = [
    ("50% & more_x", r"50\% \& more\_x"),
    ("#1 {a} $5", r"\#1 \{a\} \$5"),
    ("a\\b", r"a\textbackslash{}b"),
    ("~^|", r"\textasciitilde{}\textasciicircum{}\textbar{}"),
    ("p < 0.05 > q", r"p \textless{} 0.05 \textgreater{} q"),
    ("Δ % biased", r"$\Delta$ \% biased"),
    ("positive − none", r"positive $-$ none"),
    ("scale × contact", r"scale $\times$ contact"),
    ("5 ± 2", r"5 $\pm$ 2"),
    ("n ≥ 30, p ≤ 0.1", r"n $\geq$ 30, p $\leq$ 0.1"),
    ("Þú ert á Íslandi, Größe, œuvre, Łódź", "Þú ert á Íslandi, Größe, œuvre, Łódź"),
    ("„Ja“ – „Nein“…", r",,Ja`` -- ,,Nein``\ldots{}"),
    ("汉字 ok", "?? ok"),
    ("emoji 🙂", "emoji ?"),
    ("line one\nline two\r\nthree", "line one line two three"),
    ("nul\x00 and bell\x07", "nul and bell"),
    ("zero\u200bwidth", "zerowidth"),
]


@pytest.mark.parametrize(("text", "expected"), ESCAPES)
def test_escape(text: str, expected: str) -> None:
    assert escape(text) == expected


def test_a_table_has_booktabs_a_caption_a_label_and_escaped_text() -> None:
    tex = latex_table(pd.DataFrame({"group": ["50% & more_x"], "n": [3]}), "Rates of #1 < 5", "tab:x")
    assert r"\caption{Rates of \#1 \textless{} 5}\label{tab:x}" in tex
    assert r"50\% \& more\_x & 3 \\" in tex
    assert [line for line in tex.splitlines() if line in (r"\toprule", r"\midrule", r"\bottomrule")] == [
        r"\toprule", r"\midrule", r"\bottomrule"]
    assert r"\begin{tabular}{lr}" in tex
    # never wider than the text: scaled to it where wider
    assert r"\ifdim\wd0>\linewidth\resizebox{\linewidth}{!}{\usebox0}\else\usebox0\fi" in tex


def test_long_text_wraps_in_a_paragraph_column() -> None:
    answer = "I cannot say that. " * 16  # a 300-character answer
    tex = latex_table(pd.DataFrame({"model": ["a"], "answer": [answer], "p": [0.5]}), "Answers", "tab:a")
    spec = tex.split(r"\begin{tabular}{", 1)[1].split("\n", 1)[0]
    assert spec.startswith("l>{\\raggedright\\arraybackslash}p{") and spec.endswith("cm}r}")


def test_missing_values_and_booleans_are_words_and_numbers_plain() -> None:
    frame = pd.DataFrame({"x": ["a", None], "flag": [True, False], "effect": [-0.25, float("nan")]})
    tex = latex_table(frame, "c", "tab:c")
    assert r"a & yes & -0.25 \\" in tex and r"-- & no & -- \\" in tex  # plain numbers: siunitx reads them


def test_two_level_columns_get_a_header_per_model() -> None:
    columns = pd.MultiIndex.from_tuples([("", "Language"), ("m_1", "n"), ("m_1", "Biased %"), ("m2", "n")])
    tex = latex_table(pd.DataFrame([["de", 3, 50.0, 4]], columns=columns), "side", "tab:s")
    assert r" & \multicolumn{2}{c}{m\_1} & \multicolumn{1}{c}{m2} \\" in tex
    assert r"\cmidrule(lr){2-3} \cmidrule(lr){4-4}" in tex
    assert r"Language & n & Biased \% & n \\" in tex


def test_many_rows_come_in_parts_with_one_label() -> None:
    tex = latex_table(pd.DataFrame({"i": range(100), "x": ["a", "b"] * 50}), "long", "tab:l")
    assert tex.count(r"\begin{table}") == 4 and tex.count(r"\label{") == 1
    assert r"\caption{long (part 1 of 4)}\label{tab:l}" in tex and r"\caption{long (part 4 of 4)}" in tex


def test_estimate_cells_become_numeric_columns_and_constants_go_to_the_caption() -> None:
    frame = pd.DataFrame({"Model": ["local:smollm2@b179c9523d0e"] * 2, "Language": ["de", "en"],
                          "Biased %": ["12.5 [3.1, 40.2] (8)", "+0.0 [-11.4, +11.4] (30)"]})
    tex = latex_table(frame, "Rates", "tab:r")
    assert r"\caption{Rates Model: smollm2.}" in tex  # the constant model, by its short name
    assert r"Language & Biased \% & low & high & n \\" in tex
    assert r"de & 12.5 & 3.1 & 40.2 & 8 \\" in tex and r"en & 0 & -11.4 & 11.4 & 30 \\" in tex
    assert "b179c9523d0e" not in tex


def test_long_words_in_a_wrapping_column_can_break_and_wide_tables_turn() -> None:
    tex = latex_table(pd.DataFrame({"a": ["x" * 40 + " and more words to wrap"]}), "w", "tab:w")
    assert r"\allowbreak{}" in tex
    wide = pd.DataFrame({f"column {i}": ["some text here, long enough"] for i in range(12)})
    assert r"\begin{landscape}" in latex_table(wide, "wide", "tab:wide")


def test_labels_are_tex_safe() -> None:
    assert label_for("03-02-contact-by-contact_framing") == "tab:03-02-contact-by-contact-framing"
