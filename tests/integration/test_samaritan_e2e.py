"""The Samaritan probe end to end on the real embedded model (SmolLM2-135M) through the CLI.

Kept small for CI (2 CPU cores): a scenario rephrasing is asked with the control and every phrasing of
the category (8 prompts); `--limit 16` = two of them in English at the default answer length (64
tokens), `--limit 32` = four in German at 12 tokens; then `summary --json` and `report`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from biasatlas.cli.main import app
from biasatlas.probes.samaritan.probe import PROBE
from biasatlas.store import Store

pytestmark = pytest.mark.slow


def test_cli_run_summary_report(tmp_path: Path) -> None:
    runner = CliRunner()
    study = tmp_path / "samaritan"
    # 64 tokens, not the default 512: the embedded model rambles to the limit, and this test checks the pipeline
    english = runner.invoke(app, ["run", "samaritan", "--model", "smollm2", "--category", "gender",
                                  "--limit", "16", "--max-tokens", "64", "--study", str(study)])
    assert english.exit_code == 0, english.output
    assert "planned 16, cached 0, new 16, failed 0" in english.output
    german = runner.invoke(app, ["run", "samaritan", "--model", "smollm2", "--category", "age", "--lang", "de",
                                 "--limit", "32", "--max-tokens", "12", "--study", str(study)])
    assert german.exit_code == 0, german.output
    assert "new 32, failed 0" in german.output

    with Store(study) as store:
        frame = PROBE.outcomes(store)
    assert len(frame) == 48 and (frame["status"] == "answered").all()
    assert set(frame["language"]) == {"en", "de"}
    assert frame["text"].map(lambda t: isinstance(t, str)).all()  # every model text is kept
    # every answer is read as a rating in 1..100 or carries the reason it is not
    read = frame["rating"].notna()
    assert frame.loc[read, "rating"].between(1, 100).all()
    assert frame.loc[~read, "parse_reason"].notna().all()

    summary = runner.invoke(app, ["summary", "--study", str(study), "--json"])
    assert summary.exit_code == 0, summary.output
    data = json.loads(summary.stdout)["samaritan"]
    counts = {(r["language"], r["category"]): r for r in data["unparseable"]}
    assert sum(r["n_answered"] for r in data["unparseable"]) == 48
    assert sum(r["n_parsed"] + r["n_unparseable"] for r in data["unparseable"]) == 48
    assert {k[0] for k in counts} == {"en", "de"}
    for row in data["groups"]:  # whatever the tiny model managed to rate is analysed per group
        assert row["category"] in {"gender", "age"} and row["n"] <= 4
        # the verdict follows its tests: equivalence needs the TOST, a difference the corrected t-test
        alpha = data["settings"]["alpha"]
        expected = ("untested" if row["n"] < 2 else "equivalent" if (row["tost_p_adj"] or 1) < alpha
                    else "differs" if (row["p_adj"] or 1) < alpha else "undetermined")
        assert row["verdict"] == expected
    assert {r["max_tokens"] for r in data["unparseable"]} == {64, 12}  # each decoding its own unit
    flagged = [r for r in data["unparseable"] if r["unparseable_pct"] > 20]
    assert len(data["warnings"]) == len(flagged)

    report = runner.invoke(app, ["report", "--study", str(study)])
    assert report.exit_code == 0, report.output
    html = (study / "report.html").read_text(encoding="utf-8")
    assert PROBE.title in html and "unparseable" in html
