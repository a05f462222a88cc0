"""Issue 26: `biasatlas summary` prints the headline rows with their flags, and never 'not significant' alone."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from biasatlas.cli.headlines import headline_blocks
from biasatlas.cli.main import app


def test_headlines_print_flags_and_the_detectable_effect() -> None:
    rows = [
        {"headline": True, "model": "m", "language": "de", "scale": "certainty", "test": "McNemar exact",
         "comparison": "positive vs none", "estimand": "change in the proportion", "estimate": 0.0, "ci_low": 0.0,
         "ci_high": 0.0, "n": 210, "p_adj": 1.0, "correction": "bh", "significant": False,
         "flags": "one_option|too_few_units", "flag_notes": "answered one option 100% | too few units", "mde": None,
         "mde_note": "no pair is discordant"},
        {"headline": True, "model": "m", "language": "en", "test": "paired t-test", "comparison": "g vs control",
         "estimand": "difference", "estimate": 3.2, "ci_low": -1.0, "ci_high": 7.4, "n": 40, "p_adj": 0.2,
         "correction": "holm", "significant": False, "flags": None, "flag_notes": None, "mde": 5.43,
         "mde_note": "80% power"},
        {"headline": False, "model": "m", "language": "en", "test": "Wilcoxon", "significant": True, "p_adj": 0.01,
         "comparison": "g vs control", "alpha": 0.05},
    ]
    blocks = dict(headline_blocks("contact", "Probe", rows, {"model": "m"}))
    de, en = blocks["Probe · de"], blocks["Probe · en"]
    assert de[0].startswith("headline: positive vs none (certainty): +0.0 pp, n 210, p adj 1 (BH)")
    assert "[+0.0, +0.0]" not in de[0] and "⚑ one_option|too_few_units" in de[0]
    assert "⚑ answered one option 100%" in de and "⚑ too few units" in de
    assert "no detectable effect to state: no pair is discordant" in de[-1]
    assert en[0].startswith("headline: g vs control: +3.2 [-1, +7.4], n 40, p adj 0.2 (Holm)")
    # not significant, joined with the table cell that is, in one sentence
    assert en[-1].startswith("Not significant (smallest effect detectable at 80% power: ±5.43)")
    assert "but 1 other test below is (p adj < 0.05), the smallest p adj 0.01: g vs control, Wilcoxon" in en[-1]


def test_summary_json_gives_debias_the_export_statistics_rows(tmp_path: Path) -> None:
    """Every probe's `summary --json` has `statistics`, the same rows the export writes (issue 26.4)."""
    from biasatlas.backends.fake import FakeBackend
    from biasatlas.export.statistics import statistics_rows
    from biasatlas.probes.debias import evaluate
    from biasatlas.probes.debias.data import unbiased_answer
    from biasatlas.probes.debias.probe import PROBE
    from biasatlas.probes.debias.splits import build_split
    from biasatlas.records import GenerationSettings
    from biasatlas.runner import run_plan
    from biasatlas.store import Store

    split = build_split("cross-scenario", limit=60, seed=0)
    with Store(tmp_path) as store:
        for role, script, name in (("before", lambda r: r.prompt.options[0], "base"),
                                   ("after", lambda r: unbiased_answer(r.prompt), "base+lora")):
            cfg = evaluate.run_config(role, "cross-scenario", "test", split.fingerprint(), "fake", None, "en")
            run_plan(split.test, FakeBackend(script, name=name), store, GenerationSettings(mode="choice"),
                     config=cfg, progress=False)
        expected = statistics_rows("debias", PROBE.summarise(store))
    result = CliRunner().invoke(app, ["summary", "--study", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["debias"]["statistics"]
    assert rows and len(rows) == len(expected) and {r["test"] for r in rows} == {r["test"] for r in expected}
    assert all(r["flags"] is not None or r["flag_notes"] is not None or r["min_units"] is not None for r in rows)
