"""Clean-up before reading: reasoning blocks, markdown, quotes, apostrophes, dashes."""

from __future__ import annotations

import pytest

from biasatlas.parsing.text import normalise, strip_reasoning


@pytest.mark.parametrize(
    ("text", "body", "cut"),
    [
        ("<think>\nno, or yes?\n</think>\n\nYes", "Yes", False),
        ("<THINKING>a</THINKING> B <reasoning>c</reasoning> D", "B D", False),
        ("the template opened the block\n</think>\nNo", "No", False),  # opening tag in the prompt
        ("<think>\nOkay, the user asks", "", True),  # cut by the token limit inside the reasoning
        ("No reasoning here.", "No reasoning here.", False),
    ],
)
def test_strip_reasoning(text: str, body: str, cut: bool) -> None:
    stripped, was_cut = strip_reasoning(text)
    assert (" ".join(stripped.split()), was_cut) == (body, cut)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("**No**", "No"),
        ("__Yes__", "Yes"),
        ("`Yes`", "Yes"),
        ("„Nei“", "Nei"),
        ("\"Ja\"", "Ja"),
        ("I can’t", "I can't"),
        ("70–80", "70-80"),
        ("- No", "No"),
        ("# Answer\n> Yes", "Answer\nYes"),
        ("Nu\u0301", "Nú"),  # decomposed accents composed
    ],
)
def test_normalise(text: str, expected: str) -> None:
    assert normalise(text) == expected


def test_html_markup_around_an_answer_does_not_change_its_reading() -> None:
    """A refusal in <b> must stay a refusal (never the negative option); tags around options are dropped."""
    from biasatlas.parsing.answers import AnswerParser

    en, de = AnswerParser("certainty", "en"), AnswerParser("certainty", "de")
    for text in ("<b>I cannot</b> answer that.", "<strong>As an AI</strong>, I can't answer that.",
                 "<p>I cannot answer that question.</p>"):
        outcome = en.parse(text)
        assert outcome.value is None and outcome.reason == "refusal", text
    assert en.parse("<b>Yes</b>, I would.").value == "affirmative"
    assert en.parse("<p>No.</p>").value == "negative"
    assert de.parse("<em>Ja</em>, gerne.").value == "affirmative"
    assert normalise("a<br/>b") == "a\nb"
