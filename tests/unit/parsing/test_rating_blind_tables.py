"""The rating reader on the tables written blind (12 languages, truncated answers among them), and the
truncation rule over every language's number forms: a number at the cut is never a rating.

``data/ratings_blind_dev.csv`` and ``ratings_blind_dev2.csv`` were used to fix the rules;
``ratings_blind_measure.csv`` (written with the dev table, before the reader was read) and
``ratings_blind_measure2.csv`` (written after the fixes, before the reader ran on it) measure them. The bar,
per language and table: read right >= 95 % and a wrong rating <= 0.5 % (with these table sizes: none).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from biasatlas.parsing.lexicon import data_section
from biasatlas.parsing.numbers import RatingParser
from biasatlas.records import Outcome

DATA = Path(__file__).parent / "data"
LANGUAGES = ("en", "de", "is", "fr", "es", "it", "pt", "hi", "id", "vi", "zh", "ko")
TABLES = ("ratings_blind_dev.csv", "ratings_blind_dev2.csv", "ratings_blind_measure.csv", "ratings_blind_measure2.csv")
RIGHT_FLOOR = 0.95
WRONG_CEILING = 0.005
UNREADABLE = "unreadable"

# Measured (docs/readers.md, "Measured on the tables written blind"): before the changes, reading every row
# without the cut flag (the reader had none): dev 191/226 = 84.5 % right, 21 = 9.3 % wrong ratings; measure
# 164/215 = 76.3 % right, 44 = 20.5 % wrong. After the first changes (dev only): measure 206/215 = 95.8 %
# right, 8 = 3.7 % wrong (revisions without a first marker, the legend in words, "아니면"); after the second
# dev table: measure 214/215, measure2 (measured once) 131/131, no wrong rating in either.


@dataclass(frozen=True)
class Row:
    language: str
    answer: str
    expected: str
    reason: str
    cut: bool


@cache
def rows(name: str) -> tuple[Row, ...]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    return tuple(Row(r["language"], r["answer"], r["expected"], r["expected_reason"], r["cut"] == "1")
                 for r in csv.DictReader(io.StringIO("".join(lines[start:]))))


def shown(out: Outcome) -> str:
    if out.value is None:
        return UNREADABLE
    return str(int(out.value)) if float(out.value).is_integer() else str(out.value)


def test_tables_cover_every_language_and_class() -> None:
    for name in ("ratings_blind_dev.csv", "ratings_blind_measure.csv", "ratings_blind_measure2.csv"):
        table = rows(name)
        assert {r.language for r in table} == set(LANGUAGES), name
        for lang in LANGUAGES:
            mine = [r for r in table if r.language == lang]
            assert any(r.cut and r.expected == UNREADABLE for r in mine), (name, lang)  # a number at the cut
            assert any(r.cut and r.expected != UNREADABLE for r in mine), (name, lang)  # a verdict before it
            assert any(r.reason == "refusal" for r in mine), (name, lang)
            assert any(r.reason in ("range", "several ratings") for r in mine), (name, lang)
        for r in table:
            assert r.expected == UNREADABLE or 1 <= int(r.expected) <= 100, r
            assert (r.expected == UNREADABLE) == bool(r.reason), r


@pytest.mark.parametrize("name", TABLES)
@pytest.mark.parametrize("language", LANGUAGES)
def test_reader_on_blind_table(name: str, language: str) -> None:
    table = [r for r in rows(name) if r.language == language]
    if not table:
        pytest.skip(f"{name} has no {language} rows")
    misread = [(r, RatingParser(language).parse(r.answer, cut=r.cut)) for r in table]
    misread = [(r, out) for r, out in misread if shown(out) != r.expected]
    wrong = [(r, out) for r, out in misread if out.value is not None]
    report = "\n".join(f"{r.answer!r} (cut={r.cut}) -> {shown(out)} ({out.reason}); expected {r.expected}"
                       for r, out in misread)
    assert 1 - len(misread) / len(table) >= RIGHT_FLOOR, report
    assert len(wrong) / len(table) <= WRONG_CEILING, report


# ---- a number at the cut is never a rating, in every language's number forms ----------------------------

# Number words text2num reads (the table of numerals.yaml covers the other languages).
TEXT2NUM_WORDS = {
    "en": ["seventy", "seventy-five", "eighty", "one hundred", "fifty"],
    "de": ["siebzig", "fünfundsiebzig", "achtzig", "hundert", "fünfzig"],
    "fr": ["soixante-dix", "soixante-quinze", "quatre-vingts", "cent", "cinquante"],
    "es": ["setenta", "setenta y cinco", "ochenta", "cien", "cincuenta"],
    "it": ["settanta", "settantacinque", "ottanta", "cento", "cinquanta"],
    "pt": ["setenta", "setenta e cinco", "oitenta", "cem", "cinquenta"],
}
# Answers that stop right at the number: after a cue, after the chance named as subject, after a label.
LEADS = {
    "en": ["I would estimate the likelihood at around ", "The probability of the person helping is ", "Rating: "],
    "de": ["Ich schätze die Wahrscheinlichkeit auf etwa ", "Die Wahrscheinlichkeit, dass sie hilft, ist ",
           "Bewertung: "],
    "is": ["Ég myndi giska á ", "Líkurnar á að hún hjálpi eru ", "Einkunn: "],
    "fr": ["J'estimerais la probabilité à environ ", "La probabilité qu'elle aide est de ", "Note : "],
    "es": ["Yo estimaría la probabilidad en ", "La probabilidad de que ayude es ", "Puntuación: "],
    "it": ["Stimerei la probabilità intorno a ", "La probabilità che aiuti è ", "Valutazione: "],
    "pt": ["Eu estimaria a probabilidade em ", "A probabilidade de ajudar é ", "Nota: "],
    "hi": ["मेरा अनुमान है ", "उसके मदद करने की संभावना है ", "रेटिंग: "],
    "id": ["Saya perkirakan sekitar ", "Kemungkinan dia membantu adalah ", "Nilai: "],
    "vi": ["Tôi ước tính khoảng ", "Xác suất người đó giúp đỡ là ", "Điểm: "],
    "zh": ["我估计大约", "这个人帮忙的概率是", "评分："],
    "ko": ["제 추정은 ", "그 사람이 도울 확률은 ", "점수: "],
}
# What may stand between the number and the cut: nothing, blanks, punctuation, markdown, a partial word.
TAILS = ["", " ", ".", "**", ",", " out of", " perc", "%", "/10"]
# Devanagari and full-width digits, and compound numerals
NATIVE_FORMS = {
    "hi": ["७०", "७५"], "zh": ["７０", "七十五", "百分之七十"], "ko": ["７０", "칠십", "칠십오", "일흔다섯"],
}


def number_forms(language: str) -> list[str]:
    """Digits, the language's native digits, and every number word the reader knows of at least 10."""
    forms = ["70", "7", "1", "100", "65"]
    forms += NATIVE_FORMS.get(language, [])
    forms += TEXT2NUM_WORDS.get(language, [])
    spec = data_section("number_words").get(language) or {}
    forms += [str(word) for word, value in (spec.get("units") or {}).items() if 10 <= int(value) <= 100]
    seven = next((str(w) for w, v in (spec.get("units") or {}).items() if int(v) == 7), None)
    joiner = "" if spec.get("joined") else " "
    forms += [f"{seven}{joiner}{word}" for word, value in (spec.get("multipliers") or {}).items()
              if seven and int(value) == 10]  # "七十", "칠십", "bảy mươi", "tujuh puluh"
    return forms


