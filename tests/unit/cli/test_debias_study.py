"""`biasatlas debias-study sheet` / `score` through the CLI: the sheet's writer guards, a round trip with two
annotators' copies, one-line errors (exit 2, nothing stored), and `summary --json` carrying the score."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from biasatlas.backends.fake import FakeBackend
from biasatlas.cli.main import app
from biasatlas.probes.debias import evaluate as evaluate
from biasatlas.probes.debias import human_study as hs
from biasatlas.probes.debias import quality as quality
from biasatlas.runner import run_plan
from biasatlas.store import DB_NAME, Store

runner = CliRunner()


def _flat(text: str) -> str:
    return re.sub(r"[\s│╭╮╰╯─]+", " ", text)


def _study(path: Path, settings: tuple[str, ...] = ("cross-scenario",)) -> Path:
    qa = quality.qa_prompts(limit=10)
    with Store(path) as store:
        for setting in settings:
            for role, name in (("before", "base"), ("after", f"base+{setting}")):
                cfg = evaluate.run_config(role, setting, "qa", quality.fingerprint(qa), "fake", None, "en")
                cfg["probe"] = "debias"
                answer = (lambda r: r.prompt.meta["reference"]) if role == "after" else (lambda r: "=1+1 no idea")
                run_plan(qa, FakeBackend(answer, name=name), store, quality.QA_SETTINGS, config=cfg, progress=False)
    return path


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _study(tmp_path_factory.mktemp("dbs") / "study")


def _sheet(study: Path, out: Path, *extra: str) -> tuple[int, str]:
    result = runner.invoke(app, ["debias-study", "sheet", "--study", str(study), "--n", "6", "--out", str(out),
                                 *extra])
    return result.exit_code, _flat(result.output)


def test_sheet_writer_guards(study: Path, tmp_path: Path) -> None:
    out = tmp_path / "new" / "folder" / "sheet.csv"
    code, text = _sheet(study, out)
    assert code == 0, text
    assert out.is_file() and Path(str(out) + ".md").is_file()  # the folder made, the guide beside
    raw = out.read_text(encoding="utf-8")
    assert "'=1+1 no idea" in raw and ",=1+1" not in raw  # a formula-like answer is escaped
    code, text = _sheet(study, out)
    assert code == 2 and "exists; pass --force" in text
    assert _sheet(study, out, "--force")[0] == 0
    code, text = _sheet(study, study / DB_NAME, "--force")
    assert code == 2 and "SQLite database" in text
    assert _sheet(study, tmp_path / "missing-study-sheet.csv", "--setting", "mixed")[1].count("no QA comparison")
    several = _study(tmp_path / "two", ("mixed", "cross-scenario"))
    code, text = _sheet(several, tmp_path / "s2.csv")
    assert code == 2 and "choose one with --setting" in text
    assert _sheet(several, tmp_path / "s2.csv", "--setting", "mixed")[0] == 0


def _rate(sheet: pd.DataFrame, columns: tuple[str, ...], value: str) -> pd.DataFrame:
    return sheet.assign(**{c: value for c in columns})


def test_round_trip_two_copies_score_and_summary(study: Path, tmp_path: Path) -> None:
    out = tmp_path / "sheet.csv"
    assert _sheet(study, out, "--seed", "1")[0] == 0
    sheet = pd.read_csv(out, dtype=str, keep_default_na=False)
    key = next(k for k in _keys(study).values() if k["sheet_id"] == sheet["sheet_id"].iloc[0])
    # annotator 1: the adapter's answer (the reference) is the relevant one, both fluent; annotator 2 agrees
    # except on one pair's relevance
    after = ["A" if key["pairs"][p]["a"] == "after" else "B" for p in sheet["pair_id"]]
    first = sheet.assign(fluency_1="both", relevance_1=after)
    second = sheet.assign(fluency_2="both", relevance_2=[*after[:-1], "neither"])
    first.to_csv(tmp_path / "ann1.csv", index=False)
    second.to_csv(tmp_path / "ann2.csv", index=False)
    result = runner.invoke(app, ["debias-study", "score", "--study", str(study), str(tmp_path / "ann1.csv"),
                                 str(tmp_path / "ann2.csv"), "--json"])
    assert result.exit_code == 0, result.output
    scored = json.loads(result.stdout)
    relevance = scored["criteria"]["relevance"]
    assert relevance["annotator_1"] == {"before": 0, "after": 6, "both good": 0, "both bad": 0}
    assert relevance["agreed"]["after"] == 5 and relevance["disagreed"] == 1
    assert scored["criteria"]["fluency"]["annotator_2"]["both good"] == 6
    assert scored["criteria"]["fluency"]["kappa"]["kappa"] is None  # one label only: undefined, said so
    text = _flat(runner.invoke(app, ["debias-study", "score", "--study", str(study), str(tmp_path / "ann1.csv"),
                                     str(tmp_path / "ann2.csv")], env={"COLUMNS": "240"}).output)
    assert "both agree (1 disagree)" in text and "Raj et al., 2024" in text
    summary = json.loads(runner.invoke(app, ["summary", "--study", str(study), "--json"]).stdout)
    stored = summary["debias"]["human_study"]
    assert [s["sheet_id"] for s in stored] == [key["sheet_id"]] and stored[0]["n"] == 6
    rows = [r for r in summary["debias"].get("statistics", []) or []]
    assert rows == [] or all("probe" in r for r in rows)


def _keys(study: Path) -> dict:
    with Store(study) as store:
        return hs.keys(store)


@pytest.mark.parametrize(("change", "problem"), [
    (lambda s: s.assign(fluency_1="maybe"), "fluency_1 'maybe' is not one of: A, B, both, neither"),
    (lambda s: s.drop(columns=["relevance_1"]), "lacks the column(s) relevance_1"),
    (lambda s: pd.concat([s, s.iloc[[0]]]), "repeats line 2"),
    (lambda s: s.assign(sheet_id="Sabcdefabcd"), "is not a sheet of this study"),
], ids=["bad rating", "missing column", "duplicate id", "another study's sheet"])
def test_score_errors_are_one_line_and_store_nothing(study: Path, tmp_path: Path, change, problem: str) -> None:
    out = tmp_path / "sheet.csv"
    assert _sheet(study, out, "--seed", "2")[0] == 0
    filled = _rate(pd.read_csv(out, dtype=str, keep_default_na=False), hs.RATING_COLUMNS, "A")
    change(filled).to_csv(out, index=False)
    with Store(study) as store:
        before = len(hs.stored_scores(store))
    result = runner.invoke(app, ["debias-study", "score", "--study", str(study), str(out)])
    assert result.exit_code == 2 and problem in _flat(result.output)
    assert len([line for line in result.output.splitlines() if line.startswith("error:")]) == 1
    with Store(study) as store:
        assert len(hs.stored_scores(store)) == before
