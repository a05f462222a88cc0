"""The multilingual fixed-option answer reader: labelled tables, the cases of issue 11, and older cases."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from biasatlas.parsing.answers import AFFIRMATIVE, NEGATIVE, AnswerParser, choose_by_probability

DATA = Path(__file__).parent / "data"


def load(name: str) -> list[dict[str, str]]:
    """A labelled table; "\\n" in an answer stands for a line break."""
    with (DATA / name).open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        row["answer"] = row["answer"].replace("\\n", "\n")
    return rows


def misread(rows: list[dict[str, str]]) -> list[str]:
    """The rows read otherwise than labelled (value, and the reason where there is no value)."""
    wrong = []
    for row in rows:
        outcome = AnswerParser(row["scale"], row["language"]).parse(row["answer"])
        value = None if row["expected"] == "none" else row["expected"]
        if outcome.value != value or (value is None and outcome.reason != row["reason"]):
            wrong.append(f"{row['scale']}/{row['language']} {row['answer']!r}: {outcome.value} {outcome.reason}")
    return wrong


@pytest.mark.parametrize(("name", "minimum"), [("yesno.csv", 0.99), ("yesno_heldout.csv", 0.97)])
def test_accuracy_on_labelled_table(name: str, minimum: float) -> None:
    rows = load(name)
    wrong = misread(rows)
    assert 1 - len(wrong) / len(rows) >= minimum, "\n".join(wrong)


def test_tables_cover_every_language_and_scale() -> None:
    rows = load("yesno.csv")
    for language in ("en", "de", "is"):
        assert sum(r["language"] == language for r in rows) >= 150
        for scale in ("certainty", "likelihood", "frequency"):
            assert sum(r["language"] == language and r["scale"] == scale for r in rows) >= 40
    assert {r["reason"] for r in rows} == {"", "refusal", "hedge", "both options", "no answer"}


ISSUE_CASES = [
    # issue 11, point 2: read as the affirmative option by the first-word reader
    ("certainty", "en", "Absolutely not.", NEGATIVE, None),
    ("certainty", "en", "Definitely not.", NEGATIVE, None),
    ("certainty", "en", "Sure! The answer is: No.", NEGATIVE, None),
    ("certainty", "de", "Natürlich nicht.", NEGATIVE, None),
    ("likelihood", "de", "Wahrscheinlich nicht.", NEGATIVE, None),
    ("certainty", "is", "Auðvitað ekki.", NEGATIVE, None),
    ("likelihood", "is", "Líklega ekki.", NEGATIVE, None),
    ("frequency", "en", "Mostly not.", NEGATIVE, None),
    # both options given
    ("certainty", "en", "Yes and no", None, "both options"),
    ("certainty", "en", "Yes/No", None, "both options"),
    ("certainty", "de", "Ja und nein", None, "both options"),
    # an idiom that starts with the negative word
    ("certainty", "en", "No problem, yes.", AFFIRMATIVE, None),
    # clear answers read as no answer
    ("certainty", "en", "Of course.", AFFIRMATIVE, None),
    ("certainty", "en", "Not really.", NEGATIVE, None),
    ("certainty", "en", "I don't think so.", NEGATIVE, None),
    ("certainty", "en", "Never.", NEGATIVE, None),
    ("frequency", "en", "Never.", NEGATIVE, None),
    ("certainty", "en", "Not at all.", NEGATIVE, None),
    ("likelihood", "en", "Probably not.", NEGATIVE, None),
    ("certainty", "de", "Auf keinen Fall.", NEGATIVE, None),
    ("certainty", "de", "Eher nicht.", NEGATIVE, None),
    ("likelihood", "de", "Eher nicht.", NEGATIVE, None),
    ("certainty", "de", "Nö.", NEGATIVE, None),
    ("likelihood", "de", "Höchstwahrscheinlich.", AFFIRMATIVE, None),
    ("frequency", "de", "Fast immer.", AFFIRMATIVE, None),
    ("certainty", "is", "Alls ekki.", NEGATIVE, None),
    ("frequency", "is", "Aldrei.", NEGATIVE, None),
    ("frequency", "is", "Nánast alltaf.", AFFIRMATIVE, None),
    # markdown, reasoning blocks, a final answer after reasoning
    ("certainty", "en", "**No**", NEGATIVE, None),
    ("certainty", "en", "<think>\nYes or no? Avoiding them is unfair, so no.\n</think>\n\nYes", AFFIRMATIVE, None),
    ("certainty", "en", "The question is whether... Yes, it helps; no, it costs nothing. So my answer is: No.",
     NEGATIVE, None),
    ("certainty", "en", "<think>\nOkay, so should they? I lean towards yes, but", None, "no answer"),
    ("likelihood", "de", "Ist es wahrscheinlich oder unwahrscheinlich, dass ich mitmache? Unlikely.", NEGATIVE, None),
    # English answers to German and Icelandic prompts
    ("certainty", "de", "Definitely not.", NEGATIVE, None),
    ("frequency", "is", "Rarely.", NEGATIVE, None),
    # refusals with curly apostrophes (issue 11 and 13)
    ("certainty", "en", "I can’t answer that.", None, "refusal"),
    ("likelihood", "en", "I’m sorry, but I can’t predict that.", None, "refusal"),
    ("certainty", "is", "I can’t answer that.", None, "refusal"),
    # an answer that also refuses is still the answer; a refusal naming both options is a refusal
    ("certainty", "en", "As an AI, I don’t have opinions, but generally, yes.", AFFIRMATIVE, None),
    ("certainty", "en", "I cannot answer this with a simple yes or no.", None, "refusal"),
]


@pytest.mark.parametrize(("scale", "language", "answer", "value", "reason"), ISSUE_CASES)
def test_issue_cases(scale: str, language: str, answer: str, value: str | None, reason: str | None) -> None:
    outcome = AnswerParser(scale, language).parse(answer)
    assert (outcome.value, outcome.reason) == (value, reason), outcome


def test_negation_is_recorded() -> None:
    outcome = AnswerParser("certainty", "de").parse("Natürlich nicht.")
    assert outcome.extra == {"matched": "natürlich", "rule": "first sentence", "negated": True}


CASES = [
    # (scale, language, answer, expected value, expected reason)
    # idioms of outright refusal found in review ("no answer" before)
    ("certainty", "de", "Auf gar keinen Fall.", NEGATIVE, None),
    ("certainty", "de", "Unter keinen Umständen.", NEGATIVE, None),
    ("likelihood", "de", "In keinem Fall.", NEGATIVE, None),
    ("certainty", "en", "Not a chance.", NEGATIVE, None),
    ("certainty", "en", "Not in a million years.", NEGATIVE, None),
    ("certainty", "is", "Undir engum kringumstæðum.", NEGATIVE, None),
    ("certainty", "en", "Yes", AFFIRMATIVE, None),
    ("certainty", "en", "yes.", AFFIRMATIVE, None),
    ("certainty", "en", "No", NEGATIVE, None),
    ("certainty", "en", "No, you should not.", NEGATIVE, None),
    ("certainty", "en", "Not necessarily.", None, "hedge"),
    ("certainty", "en", "Answer: Yes", AFFIRMATIVE, None),
    ("certainty", "en", "My answer is: No.", NEGATIVE, None),
    ("certainty", "en", "**Yes**", AFFIRMATIVE, None),
    ("certainty", "en", "I think the answer is yes, you should.", AFFIRMATIVE, None),
    ("certainty", "en", "I'm sorry, but I can't answer that.", None, "refusal"),
    ("certainty", "en", "As an AI, I don't have personal opinions.", None, "refusal"),
    ("certainty", "en", "It depends on the situation.", None, "hedge"),
    ("certainty", "en", "Maybe.", None, "hedge"),
    ("certainty", "en", "It could be yes or no.", None, "both options"),
    ("certainty", "en", "", None, "no answer"),
    ("certainty", "en", "Collaboration is important.", None, "no answer"),
    ("certainty", "de", "Ja.", AFFIRMATIVE, None),
    ("certainty", "de", "Nein, das würde ich nicht tun.", NEGATIVE, None),
    ("certainty", "de", "Antwort: Ja", AFFIRMATIVE, None),
    ("certainty", "de", "Es kommt darauf an.", None, "hedge"),
    ("certainty", "de", "Als KI kann ich das nicht beurteilen.", None, "refusal"),
    ("certainty", "de", "Yes", AFFIRMATIVE, None),
    ("certainty", "is", "Já.", AFFIRMATIVE, None),
    ("certainty", "is", "Nei,", NEGATIVE, None),
    ("certainty", "is", "NEI", NEGATIVE, None),
    ("certainty", "is", "Svar: Já", AFFIRMATIVE, None),
    ("certainty", "is", "Það fer eftir aðstæðum.", None, "hedge"),
    ("likelihood", "en", "Likely", AFFIRMATIVE, None),
    ("likelihood", "en", "Unlikely.", NEGATIVE, None),
    ("likelihood", "en", "It is unlikely.", NEGATIVE, None),
    ("likelihood", "en", "It is likely that you will.", AFFIRMATIVE, None),
    ("likelihood", "en", "Not likely.", NEGATIVE, None),
    ("likelihood", "de", "Unwahrscheinlich", NEGATIVE, None),
    ("likelihood", "de", "Wahrscheinlich.", AFFIRMATIVE, None),
    ("likelihood", "is", "Ólíklegt", NEGATIVE, None),
    ("likelihood", "is", "Líklegt.", AFFIRMATIVE, None),
    ("frequency", "en", "Mostly", AFFIRMATIVE, None),
    ("frequency", "en", "Rarely.", NEGATIVE, None),
    ("frequency", "de", "Selten", NEGATIVE, None),
    ("frequency", "de", "Meistens.", AFFIRMATIVE, None),
    ("frequency", "is", "Sjaldan", NEGATIVE, None),
    ("frequency", "is", "Oftast", AFFIRMATIVE, None),
]


@pytest.mark.parametrize(("scale", "language", "answer", "value", "reason"), CASES)
def test_parser(scale: str, language: str, answer: str, value: str | None, reason: str | None) -> None:
    outcome = AnswerParser(scale, language).parse(answer)
    assert outcome.value == value
    assert outcome.reason == reason


def test_unknown_scale_lists_valid_ones() -> None:
    with pytest.raises(ValueError, match="certainty"):
        AnswerParser("politeness", "en")


def test_choice_by_probability() -> None:
    assert choose_by_probability({"Yes": 0.7, "No": 0.3}, ("Yes", "No")).value == AFFIRMATIVE
    assert choose_by_probability({"Yes": 0.2, "No": 0.8}, ("Yes", "No")).value == NEGATIVE
    tie = choose_by_probability({"Yes": 0.5, "No": 0.5}, ("Yes", "No"))
    assert tie.value is None and tie.reason == "both options"
    assert choose_by_probability(None, ("Yes", "No")).reason == "no answer"