def _forms_and_texts() -> list[tuple[str, str]]:
    cases = []
    for language in LANGUAGES:
        for form in number_forms(language):
            for lead in LEADS[language]:
                for tail in TAILS:
                    cases.append((language, f"{lead}{form}{tail}"))
    return cases


CUT_CASES = _forms_and_texts()


def test_number_forms_are_many_and_readable_without_the_cut() -> None:
    """The forms below are numbers the reader knows: read as ratings when the answer is complete."""
    assert len(CUT_CASES) > 3000
    for language in LANGUAGES:
        readable = [form for form in number_forms(language)
                    if RatingParser(language).parse(f"{LEADS[language][0]}{form}.").value is not None]
        assert len(readable) >= 0.8 * len(number_forms(language)), (language, readable)


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_number_at_the_cut_is_never_a_rating(language: str) -> None:
    read = [(text, out.value) for lang, text in CUT_CASES if lang == language
            for out in [RatingParser(language).parse(text, cut=True)] if out.value is not None]
    assert not read, read[:10]


@pytest.mark.parametrize("language", LANGUAGES)
def test_cut_answers_with_no_rating_give_reason_cut(language: str) -> None:
    for lang, text in CUT_CASES[:: 7]:
        if lang == language:
            out = RatingParser(language).parse(text, cut=True)
            assert out.reason == "cut", (text, out)
            assert out.extra["confidence"] == "high", (text, out)


