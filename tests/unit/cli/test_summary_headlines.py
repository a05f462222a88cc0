"""Issue 26: `biasatlas summary` prints the headline rows with their flags, and never 'not significant' alone."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console
from typer.testing import CliRunner

from biasatlas.cli.main import _print_headlines, app


def test_headlines_print_flags_and_the_detectable_effect() -> None:
    rows = [
        {"headline": True, "model": "m", "language": "de", "scale": "certainty", "test": "McNemar exact",
         "estimand": "change", "estimate": 0.0, "ci_low": 0.0, "ci_high": 0.0, "n": 210, "p_adj": 1.0,
         "correction": "bh", "significant": False, "flags": "one_option|too_few_units",
         "flag_notes": "answered one option 100% | too few units", "mde": None, "mde_note": "no pair is discordant"},
        {"headline": True, "model": "m", "language": "en", "test": "paired t-test", "estimand": "difference",
         "estimate": 3.2, "ci_low": -1.0, "ci_high": 7.4, "n": 40, "p_adj": 0.2, "correction": "holm",
         "significant": False, "flags": None, "flag_notes": None, "mde": 5.43, "mde_note": "80% power"},
        {"headline": False, "model": "m", "language": "en", "test": "Wilcoxon"},
    ]
    out = io.StringIO()
    _print_headlines(rows, Console(file=out, width=200))
    text = out.getvalue()
    assert "headline m · de · certainty: McNemar exact change 0, n 210" in text and "[0, 0]" not in text
    assert "⚑ answered one option 100%" in text and "⚑ too few units" in text
    assert "no detectable effect to state: no pair is discordant" in text
    assert "m · en: paired t-test difference 3.2 [-1, 7.4]" in text
    assert "smallest effect detectable at 80% power: 5.43" in text and "Wilcoxon" not in text


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
