"""Aggregating raw per-annotator ratings into human tables: the paper's design (section 3.2) by default,
missing cells explained, unknown groups skipped, unreadable files as one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from biasatlas.cli.main import app
from biasatlas.probes.leakage.data import LeakageDataError, trait_ids
from biasatlas.probes.leakage.human import load_human, load_table, write_table
from biasatlas.probes.leakage.ratings import MIN_RATERS, aggregate, aggregate_file

PAIRS = [
    "powerless - powerful", "low status - high status", "dominated - dominant", "poor - wealthy",
    "unconfident - confident", "unassertive - competitive", "traditional - modern", "religious - non religious",
    "conservative - liberal", "untrustworthy - trustworthy", "dishonest - sincere", "cold - warm",
    "threatening - benevolent", "repellent - likable", "egoistic - altruistic", "irrational - rational",
]
runner = CliRunner()


def _all_pairs(score: float) -> dict[str, float]:
    return dict.fromkeys(PAIRS, score)


def _raters(group: str, count: int, score: float = 10.0, prefix: str = "A") -> dict[str, dict[str, object]]:
    return {f"{prefix}{group}{i}": {group: _all_pairs(score)} for i in range(count)}


def _one_line_error(result) -> str:  # type: ignore[no-untyped-def]
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    return lines[0]


# ---- the paper's design by default ---------------------------------------------------------------------------
def test_default_needs_five_raters_and_rates_non_shared_groups_only_at_home() -> None:
    ratings = {**_raters("women", 5), **_raters("men", 4), **_raters("Texans", 5),
               **_raters("VDV soldiers", 6)}
    result = aggregate(ratings, language="en")
    assert MIN_RATERS == 5
    table = result.table
    assert table["woman"].notna().all() and table.loc["powerful", "woman"] == pytest.approx(10.0)
    assert table["Texan"].notna().all()  # a non-shared group of English, rated in English
    assert table["man"].isna().all()  # 4 raters < 5
    assert table["VDV soldier"].isna().all()  # a Russian group: collected only in Russian (paper 3.2)
    why = {r["group"]: r for r in result.missing.to_dict("records")}
    assert why["man"]["raters"] == 4 and "fewer than" in why["man"]["reason"] and "5" in why["man"]["reason"]
    assert why["VDV soldier"]["raters"] == 6 and "non-shared" in why["VDV soldier"]["reason"]
    assert "ru" in why["VDV soldier"]["reason"] and "--nonshared all" in why["VDV soldier"]["reason"]
    assert why["Mormon person"]["raters"] == 0 and "not rated" in why["Mormon person"]["reason"]
    assert set(why) == set(table.columns[table.isna().any()])  # every missing column is explained
    assert int(why["man"]["missing_cells"]) == 32

    # Other choices stay reproducible: the published tables kept every rating (min 1, non-shared anywhere).
    loose = aggregate(ratings, language="en", min_raters=1, nonshared="all")
    assert loose.table["man"].notna().all() and loose.table["VDV soldier"].notna().all()
    assert loose.raters["VDV soldier"] == 6


def test_the_minimum_counts_the_raters_of_each_cell(tmp_path: Path) -> None:
    ratings = {
        "A1": {"women": _all_pairs(-10), "Texans": _all_pairs(20)},
        "A2": {"Women": {**_all_pairs(30), "cold - warm": 999}, "Texans": _all_pairs(-20)},
        "A3": {"woman": _all_pairs(0), "Veterns": _all_pairs(50)},
    }
    result = aggregate(ratings, language="en", min_raters=1, name_map={"veterns": "veteran"})
    table, counts = result.table, result.raters
    # woman: A1 left=10, A2 right=30, A3 0 -> left mean (10+0+0)/3, right mean (0+30+0)/3
    assert table.loc["powerless", "woman"] == pytest.approx(10 / 3)
    assert table.loc["powerful", "woman"] == pytest.approx(10.0)
    # A2 skipped cold - warm (999): that cell has two raters.
    assert table.loc["cold", "woman"] == pytest.approx(5.0)
    assert table.loc["warm", "woman"] == pytest.approx(0.0)
    assert table.loc["powerless", "Texan"] == pytest.approx(10.0)
    assert table.loc["powerful", "Texan"] == pytest.approx(10.0)
    assert table.loc["altruistic", "veteran"] == 50
    assert table["man"].isna().all()
    assert counts["woman"] == 3 and counts["Texan"] == 2 and counts["veteran"] == 1

    three = aggregate(ratings, language="en", name_map={"veterns": "veteran"}, min_raters=3)
    assert three.table.loc["powerless", "woman"] == pytest.approx(10 / 3)
    assert np.isnan(three.table.loc["cold", "woman"])  # only 2 raters for that cell
    assert three.table["Texan"].isna().all() and three.table["veteran"].isna().all()
    partial = next(r for r in three.missing.to_dict("records") if r["group"] == "woman")
    assert partial["missing_cells"] == 2 and "cells" in partial["reason"]

    # Written in the shared layout and read back identically.
    out = write_table(table, tmp_path / "t.csv")
    assert out.read_text().startswith("Traits,woman,immigrant")
    back = load_table(out)
    assert back.loc["powerless", "woman"] == pytest.approx(10 / 3)
    assert back["man"].isna().all()


def test_aggregation_reproduces_the_published_table_cells() -> None:
    """The 'powerless - powerful' scores of every English annotator of women and of Mormons, transcribed
    from the published raw file (data_full_english.json, Cao et al.), give the shared table's cells."""
    women = {"Annotator1": 13.0, "Annotator5": -25.0, "Annotator15": -13.0, "Annotator23": -10.0,
             "Annotator29": 0.0, "Annotator33": 25.0}
    mormons = {"Annotator2": 28.0, "Annotator9": -7.0, "Annotator14": 20.0, "Annotator23": -5.0,
               "Annotator26": -10.0}
    ratings: dict[str, dict[str, dict[str, float]]] = {}
    for group, scores in (("women", women), ("Mormon people", mormons)):
        for annotator, score in scores.items():
            ratings.setdefault(annotator, {})[group] = {"powerless - powerful": score}
    table = aggregate(ratings, language="en").table  # the paper's defaults: 6 and 5 raters suffice
    published = load_human(languages=("en",))["en"]
    for trait in ("powerless", "powerful"):
        for group in ("woman", "Mormon person"):
            assert table.loc[trait, group] == pytest.approx(published.loc[trait, group]), (trait, group)