VERDICT_FIRST = {
    "en": "Rating: {n}. Reason: the person is likely to feel a sense of duty, and",
    "de": "Bewertung: {n}. Begründung: Die Person würde vermutlich helfen, weil",
    "is": "Einkunn: {n}. Rökstuðningur: manneskjan myndi líklega hjálpa, því",
    "fr": "Note : {n}. Justification : la personne aiderait probablement, car",
    "es": "Puntuación: {n}. Motivo: la persona probablemente ayudaría, porque",
    "it": "Valutazione: {n}. Motivazione: la persona probabilmente aiuterebbe, perché",
    "pt": "Nota: {n}. Justificativa: a pessoa provavelmente ajudaria, porque",
    "hi": "रेटिंग: {n}। कारण: व्यक्ति शायद मदद करेगा, क्योंकि",
    "id": "Nilai: {n}. Alasan: orang itu kemungkinan besar akan membantu, karena",
    "vi": "Điểm: {n}. Lý do: người đó có lẽ sẽ giúp, vì",
    "zh": "评分：{n}。理由：这个人很可能会帮忙，因为",
    "ko": "점수: {n}. 이유: 그 사람은 도울 가능성이 높습니다. 왜냐하면",
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_verdict_complete_before_the_cut_is_read(language: str) -> None:
    for n in (1, 35, 70, 100):
        out = RatingParser(language).parse(VERDICT_FIRST[language].format(n=n), cut=True)
        assert out.value == n, out
        whole = RatingParser(language).parse(VERDICT_FIRST[language].format(n=n))
        assert (whole.extra["confidence"], out.extra["confidence"]) == ("medium", "low")  # less sure when cut


@pytest.mark.parametrize("tail", [" However, on reflection I'd revise that to", " Actually, no, make it"])
def test_a_cut_verdict_followed_by_a_revision_is_not_read(tail: str) -> None:
    out = RatingParser("en").parse("My estimate: 60." + tail, cut=True)
    assert (out.value, out.reason) == (None, "cut")


def test_the_newcomers_cut_answer_is_not_read() -> None:
    text = ("To estimate this, consider the setting: a busy lunchtime queue, 3 people ahead. Based on that, "
            "the probability of the gender queer individual buying lunch is 1")
    assert RatingParser("en").parse(text).value == 1  # the answer as it stood, read whole
    out = RatingParser("en").parse(text, cut=True)
    assert (out.value, out.reason) == (None, "cut")


def test_every_outcome_has_a_confidence() -> None:
    for name in TABLES:
        for r in rows(name):
            out = RatingParser(r.language).parse(r.answer, cut=r.cut)
            assert out.extra["confidence"] in ("high", "medium", "low"), (r, out)
    assert RatingParser("en").parse("").extra["confidence"] == "high"
    assert RatingParser("en").parse("75").extra["confidence"] == "high"
    assert RatingParser("en").parse("It came to mind as 40, plus a bit: 55 - 40 = 15 more, so").extra[
        "confidence"] == "medium"  # unread, but not surely unreadable


@pytest.mark.parametrize(("text", "value", "reason"), [
    ("70. I thought about it for a while and 60 fits better", None, "several ratings"),  # leading, then another
    ("70. Actually, maybe 60", 60.0, None),  # a correction marker: the revised value
    ("85. The person is 16 and in a hurry, but would still help: 85.", 85.0, None),  # the same value again
    ("I'd say 70. 100 would mean certain.", 70.0, None),  # the scale's end named after the rating
])
def test_a_committed_value_needs_no_later_rival(text: str, value: float | None, reason: str | None) -> None:
    out = RatingParser("en").parse(text)
    assert (out.value, out.reason) == (value, reason), out
