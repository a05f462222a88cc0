"""A judge whose replies give no label is not silent: markdown around a label is read, anything else is
unreadable ("judge unusable") under the judge's reading, never the rules' label in disguise, and counted."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from biasatlas.backends.fake import FakeBackend
from biasatlas.probes.contact.probe import PROBE
from biasatlas.probes.contact.read import load_outcomes
from biasatlas.readers import judge
from biasatlas.records import GenerationSettings, Request, Response
from biasatlas.runner import run_plan
from biasatlas.store import Store


class TextJudge(FakeBackend):
    """A chat-only judge: its choice-mode answers are free text (no option probabilities)."""

    def score_choices(self, requests: Sequence[Request]) -> Iterator[Response]:
        for request in requests:
            key = request.cache_key(self.id)
            assert self.script is not None
            yield Response(key=key, backend_id=self.id, text=self.script(request), finish_reason="stop")


def _study(tmp_path: Path) -> Path:
    config = PROBE.config(languages=["en"], limit=12, mode="generate")
    with Store(tmp_path) as store:
        run_plan(PROBE.plan(config), FakeBackend(lambda r: "Yes.", name="answers"), store,
                 GenerationSettings(mode="generate"), progress=False)
    return tmp_path


@pytest.mark.parametrize(("reply", "label"), [("**No**", "negative"), ("Label: No.", "negative"),
                                               ("`Unclear`", "unclear"), ("  no  ", "negative")])
def test_a_label_wrapped_in_markdown_or_labelled_is_read(tmp_path: Path, reply: str, label: str) -> None:
    study = _study(tmp_path)
    with Store(study) as store:
        judge.run_judge(store, "contact", TextJudge(lambda r: reply, name="judge"), "judge")
        labels = judge.judge_labels(store, "contact", "fake:judge")
    assert labels and set(labels.values()) == {label}


@pytest.mark.parametrize("reply", ["I cannot help with labelling this.", "Oui", "The answer seems positive, so Yes"])
def test_an_unusable_reply_is_unreadable_under_the_judge_and_counted(tmp_path: Path, reply: str) -> None:
    study = _study(tmp_path)
    with Store(study) as store:
        judge.run_judge(store, "contact", TextJudge(lambda r: reply, name="judge"), "judge")
        out = load_outcomes(store)
        unusable = judge.unusable_judge_keys(store, "contact", "fake:judge")
    answered = out[out["status"] == "answered"]
    assert len(unusable) == len(answered) > 0
    assert (answered["reason"] == "judge unusable").all(), answered["reason"].tolist()
    assert answered["answer"].isna().all()  # not the rules' "Yes"


def test_the_judge_step_warns_of_unusable_replies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from biasatlas import reading_step as step
    from biasatlas.backends.options import BackendOptions

    study = _study(tmp_path)
    monkeypatch.setattr(BackendOptions, "open", lambda self: TextJudge(lambda r: "Je ne sais pas.", name="judge"))
    step.run_reading("contact", study, "judge", BackendOptions(model="fake:judge"))
    err = capsys.readouterr().err
    assert "no usable label for 12 of the 12 answers" in err and "judge unusable" in err
