"""The human fluency / relevance study (Table 5): the blinded draw, a labelled table of sheets as annotators
return them, the de-blinded counts, and Cohen's kappa recovered on planted agreement."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from biasatlas.backends.fake import FakeBackend
from biasatlas.probes.debias import evaluate as evaluate
from biasatlas.probes.debias import human_study as hs
from biasatlas.probes.debias import quality as quality
from biasatlas.probes.debias.human_study_score import check_sheets, deblind, score
from biasatlas.runner import run_plan
from biasatlas.store import Store


def build_qa_study(path: Path, items: int = 12, setting: str = "cross-scenario") -> Path:
    """A study with the QA check of one comparison: the base model answers vaguely, the adapter the reference."""
    qa = quality.qa_prompts(limit=items)
    with Store(path) as store:
        for role, name in (("before", "base"), ("after", "base+lora")):
            cfg = evaluate.run_config(role, setting, "qa", quality.fingerprint(qa), "fake", None, "en")
            cfg["probe"] = "debias"
            answer = (lambda r: r.prompt.meta["reference"]) if role == "after" else (lambda r: "I do not know")
            run_plan(qa, FakeBackend(answer, name=name), store, quality.QA_SETTINGS, config=cfg, progress=False)
    return path


@pytest.fixture(scope="module")
def drawn(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pd.DataFrame, dict[str, Any]]:
    path = build_qa_study(tmp_path_factory.mktemp("hs") / "study")
    with Store(path) as store:
        comparison = hs.qa_comparison(store)
        sheet, key = hs.draw(hs.qa_pairs(store, comparison), comparison, n=8, seed=3)
        assert hs.store_key(store, key) and not hs.store_key(store, key)  # the same draw is stored once
    return path, sheet, key


def test_draw_is_blinded_seeded_and_recoverable(drawn: tuple[Path, pd.DataFrame, dict[str, Any]]) -> None:
    path, sheet, key = drawn
    assert list(sheet.columns) == hs.SHEET_COLUMNS and len(sheet) == 8 and sheet["pair_id"].is_unique
    assert not {"before", "after", "model"} & set(sheet.columns)  # nothing in the sheet tells the side
    sides = [key["pairs"][p]["a"] for p in sheet["pair_id"]]
    assert {"before", "after"} == set(sides)  # both orders occur (seed 3)
    for row, side in zip(sheet.itertuples(), sides, strict=True):
        before = row.answer_a if side == "before" else row.answer_b
        assert before == "I do not know"  # the key says which answer is the base model's
    with Store(path) as store:
        comparison = hs.qa_comparison(store)
        again, same = hs.draw(hs.qa_pairs(store, comparison), comparison, n=8, seed=3)
        other, _ = hs.draw(hs.qa_pairs(store, comparison), comparison, n=8, seed=4)
        assert hs.keys(store)[key["sheet_id"]]["pairs"] == key["pairs"]
    assert again.equals(sheet) and same == key
    assert other["sheet_id"].iloc[0] != key["sheet_id"]


def _filled(sheet: pd.DataFrame, key: dict[str, Any], labels: dict[str, list[str]]) -> pd.DataFrame:
    """The sheet with each column's de-blinded labels written back as the annotator would: A / B / both / neither."""
    out = sheet.copy()
    for column, wanted in labels.items():
        cells = []
        for pair, label in zip(out["pair_id"], wanted, strict=True):
            a = key["pairs"][pair]["a"]
            cells.append({"both good": "both", "both bad": "neither"}.get(label) or ("A" if label == a else "B"))
        out[column] = cells
    return out


def _correct(sheet: pd.DataFrame, key: dict[str, Any]) -> pd.DataFrame:
    n = len(sheet)
    fluent = (["after", "before", "both good", "both bad"] * n)[:n]
    relevant = ["after"] * (n - 2) + ["both good", "before"]
    return _filled(sheet, key, {"fluency_1": fluent, "fluency_2": fluent, "relevance_1": relevant,
                                "relevance_2": [*relevant[:-1], "after"]})