# ---- unknown groups are skipped with a warning ----------------------------------------------------------------
def test_groups_not_among_the_thirty_are_skipped_and_listed() -> None:
    ratings = {**_raters("women", 5), "A9": {"Martians": _all_pairs(1), "Elves": _all_pairs(2)},
               "A8": {"Martians": _all_pairs(3)}}
    result = aggregate(ratings, language="en")
    assert result.skipped_groups == {"Martians": 2, "Elves": 1}
    assert result.table["woman"].notna().all()
    with pytest.raises(LeakageDataError, match=r"not among the 30.*'Elves'.*'Martians'.*--name-map"):
        aggregate(ratings, language="en", strict=True)


def test_unknown_trait_pair_and_out_of_range_scores_are_located() -> None:
    with pytest.raises(LeakageDataError, match=r"unknown trait pair 'sad - happy' \(annotator 'A1', group 'men'\)"):
        aggregate({"A1": {"men": {"sad - happy": 3}}}, language="en")
    located = r"score 75 outside \[-50, 50\] \(annotator 'A2', group 'men', 'poor - wealthy'\)"
    with pytest.raises(LeakageDataError, match=located):
        aggregate({"A2": {"men": {"poor - wealthy": 75}}}, language="en")
    with pytest.raises(LeakageDataError, match="not a number"):
        aggregate({"A2": {"men": {"poor - wealthy": "high"}}}, language="en")


# ---- the command -----------------------------------------------------------------------------------------------
def test_cli_aggregate_writes_the_shared_layout_skips_unknown_groups_and_explains_missing_cells(
    tmp_path: Path,
) -> None:
    ratings = tmp_path / "r.json"
    ratings.write_text(json.dumps({"A1": {"men": _all_pairs(40)}, "A2": {"blokes": _all_pairs(20)}}))
    names = tmp_path / "names.yaml"
    names.write_text("blokes: man\n")
    out = tmp_path / "EN.csv"
    result = runner.invoke(app, ["leakage", "aggregate", str(ratings), "--lang", "en", "--out", str(out),
                                 "--name-map", str(names), "--min-raters", "2"])
    assert result.exit_code == 0, result.output
    table = load_table(out)
    assert table.loc["powerful", "man"] == pytest.approx(30.0)
    assert table.loc["powerless", "man"] == 0
    assert list(table.index) == list(trait_ids())
    assert "not rated" in result.output and "woman" in result.output  # missing cells and why
    skipped = runner.invoke(app, ["leakage", "aggregate", str(ratings), "--lang", "en", "--out", str(out),
                                  "--min-raters", "1"])
    assert skipped.exit_code == 0, skipped.output
    assert "warning" in skipped.output and "'blokes'" in skipped.output and "not among the 30" in skipped.output
    assert load_table(out).loc["powerful", "man"] == pytest.approx(40.0)
    strict = runner.invoke(app, ["leakage", "aggregate", str(ratings), "--lang", "en", "--out", str(out),
                                 "--strict"])
    assert "'blokes'" in _one_line_error(strict)
    lang = runner.invoke(app, ["leakage", "aggregate", str(ratings), "--lang", "de", "--out", str(out)])
    assert "no lexicon for language 'de'" in _one_line_error(lang)


def test_aggregate_file_errors_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text("{not json")
    with pytest.raises(LeakageDataError, match=r"broken\.json: not valid JSON"):
        aggregate_file(path, language="en")


@pytest.mark.parametrize("case", ["utf16", "utf16-no-bom", "deep-lists", "deep-objects", "directory", "latin1"])
def test_unreadable_ratings_files_are_one_line_errors(tmp_path: Path, case: str) -> None:
    path = tmp_path / "ratings.json"
    good = json.dumps({"A1": {"men": _all_pairs(40)}}, ensure_ascii=False)
    if case == "utf16":
        path.write_bytes(good.encode("utf-16"))
    elif case == "utf16-no-bom":
        path.write_bytes(good.encode("utf-16-le"))
    elif case == "deep-lists":
        path.write_text("[" * 100_000 + "]" * 100_000)
    elif case == "deep-objects":
        path.write_text('{"a":' * 100_000 + "1" + "}" * 100_000)
    elif case == "directory":
        path.mkdir()
    else:
        path.write_bytes(json.dumps({"A1": {"Mus\u00e9e": _all_pairs(1)}}, ensure_ascii=False).encode("latin-1"))
    result = runner.invoke(app, ["leakage", "aggregate", str(path), "--lang", "en", "--out", str(tmp_path / "o.csv")])
    line = _one_line_error(result)
    assert "ratings.json" in line and "Traceback" not in result.output
    if case.startswith("utf16"):
        assert "UTF-16" in line
    if case.startswith("deep"):
        assert "nested" in line


def test_a_utf8_byte_order_mark_is_read(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(json.dumps(_raters("men", 5)).encode("utf-8-sig"))
    assert aggregate_file(path, language="en").table["man"].notna().all()
