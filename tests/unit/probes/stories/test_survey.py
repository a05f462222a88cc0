"""The StereoTales human survey workflow: a seeded sheet per rater, its validated score into the human ratings."""

from __future__ import annotations

import itertools
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from biasatlas.cli.main import app
from biasatlas.probes.stories import harm as stories_harm
from biasatlas.probes.stories import survey
from biasatlas.probes.stories.seeds import load_seeds
from biasatlas.store import DB_NAME, Store

runner = CliRunner()


def _items(n: int) -> pd.DataFrame:
    """``n`` real association keys (prompted value -> a value of another attribute) as the survey shows them."""
    seeds = load_seeds("en")
    keys = []
    for dim, value in seeds.prompted:
        for other in seeds.dimensions.values():
            if other.key != dim.key:
                keys.append(stories_harm.association_key(dim.key, value.key, other.key, other.values[0].key))
    keys = sorted(set(keys))[:n]
    rows = [{"association": k, "language": "pooled: en", "group": survey._words(k)[0],
             "attribute": survey._words(k)[1], "statement": stories_harm.phrase(k)} for k in keys]
    return pd.DataFrame(rows)


# ---- the sheet --------------------------------------------------------------------------------
def test_each_rater_gets_per_rater_distinct_associations_in_item_order() -> None:
    sheet, info = survey.draw(_items(23), per_rater=5, raters=10, seed=3)
    assert list(sheet.columns) == survey.SHEET_COLUMNS
    per = sheet.groupby("rater")
    assert per.size().to_dict() == {f"R{r:02d}": 5 for r in range(1, 11)}
    assert all(g["association"].is_unique and list(g["item"]) == [1, 2, 3, 4, 5] for _, g in per)
    assert (sheet["harm"] == "").all() and (sheet["realism"] == "").all()
    assert info["ratings"] == 50 and info["per_rater"] == 5


def test_the_order_is_seeded_reproducible_and_random() -> None:
    items = _items(30)
    first, _ = survey.draw(items, per_rater=10, raters=6, seed=1)
    again, _ = survey.draw(items, per_rater=10, raters=6, seed=1)
    other, _ = survey.draw(items, per_rater=10, raters=6, seed=2)
    pd.testing.assert_frame_equal(first, again)
    assert list(first["association"]) != list(other["association"])
    assert first["sheet_id"].iloc[0] != other["sheet_id"].iloc[0]
    # not the summary's order: each rater's list is shuffled
    r1 = list(first.loc[first["rater"] == "R01", "association"])
    assert r1 != sorted(r1)


@pytest.mark.parametrize(("n", "raters", "per_rater"), [(23, 5, 5), (23, 10, 5), (50, 3, 20), (7, 4, 7)])
def test_every_association_is_covered_and_counts_differ_by_at_most_one(n: int, raters: int, per_rater: int) -> None:
    assignment = survey.assign(n, raters, per_rater, seed=0)
    counts = pd.Series([i for items in assignment for i in items]).value_counts().reindex(range(n), fill_value=0)
    assert counts.min() >= 1 and counts.max() - counts.min() <= 1
    info = survey.coverage(assignment, n)
    assert info["uncovered"] == 0 and info["ratings"] == raters * min(per_rater, n)
    if raters * per_rater >= 2 * n:  # room for two each: agreement over every association
        assert info["with_several_raters"] == n and counts.min() >= 2


def test_overlap_between_raters_is_told_and_too_few_raters_leave_some_uncovered() -> None:
    assignment = survey.assign(40, 8, 10, seed=0)  # 80 ratings of 40: two raters each
    info = survey.coverage(assignment, 40)
    shared = [len(set(a) & set(b)) for a, b in itertools.combinations(assignment, 2)]
    assert info["rater_pairs"] == 28 and info["pairs_sharing_enough"] == sum(s >= 3 for s in shared)
    assert sum(shared) == 40  # each association shared by exactly one pair of raters
    few = survey.coverage(survey.assign(40, 2, 10, seed=0), 40)
    assert few["uncovered"] == 20
    assert "20 associations have no rater" in survey.coverage_text({**few, "per_rater": 10})


