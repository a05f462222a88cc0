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
    from biasatlas.probes.stories.seeds import load_seeds
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
    summary = out["models"]["m"]
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
    assert data["models"]["m"]["reproduced"] >= 1
    assert len(data["published"]["unmapped"]) == 2
    text = runner.invoke(app, ["stories", "compare", "--published", str(path), "--study", str(tmp_path),
                               "--resamples", "20000"])
    assert text.exit_code == 0, text.output
    assert "reproduced" in text.output and "ethnicity" in text.output
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    broken = runner.invoke(app, ["stories", "compare", "--published", str(bad), "--study", str(tmp_path)])
    assert broken.exit_code == 2 and "bad.json" in broken.output
