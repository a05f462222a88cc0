"""Report tables as data: estimate cells split into numbers, file names that end with their breakdown, BibTeX."""

from __future__ import annotations

import math

import pandas as pd

from biasatlas.report.citations import REFERENCES, bibtex
from biasatlas.report.publish import file_name
from biasatlas.report.table_data import parts, short_models, split_estimates


def test_estimate_cells_parse_into_their_numbers() -> None:
    assert parts("12.3 [4.5, 20.1] (40)") == (12.3, 4.5, 20.1, 40)
    assert parts("+0.0 [-11.4, +11.4]") == (0.0, -11.4, 11.4, None)
    assert parts("50.0 [30.1, 69.9] (10/20)") == (50.0, 30.1, 69.9, 20)
    assert parts("12.3") is None and parts("0.00117 *") is None and parts(3.0) is None


def test_split_estimates_gives_numeric_columns_named_for_the_breakdown() -> None:
    frame = pd.DataFrame({"Group": ["a", "b"], "Biased %": ["12.3 [4.5, 20.1] (40)", "–"]})
    out = split_estimates(frame)
    assert list(out.columns) == ["Group", "Biased %", "Biased % · 95% CI low", "Biased % · 95% CI high",
                                 "Biased % · n"]
    assert out["Biased %"].dtype.kind == "f" and out["Biased % · 95% CI high"].iloc[0] == 20.1
    assert math.isnan(out["Biased %"].iloc[1]) and pd.isna(out["Biased % · n"].iloc[1])
    two = pd.DataFrame([["de", "1.0 [0.0, 2.0]"]], columns=pd.MultiIndex.from_tuples([("", "Lang"), ("m", "x")]))
    assert list(split_estimates(two).columns) == [("", "Lang"), ("m", "x"), ("m", "x · 95% CI low"),
                                                  ("m", "x · 95% CI high")]


def test_model_ids_get_short_names_unless_two_share_one() -> None:
    assert short_models(["local:smollm2@b179c9523d0e"]) == {"local:smollm2@b179c9523d0e": "smollm2"}
    assert short_models(["local:m@b179c9523d0e", "local:m@aaaaaaaaaaaa"]) == {}


def test_file_names_end_with_their_breakdown() -> None:
    long = ("Contact-hypothesis adherence: % biased (Wilson 95% CI) under positive contact, per model and "
            "language, by group (paper 000 Tables 5-8)")
    assert file_name(long, "item").endswith("by-group")
    assert file_name("By scale × contact × action, models side by side", "item") == "by-scale-contact-action"
    assert len(file_name(long, "item")) <= 60


def test_bibtex_has_every_reference_with_its_venue_and_no_invented_doi() -> None:
    text = bibtex()
    assert text.count("@") == len(REFERENCES)
    assert "@inproceedings{raj2024," in text and "Conference on AI, Ethics, and Society" in text
    assert "journal = {Statistics in Medicine}" in text and "pages = {2635--2650}" in text
    assert "doi" not in text.lower()  # none of the papers' texts states its DOI
    assert "author = {Benjamini, Y. and Hochberg, Y.}" in text
