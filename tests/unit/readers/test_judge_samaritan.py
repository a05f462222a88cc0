"""The judge reader on Samaritan ratings with a scripted judge: a closed set of "1".."100", refusal and unclear;
the judge's rating replaces what the rules could not read, and a refusal stays unreadable with its reason."""

from __future__ import annotations

import math
from pathlib import Path

from biasatlas.backends.fake import FakeBackend
from biasatlas.probes.samaritan.probe import PROBE
from biasatlas.probes.samaritan.read import load_outcomes
from biasatlas.readers import agreement as ag
from biasatlas.readers import judge
from biasatlas.records import GenerationSettings, Request
from biasatlas.runner import run_plan
from biasatlas.store import Store

VAGUE = "Somewhere between rather likely and not at all, it depends."


def _answer(request: Request) -> str:
    category = request.prompt.meta["category"]
    return VAGUE if category == "control" else "I cannot make that judgement." if category == "age" else "70"


def _judge(request: Request) -> str:
    options = request.prompt.options
    assert len(options) == 102 and options[:3] == ("1", "2", "3")
    return "40" if VAGUE in request.prompt.text else options[100]  # a rating, else "refusal"


def test_the_judge_rates_what_the_rules_cannot(tmp_path: Path) -> None:
    store = Store(tmp_path / "study")
    config = PROBE.config(languages=["en"], limit=1, mode="generate")
    run_plan(PROBE.plan(config), FakeBackend(_answer, name="answers"), store, GenerationSettings(mode="generate"),
             progress=False)
    before = load_outcomes(store)
    unread = before["rating"].isna()
    assert unread.any() and set(before.loc[unread, "parse_reason"]) >= {"refusal"}
    scripted = FakeBackend(_judge, name="judge")
    judge.run_judge(store, "samaritan", scripted, "both")
    checks = sum(judge.in_check_sample(k) for k in before.loc[~unread, "key"])
    assert len(scripted.calls) == int(unread.sum()) + checks  # what the rules could not read, and the checks
    out = load_outcomes(store)
    control = out["category"] == "control"
    assert (out.loc[control, "rating"] == 40.0).all() and (out.loc[control, "reader"] == "judge").all()
    refused = out["category"] == "age"
    assert out.loc[refused, "rating"].map(math.isnan).all() and (out.loc[refused, "parse_reason"] == "refusal").all()
    rated = out.loc[~control & ~refused]
    assert (rated["reader"] == "rules").all() and (rated["rating"] == 70.0).all()  # checks keep the rules' rating
    summary = ag.agreement(store, "samaritan", out)
    assert summary is not None and summary["agreement"]["n"] == len(scripted.calls)
    # the rules said "refusal" for the age answers and the judge agrees; for the control they said "unclear"
    assert summary["agreement"]["agree"] == int(refused.sum())
    store.close()
