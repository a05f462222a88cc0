"""The debiasing section with several base models of one setting: their tables side by side."""

from __future__ import annotations

from typing import Any

from biasatlas.probes.debias.report import sections, side_by_side_tables


def _row(contact: str, before: float, after: float) -> dict[str, Any]:
    return {"contact": contact, "n_pairs": 10, "before_pct": before, "before_ci_low": 1.0, "before_ci_high": 90.0,
            "before_biased": int(before / 10), "before_n": 10, "after_pct": after, "after_ci_low": 0.0,
            "after_ci_high": 50.0, "after_biased": int(after / 10), "after_n": 10, "effect": (after - before) / 100,
            "effect_ci_low": -0.5, "effect_ci_high": 0.1, "p": 0.02, "p_adj": 0.04}


def _comp(model: str, fingerprint: str, before: float) -> dict[str, Any]:
    return {"setting": "mixed", "part": "test", "mode": "choice", "prompts": 30, "fingerprint": fingerprint,
            "before_model": model, "after_model": f"{model}+lora",
            "tables": {"overall": [_row("none", before, 0.0), _row("positive", before / 2, 0.0)]}}


def test_two_base_models_of_a_setting_are_side_by_side() -> None:
    wide = side_by_side_tables([_comp("b", "f2", 40.0), _comp("a", "f1", 60.0)])["overall"]
    assert [c[0] for c in wide.columns if c[0]] == ["a"] * 6 + ["b"] * 6  # sorted, one group each
    assert wide[("a", "before % biased")].tolist() == ["60.0 [1.0, 90.0] (6/10)", "30.0 [1.0, 90.0] (3/10)"]
    assert wide[("a", "p adj (BH)")].tolist() == ["0.04 *", "0.04 *"]
    section = sections({"contact": [_comp("b", "f2", 40.0), _comp("a", "f1", 60.0)]})[0]
    assert sum("base models side by side" in block for block in section.blocks) == 1


def test_one_model_on_two_splits_keeps_both_apart() -> None:
    wide = side_by_side_tables([_comp("a", "f1aaaaaaaaa", 60.0), _comp("a", "f2bbbbbbbbb", 40.0)])["overall"]
    assert sorted({c[0] for c in wide.columns if c[0]}) == ["a (split f1aaaaaa)", "a (split f2bbbbbb)"]
