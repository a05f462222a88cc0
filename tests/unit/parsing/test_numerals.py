"""Numbers and rating phrasings of the nine new languages, as data (``biasatlas.parsing.numerals``)."""

from __future__ import annotations

import pytest

from biasatlas.parsing.numbers import parse_rating
from biasatlas.parsing.numerals import ascii_digits, native_numbers, rewrite


def test_every_decimal_digit_becomes_ascii() -> None:
    assert ascii_digits("७५ and ７５ and ٧٥") == "75 and 75 and 75"
    assert ascii_digits("plain 75") == "plain 75"


@pytest.mark.parametrize(
    ("language", "text", "number"),
    [
        ("zh", "七十五", "75"), ("zh", "九十", "90"), ("zh", "一百", "100"), ("zh", "十五", "15"),
        ("zh", "两百", "200"),
        ("zh", "七成", "70%"), ("zh", "七成五", "75%"),
        ("ko", "칠십오", "75"), ("ko", "일흔다섯", "75"), ("ko", "팔십", "80"), ("ko", "백", None),
        ("vi", "bảy mươi lăm", "75"), ("vi", "Chín mươi mốt", "91"), ("vi", "mười lăm", "15"),
        ("vi", "một trăm", "100"),
        ("id", "tujuh puluh lima", "75"), ("id", "dua belas", "12"), ("id", "seratus", "100"), ("id", "sebelas", "11"),
        ("hi", "पचहत्तर", "75"), ("hi", "अस्सी", "80"), ("hi", "एक सौ", "100"), ("hi", "निन्यानवे", "99"),
    ],
)
def test_number_words(language: str, text: str, number: str | None) -> None:
    assert native_numbers(text, language).strip() == (number or text)


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("zh", "一些人"),  # "some": a lone unit is a word
        ("zh", "十分可能"),  # "very likely": 十分 is not ten
        ("vi", "năm 2024"),  # "year", and a lone five
        ("vi", "mười năm"),  # ten years, not fifteen (after a tens word five is "lăm")
        ("ko", "열심히 일한다"),  # "hard-working" starts with 열 (ten): inside a word
        ("ko", "사이"),  # "between": units alone make no number
        ("id", "satu orang"),
        ("hi", "एक आदमी"),
    ],
)
def test_words_that_are_not_numbers_stay(language: str, text: str) -> None:
    assert native_numbers(text, language) == text


@pytest.mark.parametrize(
    ("language", "text", "english"),
    [
        ("fr", "70 sur 100", "70 out of 100"),
        ("fr", "entre 60 et 70", "between 60 and 70"),
        ("es", "75 por ciento", "75 percent"),
        ("it", "tra il 70 e l'80 %", "between 70 and 80 %"),
        ("pt", "7 de 10", "7 out of 10"),
        ("hi", "100 में से 70", "70 out of 100"),
        ("id", "70 dari 100", "70 out of 100"),
        ("vi", "70 trên 100", "70 out of 100"),
        ("zh", "100分中的70分", "70 out of 100 分"),
        ("ko", "100점 만점에 70점", "70 out of 100 점"),
    ],
)
def test_phrasings_become_the_readers_english_forms(language: str, text: str, english: str) -> None:
    from biasatlas.parsing.numbers import _normalise

    assert " ".join(rewrite(_normalise(text), language).split()) == english


@pytest.mark.parametrize(
    ("language", "text", "value", "reason"),
    [
        ("zh", "一位80岁的老人摔倒了。我估计大约75。", 75, None),  # the age is a quantity
        ("fr", "Une dame de 80 ans est tombée ; je dirais 85.", 85, None),
        ("vi", "Một cụ bà 80 tuổi bị ngã. Tôi đánh giá khoảng 70.", 70, None),
        ("hi", "70 से 80 प्रतिशत।", None, "range"),
        ("ko", "60~70 정도.", None, "range"),
        ("es", "Entre el 70 y el 80 %. Diría 75.", 75, None),
        ("id", "Tujuh dari sepuluh.", None, "other scale"),
        ("en", "I'd say 70 sur 100.", 70, None),  # English keeps its reading; "sur" is French only
    ],
)
def test_ratings_in_context(language: str, text: str, value: float | None, reason: str | None) -> None:
    outcome = parse_rating(text, language)
    assert (outcome.value, outcome.reason) == (value, reason)


@pytest.mark.parametrize(
    ("language", "text", "number"),
    [("id", "tujuh dari sepuluh", "7 dari 10"), ("hi", "दस में से सात", "10 में से 7"), ("vi", "bảy trên mười", "7 trên 10"),
     ("zh", "10分中的七分", "10分中的 7 分"), ("id", "satu orang dari sepuluh", "satu orang dari 10")],
)
def test_a_small_number_word_beside_a_ratio_word_and_a_number(language: str, text: str, number: str) -> None:
    assert " ".join(native_numbers(text, language).split()) == number


@pytest.mark.parametrize(("text", "number"), [("bảy lăm", "75"), ("hai mốt", "21"), ("ba tư", "34"),
                                              ("chín mươi lăm", "95")])
def test_spoken_vietnamese_short_forms(text: str, number: str) -> None:
    assert native_numbers(text, "vi").strip() == number


@pytest.mark.parametrize(
    ("language", "text", "value", "reason"),
    [
        ("fr", "Je dirais 60 pour un homme et 70 pour une femme.", None, "several ratings"),
        ("hi", "पुरुष हो तो 60, महिला हो तो 70।", None, "several ratings"),
        ("en", "I'd say 60 for a man and 70 for a woman.", None, "several ratings"),
        ("en", "I'd say 70 for this man.", 70, None),
        ("es", "Según un estudio de 2018, alrededor de 60.", 60, None),  # a year is never a rating
        ("pt", "Pesando: 1) a pressa, 2) o peso, 3) a gentileza, fico com 70.", 70, None),  # inline list numbers
        ("id", "Ada uang 500 ribu rupiah di dompet itu, tapi saya kira 60.", 60, None),  # money
        ("ko", "20만 원", None, "no number"),
        ("pt", "Uns 60 e poucos... vamos de 62.", 62, None),  # an approximate decade, then the value
        ("id", "Kayaknya 60-an deh, oke 62.", 62, None),
    ],
)
def test_independent_rating_classes(language: str, text: str, value: float | None, reason: str | None) -> None:
    outcome = parse_rating(text, language)
    assert (outcome.value, outcome.reason) == (value, reason)


@pytest.mark.parametrize(
    ("language", "text"),
    [("zh", "大概七八十吧。"), ("ko", "칠팔십 정도."), ("vi", "Khoảng bảy tám mươi."), ("hi", "सत्तर-अस्सी।")],
)
def test_spoken_ranges_of_two_tens_are_ranges(language: str, text: str) -> None:
    outcome = parse_rating(text, language)
    assert outcome.reason == "range" and outcome.extra["range"] == [70.0, 80.0]
