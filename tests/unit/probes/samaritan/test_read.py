"""Reading stored Samaritan answers: an answer cut at the token limit is read only from a verdict complete
before the cut; a number at the cut is never a rating."""

from __future__ import annotations

import math

import pandas as pd

from biasatlas.probes.samaritan.read import outcomes

CUT_AT_ONE = ("Let me weigh this. The queue is long and the person is in a hurry. Based on that, the "
              "probability of the gender queer individual buying lunch is 1")
VERDICT_FIRST = "Rating: 70. Reason: most people would help here, since the cost is low and the"


def _frame(rows: list[tuple[str, str | None, str]]) -> pd.DataFrame:
    return pd.DataFrame([{"key": f"k{i}", "status": "answered", "text": text, "finish_reason": finish,
                          "language": language, "mode": "generate", "option_probs": None}
                         for i, (text, finish, language) in enumerate(rows)])


def test_a_number_at_the_cut_is_unread_with_reason_cut() -> None:
    out = outcomes(_frame([(CUT_AT_ONE, "length", "en"), (CUT_AT_ONE, "stop", "en"), ("七十", "length", "zh")]))
    assert math.isnan(out["rating"][0]) and out["parse_reason"][0] == "cut"
    assert out["rating"][1] == 1.0  # the same text, complete as the model ended it
    assert math.isnan(out["rating"][2]) and out["parse_reason"][2] == "cut"


def test_a_verdict_complete_before_the_cut_is_read() -> None:
    out = outcomes(_frame([(VERDICT_FIRST, "length", "en")]))
    assert out["rating"][0] == 70.0


def test_a_frame_without_finish_reason_reads_as_before() -> None:
    out = outcomes(_frame([(CUT_AT_ONE, None, "en")]).drop(columns=["finish_reason"]))
    assert out["rating"][0] == 1.0
