"""Contact across languages from a real study (issue 37): the summary's block counts the questions the store
holds, the MMHB no-contact text that six prompt sets of a group share once and three samples as one unit."""

from __future__ import annotations

import random
from pathlib import Path

from biasatlas.backends.fake import FakeBackend
from biasatlas.probes.contact.plan import ContactConfig, build_prompts
from biasatlas.probes.contact.summary import summarise
from biasatlas.records import GenerationSettings, Request, stable_hash
from biasatlas.runner import run_plan
from biasatlas.store import Store


def script(request: Request) -> str:
    rng = random.Random(stable_hash([request.prompt.text, request.sample_index]))
    return rng.choice(["Yes.", "No."])


def test_the_summary_block_counts_each_stored_question_once(tmp_path: Path) -> None:
    config = ContactConfig(languages=["fr", "es"], axes=["religion"], scenarios=["education"])
    prompts = build_prompts(config)
    with Store(tmp_path / "study.db") as store:
        run_plan(prompts, FakeBackend(script), store, GenerationSettings(), samples=3, progress=False)
        block = summarise(store)["across_languages"]
    group = prompts[0].meta["descriptor"]
    mine = [p for p in prompts if p.meta["descriptor"] == group]
    questions = len({(p.language, p.text) for p in mine})
    assert questions < len(mine)  # the no-contact text is shared by the group's prompt sets
    test = next(t for t in block["tests"] if t["group"] == group)
    # every question once (a tie of three samples cannot happen: all are readable), the samples one unit
    assert test["n"] == questions and test["mode"] == "generate"
    assert "question" in block["unit"] and "question" in block["method"]
