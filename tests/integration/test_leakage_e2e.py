"""The leakage probe end to end on the embedded model (SmolLM2-135M-Instruct), through the CLI.

Small on purpose (CI has two CPU cores): a dozen choice prompts in English over shared groups (whose human
cells are complete; too few cells for the default minimums, so the fit is refused, then made with lowered
ones), one comparison in both orders × two samples generated in Russian.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from biasatlas.cli.main import app

pytestmark = pytest.mark.slow

GROUPS = "woman,man,immigrant,poor person,wealthy person,software engineer"


def test_leakage_on_the_embedded_model(tmp_path: Path) -> None:
    runner = CliRunner()
    study = tmp_path / "study"
    choice = runner.invoke(app, ["run", "leakage", "--model", "smollm2", "--lang", "en", "--mode", "choice",
                                 "--groups", GROUPS, "--orders", "one", "--limit", "12", "--batch-size", "12",
                                 "--study", str(study)])
    assert choice.exit_code == 0, choice.output
    assert "planned 12" in choice.output and "failed 0" in choice.output
    generate = runner.invoke(app, ["run", "leakage", "--model", "smollm2", "--lang", "ru", "--mode", "generate",
                                   "--groups", GROUPS, "--limit", "2", "--samples", "2", "--max-tokens", "6",
                                   "--study", str(study)])
    assert generate.exit_code == 0, generate.output
    assert "planned 4" in generate.output

    fit = runner.invoke(app, ["leakage", "fit", "--study", str(study), "--json"])
    assert fit.exit_code == 0, fit.output
    data = json.loads(fit.stdout)
    cov = {(r["variant"], r["lang"]): r for r in data["coverage"]}
    en = next(r for (v, lang), r in cov.items() if lang == "en" and "choice" in v)
    assert en["answered"] == 12 and 12 < en["cells"] <= 24
    # Real option probabilities: each comparison's (first, second, neither) sum to one.
    assert abs(en["mean_p_first"] + en["mean_p_second"] + en["mean_p_neither"] - 1) < 1e-6
    ru = next(r for (v, lang), r in cov.items() if lang == "ru" and "generate" in v)
    assert ru["answered"] == 4
    assert sum(ru[f"match_{k}"] for k in ("exact", "contains", "fuzzy", "unmatched")) == 4
    fits = {f["target"]: f for f in data["fits"] if "choice" in f["variant"]}
    # 12 comparisons give at most 24 cells: below the default minimum (20 per fixed effect), so no fit is made
    # and the summary says why, and that a monolingual control is needed anyway.
    assert fits["en"]["error"] and "too little data" in fits["en"]["error"]
    assert any(d["target"] == "en" and "too little data" in d["reason"] for d in data["dropped_fits"])
    assert any("--mono" in note for note in data["notes"])
    # Lowered minimums fit the same cells (the mixed model on real answers).
    lowered = runner.invoke(app, ["leakage", "fit", "--study", str(study), "--json", "--min-cells", "12",
                                  "--min-cells-per-trait", "1"])
    assert lowered.exit_code == 0, lowered.output
    fits = {f["target"]: f for f in json.loads(lowered.stdout)["fits"] if "choice" in f["variant"]}
    en_fit = fits["en"]
    assert en_fit["error"] is None, en_fit["error"]
    assert en_fit["n_obs"] == en["cells"] and en_fit["min_cells"] == 12
    terms = {c["term"] for c in en_fit["coefficients"]}
    assert terms == {"Intercept", "human_en", "human_ru", "human_zh", "human_hi"}
    if en_fit["usable"]:
        for c in en_fit["coefficients"]:
            assert c["ci_low"] <= c["estimate"] <= c["ci_high"] and 0 <= c["p"] <= 1
    else:  # not converged or singular on so few cells: said, and left out of the flows
        assert en_fit["dropped"]

    summary = runner.invoke(app, ["summary", "--study", str(study), "--json"])
    assert summary.exit_code == 0, summary.output
    assert json.loads(summary.stdout)["leakage"]["coverage"]
    report = runner.invoke(app, ["report", "--study", str(study)])
    assert report.exit_code == 0, report.output
    html = (study / "report.html").read_text(encoding="utf-8")
    assert "Cross-language stereotype leakage" in html and "Fits left out of the flows" in html
    assert "monolingual" in html
