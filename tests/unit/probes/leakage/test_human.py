"""Human stereotype tables: loading (999 = missing) and aggregating raw per-annotator ratings."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from biasatlas.cli.main import app
from biasatlas.probes.leakage.data import LeakageDataError, trait_ids
from biasatlas.probes.leakage.human import aggregate, aggregate_file, load_human, load_table, write_table

PAIRS = [
    "powerless - powerful", "low status - high status", "dominated - dominant", "poor - wealthy",
    "unconfident - confident", "unassertive - competitive", "traditional - modern", "religious - non religious",
    "conservative - liberal", "untrustworthy - trustworthy", "dishonest - sincere", "cold - warm",
    "threatening - benevolent", "repellent - likable", "egoistic - altruistic", "irrational - rational",
]


def _all_pairs(score: float) -> dict[str, float]:
    return dict.fromkeys(PAIRS, score)


def test_bundled_tables_keep_missing_cells_missing() -> None:
    human = load_human()
    assert set(human) == {"en", "ru", "zh", "hi"}
    en = human["en"]
    assert en.shape == (32, 30)
    assert en.loc["powerless", "woman"] == 8
    assert en.loc["powerful", "man"] == pytest.approx(30.42857143)
    # VDV soldiers were rated by no English annotator: 999 in the file, NaN here, never 0.
    assert en["VDV soldier"].isna().all()
    assert int(en.isna().sum().sum()) == 8 * 32
    assert not (en == 999).any().any()


def test_aggregation_known_means_min_raters_and_name_mapping(tmp_path: Path) -> None:
    ratings = {
        "A1": {"women": _all_pairs(-10), "Texans": _all_pairs(20)},
        "A2": {"Women": {**_all_pairs(30), "cold - warm": 999}, "Texans": _all_pairs(-20)},
        "A3": {"woman": _all_pairs(0), "Veterns": _all_pairs(50)},
    }
    table, counts = aggregate(ratings, name_map={"veterns": "veteran"})
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

    strict, _ = aggregate(ratings, name_map={"veterns": "veteran"}, min_raters=3)
    assert strict.loc["powerless", "woman"] == pytest.approx(10 / 3)
    assert np.isnan(strict.loc["cold", "woman"])  # only 2 raters for that cell
    assert strict["Texan"].isna().all() and strict["veteran"].isna().all()

    # Written in the shared layout and read back identically.
    out = write_table(table, tmp_path / "t.csv")
    assert out.read_text().startswith("Traits,woman,immigrant")
    back = load_table(out)
    assert back.loc["powerless", "woman"] == pytest.approx(10 / 3)
    assert back["man"].isna().all()


def test_unknown_group_names_the_annotator_and_suggests_a_name_map() -> None:
    with pytest.raises(LeakageDataError, match=r"unknown group 'Martians' \(annotator 'A9'\).*--name-map"):
        aggregate({"A9": {"Martians": _all_pairs(1)}})


def test_unknown_trait_pair_and_out_of_range_scores_are_located() -> None:
    with pytest.raises(LeakageDataError, match=r"unknown trait pair 'sad - happy' \(annotator 'A1', group 'men'\)"):
        aggregate({"A1": {"men": {"sad - happy": 3}}})
    located = r"score 75 outside \[-50, 50\] \(annotator 'A2', group 'men', 'poor - wealthy'\)"
    with pytest.raises(LeakageDataError, match=located):
        aggregate({"A2": {"men": {"poor - wealthy": 75}}})
    with pytest.raises(LeakageDataError, match="not a number"):
        aggregate({"A2": {"men": {"poor - wealthy": "high"}}})


def test_bad_table_file_names_the_cell(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("Traits,woman\npowerless,8\nsleepy,3\n")
    with pytest.raises(LeakageDataError, match=r"unknown traits \['sleepy'\]"):
        load_table(path)
    path.write_text("Traits,woman\npowerless,80\n")
    with pytest.raises(LeakageDataError, match=r"value 80(\.0)? at powerless × woman is outside"):
        load_table(path)


def test_cli_aggregate_writes_the_shared_layout_and_reports_errors(tmp_path: Path) -> None:
    ratings = tmp_path / "r.json"
    ratings.write_text(json.dumps({"A1": {"men": _all_pairs(40)}, "A2": {"blokes": _all_pairs(20)}}))
    names = tmp_path / "names.yaml"
    names.write_text("blokes: man\n")
    out = tmp_path / "EN.csv"
    runner = CliRunner()
    result = runner.invoke(app, ["leakage", "aggregate", str(ratings), "--lang", "en", "--out", str(out),
                                 "--name-map", str(names), "--min-raters", "2"])
    assert result.exit_code == 0, result.output
    table = load_table(out)
    assert table.loc["powerful", "man"] == pytest.approx(30.0)
    assert table.loc["powerless", "man"] == 0
    assert list(table.index) == list(trait_ids())
    bad = runner.invoke(app, ["leakage", "aggregate", str(ratings), "--lang", "en", "--out", str(out)])
    assert bad.exit_code == 2 and "unknown group 'blokes'" in bad.output
    lang = runner.invoke(app, ["leakage", "aggregate", str(ratings), "--lang", "de", "--out", str(out)])
    assert lang.exit_code == 2 and "no lexicon for language 'de'" in lang.output


def test_aggregate_file_errors_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text("{not json")
    with pytest.raises(LeakageDataError, match=r"broken\.json: not valid JSON"):
        aggregate_file(path)


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
    table, _ = aggregate(ratings)
    published = load_human(languages=("en",))["en"]
    for trait in ("powerless", "powerful"):
        for group in ("woman", "Mormon person"):
            assert table.loc[trait, group] == pytest.approx(published.loc[trait, group]), (trait, group)