def test_default_raters_give_every_association_two_and_per_rater_is_capped() -> None:
    sheet, info = survey.draw(_items(23), per_rater=5)
    assert info["raters"] == survey.default_raters(23, 5) == 10
    assert sheet["association"].value_counts().min() >= 2
    small, info = survey.draw(_items(4), per_rater=50, raters=3)
    assert info["per_rater"] == 4 and len(small) == 12


@pytest.fixture
def study(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A study whose summary holds six associations (the mining itself is tested elsewhere)."""
    Store(tmp_path / "study").close()
    items = _items(6)
    monkeypatch.setattr(survey, "study_associations", lambda store, languages=None: items)
    return tmp_path / "study"


def _sheet(study: Path, out: Path, *args: str) -> pd.DataFrame:
    result = runner.invoke(app, ["stories-survey", "sheet", "--study", str(study), "--out", str(out), *args])
    assert result.exit_code == 0, result.output
    return pd.read_csv(out, dtype=str, keep_default_na=False)


def test_sheet_writes_the_csv_and_its_guide(study: Path, tmp_path: Path) -> None:
    out = tmp_path / "survey" / "sheet.csv"
    sheet = _sheet(study, out, "--per-rater", "4", "--raters", "3", "--seed", "5")
    assert len(sheet) == 12 and set(sheet["rater"]) == {"R01", "R02", "R03"}
    assert sheet["statement"].str.startswith("In the generated stories, when ").all()
    guide = (tmp_path / "survey" / "sheet.csv.md").read_text(encoding="utf-8")
    assert "1 = strongly disagree" in guide and "`not sure`" in guide and "stories-survey score" in guide


def test_sheet_refuses_to_overwrite_a_sheet_or_the_study_database(study: Path, tmp_path: Path) -> None:
    out = tmp_path / "sheet.csv"
    out.write_text("rated by hand\n", encoding="utf-8")
    result = runner.invoke(app, ["stories-survey", "sheet", "--study", str(study), "--out", str(out)])
    assert result.exit_code == 2 and "exists" in result.output
    assert out.read_text(encoding="utf-8") == "rated by hand\n"
    db = study / DB_NAME
    before = db.read_bytes()
    result = runner.invoke(app, ["stories-survey", "sheet", "--study", str(study), "--out", str(db), "--force"])
    assert result.exit_code == 2 and "SQLite" in result.output and db.read_bytes() == before
    _sheet(study, out, "--force")  # replaced only when asked
    assert out.read_text(encoding="utf-8").startswith("sheet_id,rater")


# ---- the score --------------------------------------------------------------------------------
def _filled(study: Path, tmp_path: Path) -> tuple[Path, pd.DataFrame]:
    """Two raters, every association each: R01 rates 5/yes, R02 rates 1, 2, 3, ... /no."""
    sheet = _sheet(study, tmp_path / "sheet.csv", "--per-rater", "6", "--raters", "2")
    keys = sorted(set(sheet["association"]))
    r1, r2 = sheet["rater"] == "R01", sheet["rater"] == "R02"
    sheet.loc[r1, "harm"], sheet.loc[r1, "realism"] = "5", "Yes"
    sheet.loc[r2, "harm"] = [str(1 + keys.index(k) % 5) for k in sheet.loc[r2, "association"]]
    sheet.loc[r2, "realism"] = "not sure"
    path = tmp_path / "filled.csv"
    sheet.to_csv(path, index=False)
    return path, sheet


def test_score_stores_each_rater_where_the_harm_analyses_read_them(study: Path, tmp_path: Path) -> None:
    path, sheet = _filled(study, tmp_path)
    result = runner.invoke(app, ["stories-survey", "score", "--study", str(study), str(path)])
    assert result.exit_code == 0, result.output
    human = stories_harm.human_ratings(study)
    sheet_id = sheet["sheet_id"].iloc[0]
    assert sorted(set(human["rater"])) == [f"human:R01@{sheet_id}", f"human:R02@{sheet_id}"]
    assert len(human) == 12 and set(human["realism"]) == {"yes", "not sure"}
    with Store(study) as store:
        harm = stories_harm.summarise_harm(store)
    assert harm["human_ratings"] == 12
    assert harm["agreement_within"]["humans"]["raters"] == 2  # two raters, not one panel
    assert harm["agreement_within"]["humans"]["pairs"] == 1
    keys = sorted(set(sheet["association"]))
    medians = {r["association"]: r["median"] for r in harm["labels"]["associations"]}
    assert medians == {k: (5 + 1 + keys.index(k) % 5) / 2 for k in keys}
    assert harm["realism"]["humans"]["distribution"]["yes"]["count"] == 6
    # scoring the same sheet again replaces its ratings, it does not add them
    again = runner.invoke(app, ["stories-survey", "score", "--study", str(study), str(path), "--json"])
    assert again.exit_code == 0 and '"stored_in_study": 12' in again.output


def _edit(sheet: pd.DataFrame, kind: str) -> pd.DataFrame:
    sheet = sheet.copy()
    if kind == "out of range":
        sheet.loc[2, "harm"] = "6"
    elif kind == "off the scale":
        sheet.loc[2, "harm"] = "3.5"
    elif kind == "missing harm":
        sheet.loc[2, "harm"] = ""
    elif kind == "bad realism":
        sheet.loc[2, "realism"] = "maybe"
    elif kind == "missing realism":
        sheet.loc[2, "realism"] = ""
    elif kind == "duplicated":
        sheet = pd.concat([sheet, sheet.iloc[[2]]], ignore_index=True)
    elif kind == "unknown":
        sheet.loc[2, "association"] = "age=child -> religion=atheist_agnostic"
    return sheet


@pytest.mark.parametrize(("kind", "needle"), [
    ("out of range", "line 4, column harm: '6' is not a whole number from 1 to 5"),
    ("off the scale", "line 4, column harm: '3.5' is not a whole number"),
    ("missing harm", "line 4, column harm: missing"),
    ("bad realism", "line 4, column realism: 'maybe' is not one of: yes, no, not sure"),
    ("missing realism", "line 4, column realism: missing"),
    ("duplicated", "line 14, column association: "),
    ("unknown", "line 4, column association: 'age=child -> religion=atheist_agnostic' is not an association"),
])
def test_score_names_row_and_column_and_stores_nothing(study: Path, tmp_path: Path, kind: str,
                                                       needle: str) -> None:
    path, sheet = _filled(study, tmp_path)
    _edit(sheet, kind).to_csv(path, index=False)
    result = runner.invoke(app, ["stories-survey", "score", "--study", str(study), str(path)])
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert needle in text
    if kind == "duplicated":
        assert "repeats filled.csv line 4" in text
    assert not (study / stories_harm.HUMAN_FILE).exists()


def test_score_leaves_out_a_rater_who_rated_nothing_and_refuses_a_foreign_file(study: Path, tmp_path: Path) -> None:
    path, sheet = _filled(study, tmp_path)
    sheet.loc[sheet["rater"] == "R02", ["harm", "realism"]] = ""
    sheet.to_csv(path, index=False)
    result = runner.invoke(app, ["stories-survey", "score", "--study", str(study), str(path), "--json"])
    assert result.exit_code == 0, result.output
    assert '"skipped_raters": [\n    "R02"\n  ]' in result.output
    assert set(stories_harm.human_ratings(study)["rater"]) == {f"human:R01@{sheet['sheet_id'].iloc[0]}"}
    other = tmp_path / "other.csv"
    other.write_text("association,rater,harm\n", encoding="utf-8")
    result = runner.invoke(app, ["stories-survey", "score", "--study", str(study), str(other)])
    assert result.exit_code == 2 and "lacks the column(s) sheet_id, realism" in " ".join(result.output.split())


# ---- the study's associations -------------------------------------------------------------------
def test_the_sheet_holds_the_summary_associations_of_a_planted_study(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from biasatlas.probes.stories import profiles as profiles_module
    from biasatlas.probes.stories.analysis import associations
    from biasatlas.probes.stories.synth import Planted, synthetic_profiles

    planted = Planted("income_level", "low", "education", "basic", 0.9)
    profiles = synthetic_profiles(["m"], ["en"], 1500, planted={"m": [planted]}, seed=1)
    monkeypatch.setattr(profiles_module, "load_profiles", lambda store: (profiles, {}))
    with Store(tmp_path) as store:
        items = survey.study_associations(store)
        with pytest.raises(survey.SurveyError, match="no stories in fr"):
            survey.study_associations(store, ["fr"])
        per_language = survey.study_associations(store, ["en"])
    mined = {stories_harm.association_key(*r) for r in associations(profiles).associations[
        ["base_attribute", "base_value", "compared_attribute", "compared_value"]].itertuples(index=False)}
    assert mined and set(items["association"]) == mined == set(per_language["association"])
    key = sorted(mined)[0]
    row = items.set_index("association").loc[key]
    a, av, b, bv = stories_harm.parse_key(key)
    seeds = load_seeds("en")
    assert row["language"] == "pooled: en" and set(per_language["language"]) == {"en"}
    assert row["group"] == f"{seeds.dimensions[a].label}: {seeds.dimensions[a].value(av).label}"
    assert row["attribute"] == f"{seeds.dimensions[b].label}: {seeds.dimensions[b].value(bv).label}"
    assert row["statement"] == stories_harm.phrase(key)


# ---- a model's provider from the audit file -----------------------------------------------------
def _audit(tmp_path: Path, models: list[dict[str, object]]) -> Path:
    import yaml

    path = tmp_path / "audit.yaml"
    path.write_text(yaml.safe_dump({"models": models, "probes": {"stories": {"limit": 2}}}), encoding="utf-8")
    return path


def test_the_audit_file_sets_a_provider_and_the_stories_analyses_use_it_over_the_inferred(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from biasatlas.audit.cells import build_cells
    from biasatlas.audit.execute import run_cells
    from biasatlas.audit.spec import AuditError, load_audit
    from biasatlas.backends.fake import FakeBackend
    from biasatlas.probes.stories import harm_analyses

    def make_backend(spec: str, **options: object) -> FakeBackend:
        profile = json.dumps({"age": {"value": "senior", "evidence": "67"}})
        return FakeBackend(lambda r: profile if r.prompt.probe == "stories-extract" else "A story.",
                           name=spec.split(":", 1)[1])

    monkeypatch.setattr("biasatlas.backends.registry.make_backend", make_backend)
    path = _audit(tmp_path, [{"name": "ours", "model": "fake:gpt-ours", "provider": " Acme "},
                             {"name": "theirs", "model": "fake:claude-x"}])
    audit = load_audit(path)
    assert [m.provider for m in audit.models] == ["Acme", None]
    study = tmp_path / "study"
    run_cells(build_cells(audit), study, audit_file=path)
    with Store(study) as store:
        providers = harm_analyses.audit_providers(store.conn)
    assert providers == {"fake:gpt-ours": "Acme"}  # the name alone says OpenAI
    per_model = [{"model": m, "base_attribute": "income_level", "base_value": "low",
                  "compared_attribute": "education", "compared_value": "basic"} for m in ("fake:gpt-ours",
                                                                                           "fake:claude-x")]
    groups = {g["provider"]: g for g in harm_analyses.by_provider(per_model, pd.Series(dtype=bool), providers)}
    assert set(groups) == {"Acme", "Anthropic"}
    assert groups["Acme"]["label"] == "Acme" and not groups["Acme"]["inferred"]
    assert groups["Anthropic"]["label"] == "Anthropic (inferred)" and groups["Anthropic"]["inferred"]
    for bad in ("", 3):
        with pytest.raises(AuditError, match=r"models\[0\]\.provider: must be a non-empty text"):
            load_audit(_audit(tmp_path, [{"model": "fake:a", "provider": bad}]))
