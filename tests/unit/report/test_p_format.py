"""One p format on every display (issue 37, point 6): 3 significant digits, a floor, never "0"; files keep
every digit."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pandas as pd
import pytest
from scipy.stats import binomtest

from biasatlas.report.cells import format_p, is_p_column, page_cells
from biasatlas.report.compare import p_cell
from biasatlas.report.latex import latex_table
from biasatlas.report.publish import TableFile, write_files


def test_three_significant_digits_and_a_floor_never_zero() -> None:
    tiny = binomtest(0, 80).pvalue  # 2 x 0.5^80: a real p far below 4 decimals
    assert format_p(tiny) == f"{tiny:.3g}" and format_p(tiny) != "0"
    assert format_p(0.013579) == "0.0136" and format_p(1.0) == "1"
    assert format_p(3.6e-34) == "3.6e-34"
    for floor in (0.0, 5e-324, sys.float_info.min / 2, 1e-301):
        assert format_p(floor) == "< 1e-300"
    assert format_p(None) == format_p(float("nan")) == "–"
    assert p_cell(0.0) == "< 1e-300 *" and p_cell(0.2) == "0.2"


@pytest.mark.parametrize("name", ["p", "p_adj", "adjusted p", "p adj (BH)", "TOST p adj", "p (Wilcoxon)",
                                  "p (t; sign test without spread)", "q (BH)", ("m", "adjusted p")])
def test_p_columns_are_known_by_name(name: object) -> None:
    assert is_p_column(name)


@pytest.mark.parametrize("name", ["n", "estimate", "p_biased", "mean P(biased)", "Q", "top_share", "paired cells"])
def test_other_columns_are_not(name: str) -> None:
    assert not is_p_column(name)


def test_the_page_and_latex_show_p_in_the_one_format_the_csv_keeps_every_digit(tmp_path: Path) -> None:
    tiny = binomtest(0, 110).pvalue
    frame = pd.DataFrame({"estimate": [0.123456, 2.0], "p": [tiny, 0.0], "adjusted p": [0.0136789, 1.0]})
    shown = page_cells(frame)
    assert list(shown["p"]) == [f"{tiny:.3g}", "< 1e-300"] and list(shown["adjusted p"]) == ["0.0137", "1"]
    assert list(shown["estimate"]) == ["0.1235", "2"]  # other numbers: 4 significant digits as before
    tex = latex_table(frame, "caption", "tab:x")
    assert "$<1e-300$" in tex and f"{tiny:.3g}" in tex
    write_files(tmp_path, [("01-t", TableFile(frame, "caption"))])
    with (tmp_path / "01-t.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert float(rows[0]["p"]) == tiny and float(rows[0]["adjusted p"]) == 0.0136789
