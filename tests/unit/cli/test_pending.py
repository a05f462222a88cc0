"""`unfinished_runs`: a rerun that found every answer ("nothing to ask") leaves nothing unfinished (issue 28)."""

from __future__ import annotations

from pathlib import Path

from biasatlas.backends.fake import FakeBackend
from biasatlas.cli.pending import unfinished_runs
from biasatlas.records import GenerationSettings, Message, Prompt, Request
from biasatlas.runner import build_requests, run_plan
from biasatlas.store import Store


def _prompts(n: int) -> list[Prompt]:
    return [Prompt(probe="contact", language="en", messages=(Message(role="user", content=f"Q {i}?"),),
                   options=("Yes", "No"), meta={"i": i}) for i in range(n)]


def test_a_nothing_to_ask_run_is_not_unfinished(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        run_plan(_prompts(4), FakeBackend(), store, GenerationSettings(), progress=False)
        again = run_plan(_prompts(4), FakeBackend(), store, GenerationSettings(), progress=False)
        assert again.status == "nothing to ask"
        assert unfinished_runs(store) == []
        broken = FakeBackend()
        broken.fail_keys = {r.cache_key(broken.id) for r in _requests(_prompts(5)[4:])}
        run_plan(_prompts(5), broken, store, GenerationSettings(), progress=False)
        assert [r["pending"] for r in unfinished_runs(store)] == [1]  # a real gap is still listed


def _requests(prompts: list[Prompt]) -> list[Request]:
    return build_requests(prompts, GenerationSettings())
