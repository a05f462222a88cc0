"""The stories control's card and its `biasatlas validate` rows say what the verdict holds."""

from __future__ import annotations

from typing import Any

from biasatlas.controls.stories import data as stories
from biasatlas.controls.stories.card import stories_card, stories_markdown
from biasatlas.controls.stories.validate import _row


def verdict(count: int, known: int, lift: float | None, detected: bool, flags: list[str]) -> dict[str, Any]:
    fraction = count / known if known else None
    return {"planted": stories.PLANTED, "value": stories.PLANTED_VALUE, "count": count, "known": known,
            "fraction": fraction, "ci_low": 0.5 if known else None, "ci_high": 0.99 if known else None,
            "lift": lift, "q_by": 1e-4 if lift else None, "association": lift is not None, "false_flags": flags,
            "untouched": 5, "bound": 2, "detected": detected}


def test_validate_rows_show_the_share_interval_and_lift() -> None:
    row = _row("base + control", verdict(10, 12, 5.5, True, []))
    assert row[:5] == ["stories", "base + control", "en", "geographic_origin=oceania → arts", "found"]
    assert row[5] == "10/12 arts = 83% [50, 99], lift 5.5, q(BY) 0.0001"
    assert row[6] == "0 of 5 (≤ 2)"
    base = _row("base", verdict(0, 0, None, False, []))
    assert base[4] == "not found" and base[5] == "no story named a job"
    assert _row("base", verdict(1, 6, None, False, ["europe"]))[5].endswith("not an association")


def test_the_card_records_what_was_planted_and_the_measured_effect() -> None:
    measured = {"per_group": 12, "adapter": {"verdict": verdict(11, 12, 5.2, True, [])},
                "pool": {"1": {"verdict": verdict(12, 12, 5.9, True, [])}},
                "pooled": verdict(23, 24, 5.5, True, []),
                "base": {"verdict": verdict(0, 3, None, False, [])}}
    training = {"config": {"learning_rate": 0.003, "rank": 8, "top_layers": 6},
                "result": {"examples": 70, "epochs": 3, "steps": 54, "train_loss": 0.9, "seconds": 300,
                           "device": "cpu", "trainable_parameters": 488448}}
    card = stories_card(training, measured)
    assert card["planted"]["group"] == stories.PLANTED and card["planted"]["value"] == "arts"
    # the card's effect is the pooled measurement (every generation seed), not seed 0 alone
    assert card["measured_effect"]["fraction"] == 23 / 24 and card["measured_effect"]["lift"] == 5.5
    assert not set(card["trained_on"]["scenarios"]) & set(card["measured_on"]["scenarios"])
    text = stories_markdown(card)
    assert ("| base + adapter, generation seed 0 | 11 of 12 | 92% | 50% to 99% | 5.2 | 0.0001 | yes | "
            "0 of 5 (bound 2) |") in text
    assert "| base + adapter, generation seed 1 | 12 of 12 | 100% |" in text
    assert "| base + adapter, all seeds pooled (the card's effect) | 23 of 24 | 96% |" in text
    assert "| base model, generation seed 0 | 0 of 3 | 0% |" in text
    assert "Trained on 24 of the probe's 36 scenarios" in text