def _case(name: str, sheet: pd.DataFrame, key: dict[str, Any]) -> list[tuple[str, pd.DataFrame]]:
    good = _correct(sheet, key)
    if name == "filled correctly":
        return [("s.csv", good)]
    if name == "ratings in any case":
        return [("s.csv", good.assign(fluency_1=good["fluency_1"].str.lower(), relevance_2=good["relevance_2"]
                                      .str.upper()))]
    if name == "one copy per annotator":
        first = good.assign(fluency_2="", relevance_2="")
        second = good.assign(fluency_1="", relevance_1="")
        return [("annotator1.csv", first), ("annotator2.csv", second)]
    if name == "rating out of range":
        bad = good.copy()
        bad.loc[2, "fluency_1"] = "5"
        return [("s.csv", bad)]
    if name == "duplicated id":
        return [("s.csv", pd.concat([good, good.iloc[[1]]], ignore_index=True))]
    if name == "annotator columns missing":
        return [("s.csv", good.drop(columns=["fluency_2", "relevance_2"]))]
    if name == "a sheet of another study":
        return [("s.csv", good.assign(sheet_id="S0123456789"))]
    if name == "unknown pair id":
        bad = good.copy()
        bad.loc[0, "pair_id"] = "P999"
        return [("s.csv", bad)]
    if name == "a rating left empty":
        bad = good.copy()
        bad.loc[4, "relevance_2"] = " "
        return [("s.csv", bad)]
    if name == "one annotator's copy only":
        return [("annotator1.csv", good.assign(fluency_2="", relevance_2=""))]
    if name == "a pair dropped":
        return [("s.csv", good.iloc[1:])]
    if name == "two copies disagree":
        other = good.copy()
        other.loc[0, "fluency_1"] = "neither" if other.loc[0, "fluency_1"] != "neither" else "both"
        return [("a.csv", good), ("b.csv", other)]
    raise AssertionError(name)


# the labelled table: what the annotators hand back -> accepted, or the problem told (one line, exit 2 in the CLI)
SHEETS = [
    ("filled correctly", None),
    ("ratings in any case", None),
    ("one copy per annotator", None),
    ("rating out of range", r"s.csv line 4 \(pair P003\): fluency_1 '5' is not one of: A, B, both, neither"),
    ("duplicated id", r"s.csv line 10: pair_id P002 repeats line 3"),
    ("annotator columns missing", r"s.csv: lacks the column\(s\) fluency_2, relevance_2"),
    ("a sheet of another study", r"8 problem\(s\).*sheet_id 'S0123456789' is not a sheet of this study"),
    ("unknown pair id", r"s.csv line 2: pair_id 'P999' is not in sheet"),
    ("a rating left empty", r"pair P005: relevance_2 not rated in any file"),
    ("one annotator's copy only", r"1 problem\(s\).*fluency_2, relevance_2: empty in every file"),
    ("a pair dropped", r"pair P001: not rated in any file"),
    ("two copies disagree", r"b.csv line 2 \(pair P001\): fluency_1 is \w+ here but \w+ in a.csv line 2"),
]


@pytest.mark.parametrize(("case", "problem"), SHEETS, ids=[c for c, _ in SHEETS])
def test_sheets_as_annotators_return_them(drawn: tuple[Path, pd.DataFrame, dict[str, Any]], case: str,
                                          problem: str | None) -> None:
    path, sheet, key = drawn
    with Store(path) as store:
        known = hs.keys(store)
    files = _case(case, sheet, key)
    if problem is None:
        got_key, ratings = check_sheets(known, files)
        assert got_key["sheet_id"] == key["sheet_id"] and len(ratings) == len(sheet)
        assert score(got_key, ratings)["criteria"] == score(*check_sheets(known, _case("filled correctly", sheet,
                                                                                        key)))["criteria"]
    else:
        with pytest.raises(hs.StudySheetError, match=problem):
            check_sheets(known, files)


