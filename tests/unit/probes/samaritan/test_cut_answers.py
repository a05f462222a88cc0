"""The newcomer's case end to end: Samaritan answers cut at the token limit that end in a number ("... the
probability of the gender queer individual buying lunch is 1") must give no headline and no solid dot.

A scripted backend answers every group "I'd say NN." except the non-binary group, whose answers all stop at
the token limit (finish_reason "length"): 5 of 8 end in the number 1, the others mid-reasoning. Read whole,
the 1s made non-binary the largest gap (about -69 rating points), significant, drawn filled.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from pathlib import Path

import pandas as pd

from biasatlas.backends.fake import FakeBackend
from biasatlas.probes.samaritan.plan import build_prompts
from biasatlas.probes.samaritan.probe import PROBE
from biasatlas.probes.samaritan.summary import analyse, blocked
from biasatlas.records import GenerationSettings, Request, Response, stable_hash
from biasatlas.report.headlines import samaritan_headline
from biasatlas.runner import run_plan
from biasatlas.store import Store

CUT_GROUP = "non-binary"


def _script(request: Request) -> str:
    meta = request.prompt.meta
    rng = random.Random(stable_hash([request.prompt.text]))
    if meta["group"] == CUT_GROUP:
        person = "the gender queer individual" if "queer" in request.prompt.text else "the non-binary individual"
        if rng.random() < 5 / 8:
            return (f"Let me think about this step by step. The situation is everyday and low-cost, and {person} "
                    f"is nearby. Based on that, the probability of {person} helping is 1")
        return f"Let me think about this step by step. The situation is everyday, and {person} is nearby, so"
    return f"I'd say {68 + rng.randint(-4, 4)}."


class CutBackend(FakeBackend):
    """The scripted answers, with the cut group's answers stopped at the token limit."""

    def generate(self, requests: Sequence[Request]) -> Iterator[Response]:
        by_key = {r.cache_key(self.id): r for r in requests}
        for response in super().generate(requests):
            cut = by_key[response.key].prompt.meta["group"] == CUT_GROUP
            yield response.model_copy(update={"finish_reason": "length" if cut else "stop"})


def _study(path: Path) -> Store:
    store = Store(path)
    run_plan(build_prompts(["gender"], n_scenarios=8, max_tokens=64), CutBackend(_script), store,
             GenerationSettings(max_tokens=64), progress=False)
    return store


def test_cut_answers_ending_in_a_number_give_no_headline_and_no_solid_dot(tmp_path: Path) -> None:
    with _study(tmp_path) as store:
        summary = PROBE.summarise(store)
        outcomes = PROBE.outcomes(store)
    cut_rows = outcomes[outcomes["group"] == CUT_GROUP]
    assert len(cut_rows) and cut_rows["rating"].isna().all()
    assert set(cut_rows["parse_reason"]) == {"cut"}
    headline = samaritan_headline(summary)
    assert not headline.empty and not headline["measure"].str.contains(CUT_GROUP).any(), headline["measure"]
    groups = pd.DataFrame(summary["groups"])
    cut = groups[groups["group"] == CUT_GROUP]
    # the forest plot fills a dot only for a significant group whose flags allow a finding
    solid = cut["significant"].map(lambda v: v is True) & ~cut["flags"].map(blocked)
    assert not solid.any(), cut[["group", "significant", "flags"]]
    # the cell is flagged, not silent: its answers unread, and stopped at the token limit
    assert cut["flags"].fillna("").str.contains("unreadable").all()
    assert cut["flags"].fillna("").str.contains("cut_at_limit").all()
    assert not groups.loc[groups["group"] != CUT_GROUP, "flags"].fillna("").str.contains("cut_at_limit").any()


def test_the_same_answers_read_whole_made_the_headline(tmp_path: Path) -> None:
    """The defect as it was: with the token-limit flag ignored the 1s are read and make the headline."""
    with _study(tmp_path) as store:
        frame = store.frame(probe="samaritan")
        assert (frame.loc[frame["group"] == CUT_GROUP, "finish_reason"] == "length").all()
        from biasatlas.probes.samaritan.read import outcomes

        whole = outcomes(frame.drop(columns=["finish_reason"]), store)
    read = whole[(whole["group"] == CUT_GROUP) & whole["rating"].notna()]
    assert len(read) and (read["rating"] == 1).all()
    groups = analyse(whole, alpha=0.01, correction="holm")["groups"]
    top = groups.loc[groups["mean_diff"].abs().idxmax()]
    assert top["group"] == CUT_GROUP and top["mean_diff"] < -60 and bool(top["significant"])
