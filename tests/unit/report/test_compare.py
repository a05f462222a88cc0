"""Models side by side: a long per-model table turned wide, its cells, its files and what a click filters."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest

from biasatlas.report.compare import KEY, drill_spec, estimate_cell, p_cell, side_by_side
from biasatlas.report.html import Section, write_report

LONG = pd.DataFrame({
    "model": ["beta", "beta", "alpha", "alpha", "alpha"],
    "language": ["en", "de", "en", "de", "is"],
    "contact": ["none", "none", "none", "none", None],
    "cell": ["b-en", "b-de", "a-en", "a-de", "a-is"],
    "p_adj": [0.5, 0.01, 0.2, 0.03, 0.9],
})
VALUES = {"cell": "Biased % [95% CI] (n)", "p_adj": "adjusted p"}


def test_two_models_get_a_column_group_each_in_sorted_order() -> None:
    wide = side_by_side(LONG, ["language", "contact"], VALUES)
    assert list(wide.columns) == [
        (KEY, "Language"), (KEY, "Contact"),
        ("alpha", "Biased % [95% CI] (n)"), ("alpha", "adjusted p"),
        ("beta", "Biased % [95% CI] (n)"), ("beta", "adjusted p"),
    ]
    # rows in the order they first appear; a cell a model lacks is a dash, a missing design value too
    assert wide[(KEY, "Language")].tolist() == ["en", "de", "is"]
    assert wide[("alpha", "Biased % [95% CI] (n)")].tolist() == ["a-en", "a-de", "a-is"]
    assert wide[("beta", "Biased % [95% CI] (n)")].tolist() == ["b-en", "b-de", "–"]
    assert wide[(KEY, "Contact")].tolist() == ["none", "none", "–"]


def test_one_design_column() -> None:
    wide = side_by_side(LONG[LONG["language"] != "is"], ["language"], {"cell": "Biased %"})
    assert wide.to_numpy().tolist() == [["en", "a-en", "b-en"], ["de", "a-de", "b-de"]]


def test_one_model_stays_flat_with_its_model_column() -> None:
    one = LONG[LONG["model"] == "alpha"]
    flat = side_by_side(one, ["language"], VALUES)
    assert not isinstance(flat.columns, pd.MultiIndex)
    assert list(flat.columns) == ["Model", "Language", "Biased % [95% CI] (n)", "adjusted p"]
    assert flat["Model"].tolist() == ["alpha"] * 3


def test_cells_for_people() -> None:
    assert estimate_cell(12.345, 4.5, 20.06, 40) == "12.3 [4.5, 20.1] (40)"
    assert estimate_cell(-3.0, -5.0, 1.0, None, signed=True) == "-3.0 [-5.0, +1.0]"
    assert estimate_cell(math.nan, 1, 2, 3) == "–"
    assert estimate_cell(0.5, math.nan, math.nan, 8, digits=2) == "0.50 (8)"
    # issue 37: the one p format of every display (3 significant digits, a floor, never "0")
    assert p_cell(0.0312) == "0.0312 *" and p_cell(0.2) == "0.2" and p_cell(None) == "–"
    assert p_cell(0.00001) == "1e-05 *" and p_cell(0.0) == "< 1e-300 *"


def test_a_click_knows_the_cells_model_and_design_columns() -> None:
    spec = drill_spec(side_by_side(LONG, ["language", "contact"], VALUES))
    assert spec == {"keys": {0: "Language", 1: "Contact"},
                    "models": {2: "alpha", 3: "alpha", 4: "beta", 5: "beta"}}
    flat = drill_spec(side_by_side(LONG[LONG["model"] == "beta"], ["language"], VALUES))
    assert flat["models"] == {} and flat["keys"][0] == "Model"


def test_wide_tables_in_the_page_and_files(tmp_path: Path) -> None:
    section = Section(title="Contact", key="contact-tables")
    section.add_table(side_by_side(LONG, ["language", "contact"], VALUES), caption="By contact", drill="contact")
    out = write_report(tmp_path, [section])
    page = out.read_text(encoding="utf-8")
    # one header row of models (spanning their columns), one of what each column holds
    assert re.search(r"<th colspan=\"2\"[^>]*>alpha</th>\s*<th colspan=\"2\"[^>]*>beta</th>", page)
    spec = re.search(r"data-drill='([^']+)'", page)
    assert spec is not None
    drill = json.loads(spec.group(1).replace("&quot;", '"'))
    assert drill["probe"] == "contact" and drill["models"]["2"] == "alpha"
    csv = pd.read_csv(next((tmp_path / "report_files").glob("*.csv")))
    assert list(csv.columns) == ["Language", "Contact", "alpha · Biased % [95% CI] (n)", "alpha · adjusted p",
                                 "beta · Biased % [95% CI] (n)", "beta · adjusted p"]
    # the table's own file (paper.tex, the article that inputs every table, sits beside it)
    tex = next(p for p in (tmp_path / "report_files").glob("*.tex") if p.name != "paper.tex").read_text("utf-8")
    assert r"\multicolumn{2}" in tex and "alpha" in tex and "beta" in tex


@pytest.mark.parametrize("name", ["a_b", "x<y>&"])
def test_model_names_are_shown_as_given_and_escaped(tmp_path: Path, name: str) -> None:
    frame = LONG.assign(model=LONG["model"].replace({"alpha": name}))
    section = Section(title="t")
    section.add_table(side_by_side(frame, ["language"], VALUES), drill="contact")
    page = write_report(tmp_path, [section]).read_text(encoding="utf-8")
    assert "x<y>" not in page
    if name == "a_b":
        assert ">a_b</th>" in page and "A b" not in page