def test_counts_are_table_5s_columns(drawn: tuple[Path, pd.DataFrame, dict[str, Any]]) -> None:
    path, sheet, key = drawn
    with Store(path) as store:
        result = score(*check_sheets(hs.keys(store), [("s.csv", _correct(sheet, key))]))
    fluency, relevance = result["criteria"]["fluency"], result["criteria"]["relevance"]
    assert fluency["annotator_1"] == {"before": 2, "after": 2, "both good": 2, "both bad": 2}
    assert fluency["agreed"] == fluency["annotator_1"] and fluency["disagreed"] == 0
    assert relevance["annotator_1"] == {"before": 1, "after": 6, "both good": 1, "both bad": 0}
    assert relevance["annotator_2"] == {"before": 0, "after": 7, "both good": 1, "both bad": 0}
    assert relevance["disagreed"] == 1 and relevance["agreed"]["after"] == 6
    assert fluency["kappa"]["kappa"] == 1.0 and result["n"] == 8 and result["paper"]["kappa"] == 0.76


def test_deblinding() -> None:
    assert deblind("A", "before") == "before" and deblind("B", "before") == "after"
    assert deblind("A", "after") == "after" and deblind("B", "after") == "before"
    assert deblind("both", "after") == "both good" and deblind("neither", "before") == "both bad"


def test_kappa_recovered_on_planted_agreement() -> None:
    """Two annotators agreeing on 90 of 100 pairs: kappa = (p_o - p_e) / (1 - p_e) by hand, and statsmodels'."""
    from statsmodels.stats.inter_rater import cohens_kappa

    rng = np.random.default_rng(5)
    cats = list(hs.COLUMNS_OF_TABLE)
    first = list(rng.choice(cats, size=100, p=[0.35, 0.35, 0.2, 0.1]))
    second = list(first)
    for i in rng.choice(100, size=10, replace=False):  # 10 disagreements: the next category
        second[i] = cats[(cats.index(first[i]) + 1) % 4]
    pairs = {f"P{i:03d}": {"prompt_id": str(i), "item_id": str(i), "a": "before" if i % 3 else "after"}
             for i in range(100)}
    key = {"sheet_id": "S1", "setting": "mixed", "before_model": "b", "after_model": "a", "seed": 0, "n": 100,
           "pairs": pairs}
    to_rating = {"both good": "both", "both bad": "neither"}
    ratings = {}
    for (pid, pair), x, y in zip(pairs.items(), first, second, strict=True):
        def blind(label: str, a: str = pair["a"]) -> str:
            return to_rating.get(label) or ("A" if label == a else "B")

        ratings[pid] = {"fluency_1": blind(x), "fluency_2": blind(y), "relevance_1": blind(x),
                        "relevance_2": blind(x)}
    result = score(key, ratings)
    k = result["criteria"]["fluency"]["kappa"]
    p1 = np.array([first.count(c) for c in cats]) / 100
    p2 = np.array([second.count(c) for c in cats]) / 100
    by_hand = (0.9 - p1 @ p2) / (1 - p1 @ p2)
    table = pd.crosstab(pd.Categorical(first, cats), pd.Categorical(second, cats), dropna=False).to_numpy()
    reference = cohens_kappa(table)
    assert k["agreement_pct"] == 90.0 and k["n"] == 100
    assert k["kappa"] == pytest.approx(by_hand, abs=1e-3) == pytest.approx(reference.kappa, abs=1e-3)
    assert k["kappa_ci"][0] == pytest.approx(reference.kappa_low, abs=1e-3)
    assert k["kappa_ci"][0] < by_hand < k["kappa_ci"][1]
    assert result["criteria"]["relevance"]["kappa"]["kappa"] == 1.0
