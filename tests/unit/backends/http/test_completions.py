"""Full-option scoring from echoed prompt log-probabilities: the pure parts."""

from __future__ import annotations

import math
from typing import Any

import pytest

from biasatlas.backends.http.completions import (
    Unusable,
    exact_next_token,
    option_span,
    spells,
)
from biasatlas.backends.scoring import option_probabilities


def echo(tokens: list[str], logprobs: list[float | None], prompt_tokens: int, completion_tokens: int = 1) -> dict:
    choice: dict[str, Any] = {"text": "", "logprobs": {"tokens": tokens, "token_logprobs": logprobs}}
    return {"choices": [choice], "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}}


def test_span_is_counted_from_the_end() -> None:
    # vLLM-like: BOS with no log-probability, 4 context tokens, "Lik"+"ely", one generated token
    data = echo(["<s>", "a", "b", "\n", "Lik", "ely", "."], [None, -1.0, -1.0, -0.5, -0.25, -0.5, -2.0], 6)
    total, n = option_span(data, context_tokens=4, option="Likely")
    assert (total, n) == (-0.75, 2)


def test_span_when_nothing_was_generated() -> None:
    # llama-cpp-python: BOS dropped from the list, and no entry when the first token generated is EOS
    data = echo(["a", "\n", "Yes"], [-1.0, -0.5, -0.3], prompt_tokens=3, completion_tokens=0)
    assert option_span(data, context_tokens=2, option="Yes") == (-0.3, 1)


def test_split_characters_still_spell_the_option() -> None:
    tokens = ["\n", "", "\ufffd", "l", "í", "k", "leg", "t", "x"]
    data = echo(tokens, [-0.1] * 9, prompt_tokens=8)
    total, n = option_span(data, context_tokens=1, option="Ólíklegt")
    assert n == 7 and total == pytest.approx(-0.7)


def test_generated_token_only_is_no_echo() -> None:
    data = echo(["Yes"], [-0.3], prompt_tokens=40)
    with pytest.raises(Unusable, match="generated tokens only"):
        option_span(data, context_tokens=39, option="Yes")


def test_missing_logprobs_or_usage_are_unusable() -> None:
    with pytest.raises(Unusable, match="no log-probabilities"):
        option_span({"choices": [{"logprobs": None}], "usage": {}}, 3, "Yes")
    with pytest.raises(Unusable, match=r"usage\.prompt_tokens"):
        option_span({"choices": [{"logprobs": {"tokens": ["a"], "token_logprobs": [-1.0]}}]}, 3, "Yes")


def test_a_span_that_does_not_spell_the_option_is_refused() -> None:
    # one token off (a wrong generated count): the span would hold "\n" + "Lik"
    data = echo(["a", "\n", "Lik", "ely"], [-1.0, -0.5, -0.25, -0.5], prompt_tokens=4, completion_tokens=1)
    with pytest.raises(Unusable, match="do not spell"):
        option_span(data, context_tokens=2, option="Likely")


@pytest.mark.parametrize(
    ("tokens", "option", "ok"),
    [
        (["Yes"], "Yes", True),
        (["Very", " likely"], "Very likely", True),
        (["Very", "Ġlikely"], "Very likely", True),
        (["", "\ufffd", "líklegt"], "Ólíklegt", True),
        (["\n", "Lik"], "Likely", False),
        (["ely", "."], "Likely", False),
        (["ikely"], "Likely", False),  # an ASCII first letter is never lost
        (["No"], "Yes", False),
        ([""], "Yes", False),
    ],
)
def test_spells(tokens: list[str], option: str, ok: bool) -> None:
    assert spells(tokens, option) is ok


def test_sum_and_mean_normalisation() -> None:
    logprobs = {"Likely": math.log(0.2) * 3, "Unlikely": math.log(0.1) * 2}
    tokens = {"Likely": 3, "Unlikely": 2}
    by_sum = option_probabilities(logprobs, tokens, "sum")
    by_mean = option_probabilities(logprobs, tokens, "mean")
    assert by_sum["Likely"] == pytest.approx(0.008 / (0.008 + 0.01))
    assert by_mean["Likely"] == pytest.approx(0.2 / 0.3)
    assert sum(by_sum.values()) == pytest.approx(1.0) and sum(by_mean.values()) == pytest.approx(1.0)


def test_exact_next_token_needs_every_option_exactly() -> None:
    pairs = [("Yes", -0.5), (" yes", -1.0), ("No", -1.5)]
    assert exact_next_token(pairs, ("Yes", "No")) == {"Yes": -0.5, "No": -1.5}
    assert exact_next_token([("Yes", -0.5), (" no", -1.0)], ("Yes", "No")) is None
