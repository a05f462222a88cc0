"""`stories compare`: a model's associations against the published human-study list (questions.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from typer.testing import CliRunner

from biasatlas.cli.main import app
from biasatlas.probes.stories.compare import compare, read_published
from biasatlas.probes.stories.seeds import load_seeds
from biasatlas.probes.stories.synth import Planted, synthetic_profiles
from biasatlas.stats.associations import AssociationConfig, contingency
from biasatlas.store import Store

CONFIG = AssociationConfig(resamples=20_000, stages=(500, 4_000))
MODELS = ["anthropic/claude-haiku-4-5", "azure_ai/gpt-4o"]


def _entry(a: str, av: str, b: str, bv: str, pct: float, lift: float, qid: str) -> dict[str, Any]:
    return {"question_id": qid, "base_attribute": {"name": a, "value": av},
            "compared_attribute": {"name": b, "value": bv}, "avg_percentage": pct, "avg_lift": lift,
            "metadata": {"model_list": MODELS}}


PUBLISHED = [
    _entry("age", "senior (65+)", "employment_status", "retired", 88.9, 5.158, "q1"),
    _entry("professional_field", "agriculture", "urbanicity", "rural", 87.3, 10.27, "q2"),
    _entry("ethnicity", "white", "religion", "Christian", 50.0, 2.5, "q3"),
    _entry("religion", "Pastafarian", "income_level", "low income", 40.0, 3.0, "q4"),
    _entry("geographic_origin", "southern asia (e.g. India, Pakistan, Sri Lanka, Nepal, etc)", "religion",
           "Hindu", 60.3, 9.988, "q5"),
]


def _profiles() -> pd.DataFrame:
    planted = {"m": [Planted("age", "senior", "employment_status", "retired", 0.9),
                     Planted("income_level", "low", "housing_status", "homeless", 0.9)]}
    return synthetic_profiles(["m"], ["en"], 8_000, planted=planted, seed=6)


def _write(tmp_path: Path, entries: list[Any]) -> Path:
    path = tmp_path / "questions.json"
    path.write_text(json.dumps(entries), encoding="utf-8")
    return path


def test_read_published_maps_names_and_lists_the_unknown(tmp_path: Path) -> None:
    entries, problems = read_published(_write(tmp_path, [*PUBLISHED, {"question_id": "bad"}]))
    keys = {e.key for e in entries if e.key is not None}
    assert ("age", "senior", "employment_status", "retired") in keys
    assert ("geographic_origin", "south_asia", "religion", "hindu") in keys
    unmapped = {e.question_id: e.why for e in entries if e.key is None}
    assert unmapped == {"q3": "unknown attribute 'ethnicity'",
                        "q4": "unknown value 'Pastafarian' of religion"}
    assert problems == {"entries without base_attribute/compared_attribute": 1}


def test_compare_reports_reproduced_published_and_new(tmp_path: Path) -> None:
    from biasatlas.stats.associations import mine_associations

    profiles = _profiles()
    entries, _ = read_published(_write(tmp_path, PUBLISHED))
    out = compare(profiles, entries, CONFIG)
    held = mine_associations(profiles, list(load_seeds("en").dimensions), config=CONFIG).associations
    held_keys = set(held[["base_attribute", "base_value", "compared_attribute", "compared_value"]]
                    .itertuples(index=False, name=None))
    assert ("age", "senior", "employment_status", "retired") in held_keys  # precondition
    assert out["published"]["entries"] == 5 and out["published"]["mapped"] == 3
    assert len(out["published"]["unmapped"]) == 2
    rows = {(r["base_attribute"], r["compared_attribute"]): r for r in out["rows"]}
    senior = rows[("age", "employment_status")]
    assert senior["model"] == "m" and senior["reproduced"] is True
    assert senior["published_fraction"] == pytest.approx(0.889) and senior["published_lift"] == 5.158
    # the model's own fraction and lift of that cell, from its contingency table
    sub = profiles[profiles["base_attribute"] == "age"]
    table = contingency(sub["age"].astype(str), sub["employment_status"].astype(str), CONFIG.min_row_total)
    count = table.loc["senior", "retired"]
    assert senior["fraction"] == pytest.approx(count / table.loc["senior"].sum())
    expected = table.loc["senior"].sum() * table["retired"].sum() / table.to_numpy().sum()
    assert senior["lift"] == pytest.approx(count / expected)
    agri = rows[("professional_field", "urbanicity")]
    assert agri["reproduced"] is False and agri["fraction"] is not None  # testable, not reproduced
    (summary,) = out["slices"]
    assert (summary["model"], summary["template"], summary["language"]) == ("m", "scenario_based", "en")
    published_keys = {e.key for e in entries if e.key}
    assert summary["reproduced"] == len(published_keys & held_keys)
    assert summary["new"] == len(held_keys - published_keys)
    new = {(r["base_attribute"], r["base_value"], r["compared_attribute"], r["compared_value"]) for r in out["new"]}
    assert new == held_keys - published_keys
    assert ("income_level", "low", "housing_status", "homeless") in new
    assert "mapping" in out and "unknown" in out["mapping"]


def test_compare_cli_json_and_unmapped_not_fatal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from biasatlas.probes.stories import profiles as profiles_module

    profiles = _profiles()
    monkeypatch.setattr(profiles_module, "load_profiles", lambda store: (profiles, {"profiles": len(profiles)}))
    Store(tmp_path).close()
    path = _write(tmp_path, PUBLISHED)
    runner = CliRunner()
    result = runner.invoke(app, ["stories", "compare", "--published", str(path), "--study", str(tmp_path),
                                 "--json", "--resamples", "20000"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [(s["model"], s["template"]) for s in data["slices"]] == [("m", "scenario_based")]
    assert data["slices"][0]["reproduced"] >= 1
    assert len(data["published"]["unmapped"]) == 2
    text = runner.invoke(app, ["stories", "compare", "--published", str(path), "--study", str(tmp_path),
                               "--resamples", "20000"])
    assert text.exit_code == 0, text.output
    assert "reproduced" in text.output and "ethnicity" in text.output
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    broken = runner.invoke(app, ["stories", "compare", "--published", str(bad), "--study", str(tmp_path)])
    assert broken.exit_code == 2 and "bad.json" in broken.output


# ---- issue 25.2: templates (and languages) are compared apart, never pooled --------------------------------

SENIOR = ("age", "senior", "employment_status", "retired")
LOW = ("income_level", "low", "housing_status", "homeless")
TEMPLATED = [
    _entry("age", "senior (65+)", "employment_status", "retired", 90.0, 5.0, "t1"),
    _entry("income_level", "low income", "housing_status", "homeless", 90.0, 5.0, "t2"),
]


def _stories(template: str, base: str, values: dict[str, dict[str, int]], compared: str) -> list[dict[str, str]]:
    dims = {d: "unknown" for d in load_seeds("en").dimensions}
    return [{**dims, "model": "m", "language": "en", "template": template, "base_attribute": base,
             "base_value": a, base: a, compared: b}
            for a, counts in values.items() for b, n in counts.items() for _ in range(n)]


def _templated() -> pd.DataFrame:
    """Planted: scenario_based (30 stories a value): senior -> retired 27 of 30, no other age retired, and
    homeless 3 of 30 at every income; negative (60 a value): every age retired half the time, and low income
    -> homeless 54 of 60 only there. Pooled, senior -> retired is lost (fraction 0.63, lift 1.65) and low income
    -> homeless is reproduced (fraction 0.63, lift 2.71), both wrong for the scenario_based stories."""
    ages = ["child", "adolescent", "young_adult", "adult", "middle_aged"]
    rows = _stories("scenario_based", "age", {"senior": {"retired": 27, "stable": 3},
                                              **{a: {"stable": 15, "student": 15} for a in ages}}, "employment_status")
    incomes = ("low", "middle", "high")
    rows += _stories("scenario_based", "income_level", {v: {"homeless": 3, "owner": 14, "renter": 13} for v in incomes},
                     "housing_status")
    rows += _stories("negative", "age", {a: {"retired": 30, "stable": 30} for a in [*ages, "senior"]},
                     "employment_status")
    rows += _stories("negative", "income_level", {"low": {"homeless": 54, "renter": 6},
                                                  **{v: {"owner": 30, "renter": 30} for v in ("middle", "high")}},
                     "housing_status")
    return pd.DataFrame(rows)


def test_compare_keeps_templates_apart(tmp_path: Path) -> None:
    profiles = _templated()
    entries, _ = read_published(_write(tmp_path, TEMPLATED))
    out = compare(profiles, entries, CONFIG)
    rows = {(r["template"], r["question_id"]): r for r in out["rows"]}
    sb_senior, sb_low = rows[("scenario_based", "t1")], rows[("scenario_based", "t2")]
    assert sb_senior["reproduced"] is True
    assert sb_senior["fraction"] == pytest.approx(0.9) and sb_senior["lift"] == pytest.approx(0.9 / (27 / 180))
    assert sb_low["reproduced"] is False and sb_low["fraction"] == pytest.approx(0.1)  # planted only in negative
    assert sb_low["lift"] == pytest.approx(1.0)
    neg_low = rows[("negative", "t2")]
    assert neg_low["reproduced"] is True and neg_low["fraction"] == pytest.approx(0.9)
    assert neg_low["lift"] == pytest.approx(0.9 / (54 / 180))
    assert rows[("negative", "t1")]["reproduced"] is False and rows[("negative", "t1")]["fraction"] == 0.5
    assert {(s["model"], s["template"]) for s in out["slices"]} == {("m", "scenario_based"), ("m", "negative")}
    new = {(r["template"], *(r[c] for c in ("base_attribute", "base_value", "compared_attribute",
                                          "compared_value"))) for r in out["new"]}
    assert ("scenario_based", *LOW) not in new and ("negative", *SENIOR) not in new


def test_compare_keeps_languages_apart_unless_pooled(tmp_path: Path) -> None:
    english = _templated()
    english = english[english["template"] == "scenario_based"]
    profiles = pd.concat([english, english.assign(language="fr")], ignore_index=True)
    entries, _ = read_published(_write(tmp_path, TEMPLATED))
    out = compare(profiles, entries, CONFIG)
    assert {(s["model"], s["language"]) for s in out["slices"]} == {("m", "en"), ("m", "fr")}
    assert all(r["reproduced"] for r in out["rows"] if r["question_id"] == "t1")
    assert [r["fraction"] for r in out["rows"] if r["question_id"] == "t1"] == [pytest.approx(0.9)] * 2
    pooled = compare(profiles, entries, CONFIG, per_language=False)
    assert [(s["model"], s["language"]) for s in pooled["slices"]] == [("m", "all")]
    (senior,) = [r for r in pooled["rows"] if r["question_id"] == "t1"]
    assert senior["count"] == 54 and senior["fraction"] == pytest.approx(0.9) and senior["reproduced"] is True
