"""Every decoding of a prompt is its own set of answers in the frame, with the run that planned it."""

from __future__ import annotations

from pathlib import Path

from biasatlas.backends.fake import FakeBackend
from biasatlas.records import GenerationSettings, Message, Prompt, Request
from biasatlas.runner import run_plan
from biasatlas.store import Store


def _prompts(n: int) -> list[Prompt]:
    return [
        Prompt(probe="contact", language="en", messages=(Message(role="user", content=f"Q{i}?"),),
               options=("Yes", "No"), meta={"i": i})
        for i in range(n)
    ]


def _by_decoding(request: Request) -> str:
    """A model whose answer depends on its decoding: greedy says Yes, sampled says No."""
    return "Yes" if request.settings.temperature == 0 else "No"


def test_a_second_decoding_is_shown_beside_the_first_with_its_own_run(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        first = run_plan(_prompts(3), FakeBackend(_by_decoding), store,
                         GenerationSettings(max_tokens=16), progress=False)
        second = run_plan(_prompts(3), FakeBackend(_by_decoding), store,
                          GenerationSettings(max_tokens=16, temperature=0.7), progress=False)
        frame = store.frame(probe="contact")
    assert len(frame) == 6  # 3 prompts x 2 decodings: none hidden
    texts = frame.groupby("run_id")["text"].agg(set).to_dict()
    assert texts == {first.run_id: {"Yes"}, second.run_id: {"No"}}  # each answer with the run that planned it
    assert frame["decoding"].nunique() == 2
    # Two decodings of one model and mode are two systems: every surface keying on model keeps them apart,
    # and the backend id is kept.
    assert frame["model"].nunique() == 2
    assert set(frame["model_id"]) == {"fake:fake"}
    for model, rows in frame.groupby("model"):
        assert rows["text"].nunique() == 1, model


def test_one_decoding_keeps_the_plain_model_name_and_a_rerun_adds_no_row(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        run_plan(_prompts(3), FakeBackend(), store, GenerationSettings(max_tokens=16), progress=False)
        again = run_plan(_prompts(3), FakeBackend(), store, GenerationSettings(max_tokens=16), progress=False)
        frame = store.frame(probe="contact")
    assert len(frame) == 3
    assert set(frame["model"]) == {"fake:fake"}
    assert set(frame["run_id"]) == {again.run_id}
    assert frame["decoding"].tolist() == ["greedy, max_tokens 16"] * 3


def test_choice_mode_has_no_decoding_to_split(tmp_path: Path) -> None:
    with Store(tmp_path) as store:
        run_plan(_prompts(2), FakeBackend(), store, GenerationSettings(mode="choice", max_tokens=5), progress=False)
        run_plan(_prompts(2), FakeBackend(), store, GenerationSettings(mode="choice", max_tokens=9), progress=False)
        frame = store.frame(probe="contact")
    assert len(frame) == 2
    assert set(frame["decoding"]) == {"choice"}
    assert set(frame["model"]) == {"fake:fake"}
