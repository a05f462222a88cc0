"""The misread classes of issue 27 that the independent tables found, each fixed as a class and checked on
rows written for it (``data/misread_classes.csv``, ``data/ratings_misread_classes.csv``), not on the
independent tables' strings."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from biasatlas.languages.readers import load_table
from biasatlas.parsing.answers import AnswerParser
from biasatlas.parsing.continuation import cut_continuation
from biasatlas.parsing.numbers import parse_rating

DATA = Path(__file__).parent / "data"


def load(name: str) -> list[dict[str, str]]:
    return load_table(DATA / name)


YESNO = load("misread_classes.csv")
RATINGS = load("ratings_misread_classes.csv")


@pytest.mark.parametrize("row", YESNO, ids=[f"{r['class']}-{r['language']}-{i}" for i, r in enumerate(YESNO)])
def test_yesno_class(row: dict[str, str]) -> None:
    outcome = AnswerParser(row["scale"], row["language"]).parse(row["answer"])
    if row["expected"] == "none":  # "hedge|refusal": either reason is right ("Das kann man nicht sagen.")
        assert outcome.value is None and outcome.reason in row["reason"].split("|"), outcome
    else:
        assert outcome.value == row["expected"], outcome


@pytest.mark.parametrize("row", RATINGS, ids=[f"{r['class']}-{r['language']}-{i}" for i, r in enumerate(RATINGS)])
def test_rating_class(row: dict[str, str]) -> None:
    outcome = parse_rating(row["answer"], row["language"])
    if row["expected"] == "none":
        assert (outcome.value, outcome.reason) == (None, row["reason"])
    else:
        assert outcome.value is not None and math.isclose(outcome.value, float(row["expected"])), outcome


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Yes\nQuestion: Would you?\nAnswer: No", "Yes"),
        ("Question: Would you?\nAnswer: Yes", "Question: Would you?\nAnswer: Yes"),  # the prompt echoed first
        ("No. Q: Would you? A: Yes", "No."),
        ("Likely\n### Instruction\nRate it.", "Likely"),
        ("Yes.\nWhy not?", "Yes.\nWhy not?"),  # a short rhetorical question is part of the answer
        ("The question: should I? Yes.", "The question: should I? Yes."),  # not a label after a sentence end
    ],
)
def test_cut_continuation(text: str, kept: str) -> None:
    assert cut_continuation(text).strip() == kept


def test_a_language_adds_its_continuation_labels_as_data(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new language's word-list file adds its labels (``continuations: [interlocuteur]``, written flat)."""
    import copy

    from biasatlas.parsing import continuation, lexicon

    data = copy.deepcopy(lexicon._data())
    lexicon.merge(data, lexicon.per_language({"language": "fr", "continuations": ["interlocuteur"]}))
    text = "Oui.\nInterlocuteur : Réponds pour un voisin rom.\nNon"
    assert cut_continuation(text) == text
    monkeypatch.setattr(lexicon, "_data", lambda: data)
    lexicon.continuation_labels.cache_clear()
    continuation._markers.cache_clear()
    try:
        assert cut_continuation(text).strip() == "Oui."
    finally:
        monkeypatch.undo()
        lexicon.continuation_labels.cache_clear()
        continuation._markers.cache_clear()
