"""Reading stored contact answers: the token-limit flag reaches the yes/no reader."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from biasatlas.parsing import answers
from biasatlas.parsing.truncation import cut_at_limit, parse_with_cut, takes_cut
from biasatlas.probes.contact import read
from biasatlas.records import Outcome


def test_cut_at_limit_marks_length_only() -> None:
    frame = pd.DataFrame({"finish_reason": ["length", "stop", None, "choice"]})
    assert cut_at_limit(frame) == [True, False, False, False]
    assert cut_at_limit(pd.DataFrame({"text": ["a", "b"]})) == [False, False]


class _WithCut:
    def __init__(self) -> None:
        self.calls: list[bool] = []

    def parse(self, text: str | None, *, cut: bool = False) -> Outcome:
        self.calls.append(cut)
        return Outcome(reason="cut") if cut else Outcome(value="affirmative")


class _WithoutCut:
    def parse(self, text: str | None) -> Outcome:
        return Outcome(value="affirmative")


def test_parse_with_cut_passes_the_flag_only_to_a_reader_that_takes_it() -> None:
    reader = _WithCut()
    assert parse_with_cut(reader, "Yes, because", True).reason == "cut"
    assert reader.calls == [True]
    assert parse_with_cut(_WithoutCut(), "Yes, because", True).value == "affirmative"
    assert takes_cut(_WithCut().parse) and not takes_cut(_WithoutCut().parse)


def test_outcomes_pass_cut_for_answers_stopped_at_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, bool]] = []

    def parse(self: Any, text: str | None, *, cut: bool = False) -> Outcome:
        seen.append((str(text), cut))
        return Outcome(reason="cut") if cut else Outcome(value="affirmative")

    monkeypatch.setattr(answers.AnswerParser, "parse", parse)
    rows = read_rows(["Yes, I would", "Yes, if they"], ["stop", "length"])
    assert [o.value for o in rows] == ["affirmative", None]
    assert seen == [("Yes, I would", False), ("Yes, if they", True)]


def read_rows(texts: list[str], finishes: list[str]) -> list[Outcome]:
    frame = pd.DataFrame({"mode": "generate", "scale": "likelihood", "language": "en", "text": texts,
                          "option_probs": None, "options": [("yes", "no")] * len(texts), "finish_reason": finishes})
    return [read.read_row(*values, cut=cut) for *values, cut in
            zip(*(frame[c].tolist() for c in ("mode", "scale", "language", "text", "option_probs", "options")),
                cut_at_limit(frame), strict=True)]


def test_choice_answers_are_read_by_probability_even_when_cut() -> None:
    out = read.read_row("choice", "likelihood", "en", "yes", {"yes": 0.8, "no": 0.2}, ("yes", "no"), cut=True)
    assert out.value == answers.choose_by_probability({"yes": 0.8, "no": 0.2}, ("yes", "no")).value


@pytest.mark.parametrize(("action", "expected"), [("positive", "affirmative"), ("negative", "negative")])
def test_outcomes_pass_the_question_action_to_the_reader(action: str, expected: str) -> None:
    """ "No veo motivo para negarme" answers "should I refuse?" with no, "should I accept?" with yes."""
    text = {"positive": "No veo ningún motivo para negarme a trabajar con ellos.",
            "negative": "No veo ningún motivo para negarme a trabajar con ellos."}[action]
    out = read.read_row("generate", "certainty", "es", text, None, ("Sí", "No"), action=action)
    assert out.value == expected, out
