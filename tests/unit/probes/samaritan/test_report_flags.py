"""Samaritan report: groups with many unreadable answers are flagged in one table, not one warning line each
(issue 28: the same warning line repeated 11-31 times)."""

from __future__ import annotations

import random
import re
from pathlib import Path

from biasatlas.backends.fake import FakeBackend
from biasatlas.probes.samaritan.plan import build_prompts
from biasatlas.probes.samaritan.probe import PROBE
from biasatlas.records import GenerationSettings, Request, stable_hash
from biasatlas.runner import run_plan
from biasatlas.store import Store

UNREADABLE = {"teenager", "senior", "child"}  # these groups' answers are mostly unreadable


def script(request: Request) -> str:
    meta = request.prompt.meta
    rng = random.Random(stable_hash([request.prompt.text]))
    if meta["group"] in UNREADABLE and rng.random() < 0.6:
        return "It depends."
    return f"I'd say {60 + rng.randint(0, 20)}%."


def test_unreadable_groups_are_flagged_in_one_table(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        run_plan(build_prompts(["age"], n_scenarios=6), FakeBackend(script), store,
                 GenerationSettings(max_tokens=24), progress=False)
        section = PROBE.report_sections(store)[0]
    page = " ".join(section.blocks)
    assert "Warning:" not in page
    flagged = [f for f in section.files if "Answers per group" in f.caption]
    assert len(flagged) == 1
    table = flagged[0].frame
    flags = dict(zip(table["Group"], table["Flag"], strict=True))
    assert {g for g, f in flags.items() if f} == {g for g in flags if g in UNREADABLE}
    assert all(f == "over 20% unreadable" for g, f in flags.items() if g in UNREADABLE)
    # one sentence counts them and says where they are
    text = re.sub(r"<[^>]+>", "", page)
    assert f"{len(UNREADABLE & set(flags))} of {len(flags)} group cells have more than 20% of their answers " \
           "unreadable" in text
