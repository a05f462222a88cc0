"""Issue 26: `biasatlas summary` prints the headline rows with their flags, and never 'not significant' alone."""

from __future__ import annotations

import io

from rich.console import Console

from biasatlas.cli.main import _print_headlines


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
