"""Issue 26: for every statistic shown in more than one place, the report, `summary --json` and the export
give the same estimate, interval and adjusted p (one set of rows, computed once by the probe's summary)."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from typer.testing import CliRunner

import biasatlas
from biasatlas.backends.fake import FakeBackend
from biasatlas.cli.main import app
from biasatlas.export import export_study
from biasatlas.probes.samaritan.plan import build_prompts as samaritan_prompts
from biasatlas.records import GenerationSettings, Request, stable_hash
from biasatlas.runner import run_plan
from biasatlas.store import Store

pytestmark = pytest.mark.slow  # no model, but a full report, summary and export: 12-16 s, too long for tests/unit
KEYS = ("estimate", "ci_low", "ci_high", "p_adj")


def _rating(request: Request) -> str:
    rng = random.Random(stable_hash([request.prompt.text, request.sample_index]))
    return f"{60 + (6 if request.prompt.meta['group'] == 'male' else 0) + rng.gauss(0, 2):.0f}"


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Contact in choice mode with 2 samples per prompt (seeded random options), samaritan with a planted gap."""
    path = tmp_path_factory.mktemp("same") / "study"
    biasatlas.run("contact", model="fake:x", study=path, languages=["en", "de"], axes=["religion"],
                  scenarios=["community"], principles=["common_goals"], mode="choice", samples=2, limit=24)
    with Store(path) as store:
        run_plan(samaritan_prompts(["gender"], n_scenarios=6), FakeBackend(_rating), store,
                 GenerationSettings(max_tokens=64), progress=False)
    return path


def _same(a: Any, b: Any) -> bool:
    missing = [v is None or (isinstance(v, float) and math.isnan(v)) for v in (a, b)]
    return all(missing) if any(missing) else float(a) == pytest.approx(float(b), rel=1e-9, abs=1e-12)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None  # a CSV's or a frame's empty cell reads NaN


def test_report_summary_json_and_export_agree(study: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = CliRunner().invoke(app, ["summary", "--study", str(study), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    export_study(study, tmp_path / "out", "csv")
    shown: dict[str, pd.DataFrame] = {}
    import biasatlas.report.build as build

    original = build.overview_section

    def capture(headlines: dict[str, pd.DataFrame], *args: Any) -> Any:
        shown.update(headlines)
        return original(headlines, *args)

    monkeypatch.setattr(build, "overview_section", capture)
    with Store(study) as store:
        build.build_report(store, study, out=tmp_path / "r.html", publish=False)
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    for probe, scale in (("contact", 100.0), ("samaritan", 1.0)):
        rows = summary[probe]["statistics"]
        exported = pd.read_csv(tmp_path / "out" / f"statistics_{probe}.csv")
        assert len(exported) == len(rows) > 0
        for row, (_, csv) in zip(rows, exported.iterrows(), strict=True):  # the export is the JSON's rows
            assert row["test"] == csv["test"] and all(_same(row[k], csv[k]) for k in (*KEYS, "p")), (probe, row)
            assert row["family"] == _text(csv["family"]) and row["correction"] == _text(csv["correction"])
        headline_rows = [r for r in rows if r["headline"]]
        overview = shown[probe]
        # a cell's group-disparity line (its sentence in `text`) is a row of its own: the statistics' group headline
        is_group = overview["text"].map(lambda t: isinstance(t, str)) if "text" in overview.columns else False
        assert int(is_group.sum()) == len([r for r in rows if r.get("group_headline")])
        overview = overview[~is_group]
        assert len(overview) == len(headline_rows) > 0
        for (_, cell), row in zip(overview.iterrows(), headline_rows, strict=True):
            assert _same(cell["p_adj"], row["p_adj"]) and _same(cell["p"], row["p"])
            for key in ("estimate", "ci_low", "ci_high"):
                assert _same(cell[key], None if row[key] is None else scale * row[key]), (probe, key)
            assert _text(cell["flags"]) == row["flags"]
            assert ("–" if math.isnan(cell["estimate"]) else f"{cell['estimate']:+.1f}") in html
    # samples are aggregated per prompt set: n counts sets, not set x sample
    contact = summary["contact"]
    outcomes = biasatlas.open_study(study).outcomes("contact")
    sets = outcomes.groupby("language")["set_id"].nunique()
    tests = [r for r in contact["statistics"] if r["source"] == "tests"]  # group rows count questions (below)
    assert tests and all(r["samples"] == 2 for r in tests)
    assert set(outcomes["sample_index"]) == {0, 1}
    assert all(r["n"] <= sets[r["language"]] for r in tests if r["n"] is not None)
    assert any(r["n"] == sets[r["language"]] for r in tests if r["n"] is not None)
    assert all(r["seed"] == "0" and r["run_ids"] for r in tests)
    questions = outcomes[outcomes["contact"] != "none"].groupby("language")["prompt_id"].nunique()
    groups = [r for r in contact["statistics"] if r["source"] != "tests" and r["n"] is not None]
    assert all(r["n"] <= questions[r["language"]] for r in groups)  # questions, not question x sample
