"""The printed debiasing summary (what `biasatlas debias` and `summary` show at the end)."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from biasatlas.probes.debias.summary import print_summary


def _qa(low: float, high: float) -> dict[str, Any]:
    return {"task": "qa", "setting": "mixed", "n": 3, "rouge_l_before": 0.286, "rouge_l_after": 0.25,
            "difference": {"ci_low": low, "ci_high": high, "p": None}, "wilcoxon": {"p": 1.0}}


def _printed(summary: dict[str, Any]) -> str:
    console = Console(record=True, width=200)
    print_summary(summary, console)
    return console.export_text()


def test_qa_interval_bounds_are_numbers_not_p_values() -> None:
    text = _printed({"contact": [], "quality": [_qa(0.0, 0.0)]})
    assert "< 1e-300" not in text
    assert "[+0.000, +0.000]" in text
    text = _printed({"contact": [], "quality": [_qa(-0.125, 0.05)]})
    assert "[-0.125, +0.050]" in text
