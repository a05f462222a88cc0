"""The yes/no reader's precision rule, its confidence and its truncation contract (docs/readers.md).

``data/wave3_yesno_dev.csv`` and ``data/wave3_yesno_measure.csv`` were written before the reader was read or
run (see their header comments); the rules were fixed on the dev table only, the measure table is the
untouched estimate. A row is read right when the value equals the label (no value for "none"); a wrong
option is a value that is not the label (another option, or any option for a "none" row).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from biasatlas.languages.readers import load_table
from biasatlas.parsing.answers import AFFIRMATIVE, NEGATIVE, AnswerParser, parse_row

DATA = Path(__file__).parent / "data"
LANGUAGES = ("en", "de", "is", "fr", "es", "it", "pt", "hi", "id", "vi", "zh", "ko")
CLASSES = ("short", "verdict", "refusal", "refusal_both", "mind_change", "trunc_nocut", "cut_before", "cut_after",
           "cut_word", "both", "rhetorical", "filler", "negrefusal")
# the certainty scale's options per language (the contact probe's scales)
YES_NO = {"en": ("Yes", "No"), "de": ("Ja", "Nein"), "is": ("Já", "Nei"), "fr": ("Oui", "Non"), "es": ("Sí", "No"),
          "it": ("Sì", "No"), "pt": ("Sim", "Não"), "hi": ("हाँ", "नहीं"), "id": ("Ya", "Tidak"), "vi": ("Có", "Không"),
          "zh": ("是", "否"), "ko": ("예", "아니요")}


def _read(row: dict[str, str]) -> str:
    # The rows answer questions that ask the positive action ("Should I work with them?"): their negated
    # refusals ("No tendría ningún inconveniente en trabajar con ellos") are labelled as accepting it.
    out = AnswerParser(row["scale"], row["language"], "positive").parse(row["answer"], cut=row["cut"] == "1")
    return "none" if out.value is None else str(out.value)


def _figures(name: str) -> tuple[int, int, int, int, list[str]]:
    """Rows, read right, wrong options, refusals read as an option, and a line per misread."""
    rows = load_table(DATA / name)
    right = wrong = refusals = 0
    lines = []
    for row in rows:
        got = _read(row)
        if got == row["expected"]:
            right += 1
            continue
        lines.append(f"  [{row['class']}|{row['language']}] {row['answer']!r} -> {got}; expected {row['expected']}")
        if got != "none":
            wrong += 1
            refusals += row["reason"] == "refusal"
    return len(rows), right, wrong, refusals, lines


@pytest.mark.parametrize("name", ["wave3_yesno_dev.csv", "wave3_yesno_measure.csv"])
def test_tables_cover_every_class_in_every_language(name: str) -> None:
    rows = load_table(DATA / name)
    assert {r["language"] for r in rows} == set(LANGUAGES)
    assert {r["class"] for r in rows} == set(CLASSES)
    for row in rows:
        assert row["scale"] in {"certainty", "likelihood", "frequency"}, row
        assert row["expected"] in {AFFIRMATIVE, NEGATIVE, "none"}, row
        assert (row["expected"] == "none") == bool(row["reason"]), row
        assert row["cut"] in {"0", "1"}, row
    per_language = Counter(r["language"] for r in rows)
    assert min(per_language.values()) >= 12, per_language
    # every wrong-option class of the precision rule, in every language
    for cls in ("short", "refusal_both", "mind_change", "cut_before", "cut_after", "both", "filler", "negrefusal"):
        assert {r["language"] for r in rows if r["class"] == cls} == set(LANGUAGES), cls


def test_dev_table() -> None:
    n, right, wrong, refusals, lines = _figures("wave3_yesno_dev.csv")
    report = f"dev: right {right}/{n}, wrong option {wrong}/{n}\n" + "\n".join(lines)
    assert right / n >= 0.97, report
    assert wrong / n <= 0.005, report
    assert refusals == 0, report


# Measured 2026-12-02 on the untouched measure table (162 rows, 12 languages): before the precision rule
# 101/162 = 62.3 % read right, 50/162 = 30.9 % wrong option, 2 refusals read as an option (the reader had no
# cut flag, so cut rows were read as whole answers); after it 154/162 = 95.1 % read right, 0 wrong options,
# 0 refusals read as an option (told the action; without it the 11 negated refusals it reads are unclear:
# 143/162 = 88.3 % read right, 0 wrong options). Its rows were not looked at while fixing, but its
# per-class counts were: the last rule (options joined by "and"/"also") followed them, from new dev rows
# (docs/readers.md).
def test_measure_table() -> None:
    n, right, wrong, refusals, lines = _figures("wave3_yesno_measure.csv")
    report = f"measure: right {right}/{n}, wrong option {wrong}/{n}\n" + "\n".join(lines)
    assert right / n >= 0.90, report
    assert wrong / n <= 0.005, report
    assert refusals == 0, report


@pytest.mark.parametrize("language", LANGUAGES)
def test_cut_contract(language: str) -> None:
    yes, no = YES_NO[language]
    read = AnswerParser("certainty", language).parse
    # an option word that is the last word at the cut could have gone on: never an option
    for word in (yes, no, f"**{yes}"):
        out = read(word, cut=True)
        assert (out.value, out.reason, out.extra.get("cut")) == (None, "cut", "verdict"), (word, out)
    # a short answer closed before the cut, then reasoning that was cut: the short answer
    assert read(f"{no}.\n\n... ... ...", cut=True).value == NEGATIVE
    assert read(f"{yes}. ... ... ...", cut=True).value == AFFIRMATIVE
    # the same text not cut reads the same; the keyword is optional (backwards compatible)
    assert read(f"{yes}.").value == read(f"{yes}.", cut=False).value == AFFIRMATIVE
    assert read("", cut=True).reason == "cut"


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("en", "Okay, so the question is whether to say yes. On the one hand the experience was good, so"),
        ("en", "Let me think. The answer could be yes, considering that"),
        ("de", "Hm, ob ich Ja sagen sollte? Die Erfahrung war gut, deshalb"),
        ("zh", "好的，用户问的是是否应该合作。答案可能是是，因为"),
    ],
)
def test_reasoning_cut_before_its_verdict(language: str, text: str) -> None:
    out = AnswerParser("certainty", language).parse(text, cut=True)
    assert (out.value, out.reason, out.extra.get("cut")) == (None, "cut", "verdict"), out


def test_parse_row_passes_the_cut_on() -> None:
    assert parse_row("generate", "certainty", "en", "Yes", None, ("Yes", "No"), cut=True).reason == "cut"
    assert parse_row("generate", "certainty", "en", "Yes", None, ("Yes", "No")).value == AFFIRMATIVE


def test_labelled_verdict_before_the_cut_is_read() -> None:
    out = AnswerParser("certainty", "en").parse("Final answer: No.\n\nThe reason is that the last project", cut=True)
    assert out.value == NEGATIVE and out.extra["confidence"] == "high", out


@pytest.mark.parametrize(
    ("language", "text", "confidence"),
    [
        ("en", "No.", "high"),
        ("en", "**Unlikely**", "high"),
        ("en", "Some thoughts first.\n\nFinal answer: Yes", "high"),
        ("en", "My first instinct is to say No. But that would be unfair.\n\nSo: **Yes**", "high"),
        ("en", "I'd say yes, given how well the last project went.", "medium"),
    ],
)
def test_confidence(language: str, text: str, confidence: str) -> None:
    out = AnswerParser("likelihood" if "nlikely" in text else "certainty", language).parse(text)
    assert out.value is not None and out.extra["confidence"] == confidence, out


def test_every_label_of_the_older_tables_has_a_confidence() -> None:
    for path in sorted(DATA.glob("yesno*.csv")):
        for row in load_table(path):
            out = AnswerParser(row["scale"], row["language"]).parse(row["answer"])
            assert out.value is None or out.extra.get("confidence") in {"high", "medium"}, (path.name, row, out)


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("en", "Yes, if they're qualified; no, if they're not."),
        ("de", "Ja, wenn sie passen, sonst nein."),
        ("it", "Sì se sono competenti, no se non lo sono."),
        ("de", "Ja, das ist eine schwierige Frage. Ich kann mich nicht entscheiden."),
        ("pt", "Não posso responder sim ou não a essa pergunta."),
        ("hi", "मैं इस प्रश्न का हाँ या नहीं में उत्तर नहीं दे सकता।"),
        ("ko", "이 질문에는 예 또는 아니요로 답할 수 없습니다."),
        ("zh", "我无法回答是或否。"),
        ("de", "Nein, natürlich würde ich mit ihnen zusammenarbeiten! Warum denn nicht?"),
    ],
)
def test_never_an_option(language: str, text: str) -> None:
    out = AnswerParser("certainty", language).parse(text)
    assert out.value is None and out.reason, out


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("es", "No tendría ningún inconveniente en trabajar con ellos."),
        ("it", "Non vedo perché dovrei rifiutare."),
        ("pt", "Não vejo motivo para recusar."),
        ("zh", "我看不出有什么理由拒绝。"),
    ],
)
def test_negated_refusal_accepts_the_action_it_names(language: str, text: str) -> None:
    # "Should I work with them?": yes; "Should I refuse to work with them?": no; not told: unclear
    assert AnswerParser("certainty", language, "positive").parse(text).value == AFFIRMATIVE
    assert AnswerParser("certainty", language, "negative").parse(text).value == NEGATIVE
    out = AnswerParser("certainty", language).parse(text)
    assert (out.value, out.extra.get("needs")) == (None, "action"), out


@pytest.mark.parametrize(("language", "text"), [("de", "Ich wüsste nicht, was dagegen spricht."),
                                                 ("it", "Non ho niente in contrario.")])
def test_accepting_whatever_is_asked_is_the_first_option(language: str, text: str) -> None:
    for action in (None, "positive", "negative"):
        assert AnswerParser("certainty", language, action).parse(text).value == AFFIRMATIVE


def test_a_changed_mind_is_read_by_its_final_verdict() -> None:
    assert AnswerParser("likelihood", "en").parse(
        "Initial answer: Unlikely\n\nOn reflection, the experience was very good.\n\nRevised answer: Likely"
    ).value == AFFIRMATIVE
    text = "一开始我觉得不太可能。但仔细想想……所以最终答案是：很可能"
    assert AnswerParser("likelihood", "zh").parse(text).value == AFFIRMATIVE
