"""Matching generated theme answers to the offered traits in each language."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from biasatlas.probes.leakage.match import match_answer

CASES = [
    # (language, answer, offered (A, B), expected choice, expected level)
    ("en", "Powerful", ("powerful", "wealthy"), "powerful", "exact"),
    ("en", "Neither", ("powerful", "wealthy"), "neither", "exact"),
    ("en", 'I choose "wealthy".', ("powerful", "wealthy"), "wealthy", "contains"),
    ("en", "non religious", ("non religious", "liberal"), "non religious", "exact"),
    ("en", "Non-Religious", ("non religious", "liberal"), "non religious", "exact"),
    ("en", "likeable", ("likable", "warm"), "likable", "contains"),
    ("en", "powerfull", ("powerful", "wealthy"), "powerful", "fuzzy"),
    ("ru", "«Богатая»", ("powerful", "wealthy"), "wealthy", "exact"),
    ("ru", "богатой", ("powerful", "wealthy"), "wealthy", "fuzzy"),
    ("ru", "Ни то ни другое.", ("powerful", "wealthy"), "neither", "exact"),
    ("ru", "Тема: надежный", ("trustworthy", "warm"), "trustworthy", "contains"),
    ("zh", "主题：富有", ("confident", "wealthy"), "wealthy", "contains"),
    ("zh", "都不是", ("confident", "wealthy"), "neither", "exact"),
    ("hi", "दबी हुई", ("dominated", "poor"), "dominated", "exact"),
    ("hi", "मैं 'गरीब' चुनता हूँ", ("dominated", "poor"), "poor", "contains"),
    ("hi", "कोई नहीं।", ("dominated", "poor"), "neither", "exact"),
]


@pytest.mark.parametrize(("lang", "answer", "offered", "choice", "level"), CASES)
def test_answers_match_the_offered_trait(lang: str, answer: str, offered: tuple[str, str], choice: str,
                                         level: str) -> None:
    match = match_answer(answer, (*offered, "neither"), lang)
    assert (match.choice, match.level) == (choice, level)


@pytest.mark.parametrize(
    ("lang", "answer", "offered", "reason"),
    [
        ("en", "unconfident", ("confident", "wealthy"), "other trait: unconfident"),
        ("zh", "不自信", ("confident", "wealthy"), "other trait: unconfident"),
        ("ru", "нерелигиозный", ("religious", "traditional"), "other trait: non religious"),
        ("en", "powerful or wealthy", ("powerful", "wealthy"), "both options"),
        ("en", "Once upon a time", ("powerful", "wealthy"), "no option"),
        ("en", "   ", ("powerful", "wealthy"), "empty answer"),
    ],
)
def test_unmatched_answers_keep_a_reason(lang: str, answer: str, offered: tuple[str, str], reason: str) -> None:
    match = match_answer(answer, (*offered, "neither"), lang)
    assert match.choice is None and match.level == "unmatched" and match.reason == reason


def misread_theme_answers() -> list[str]:
    """The rows of the labelled table (data/theme_answers.csv) read otherwise than labelled."""
    with (Path(__file__).parent / "data" / "theme_answers.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    wrong = []
    for row in rows:
        match = match_answer(row["answer"], (row["option_a"], row["option_b"], "neither"), row["language"])
        expected = (None, row["reason"]) if row["expected"] == "none" else (row["expected"], None)
        if (match.choice, match.reason) != expected:
            wrong.append(f"{row['language']} {row['answer']!r}: {match}")
    return wrong


def test_labelled_theme_answers_negations_included() -> None:
    """"Not wealthy." is not a vote for "wealthy"; "Neither poor nor wealthy." is "neither"."""
    assert misread_theme_answers() == []
