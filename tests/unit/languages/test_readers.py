"""Readers in the nine MMHB languages: word lists load, options read back, labelled-table accuracy.

The floor is the issue's 97% on every dev and held-back table (issue 29, point 4; reached 2026-11-27
after the classes in docs/readers.md were added: every table reads 100%). The held-back tables' misreads
had been seen before that work, so their 100% is no longer independent: the independent figures are in
test_independent_readers.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from biasatlas.languages import packs_root
from biasatlas.languages.readers import load_table, rating_misread, yesno_misread
from biasatlas.parsing.answers import AnswerParser
from biasatlas.parsing.lexicon import TOKEN
from biasatlas.parsing.text import normalise
from biasatlas.probes.contact.data import template_sets

NEW = ("fr", "es", "it", "pt", "hi", "id", "vi", "zh", "ko")
YESNO_FLOOR = {"dev": 0.97, "heldout": 0.97}
RATING_FLOOR = {"dev": 0.97, "heldout": 0.97}


def _table(code: str, name: str) -> list[dict[str, str]]:
    return load_table(packs_root() / code / "readers" / name)


@pytest.mark.parametrize("code", NEW)
def test_every_option_reads_as_itself(code: str) -> None:
    tset = template_sets(code)["a"]
    for scale, spec in tset.scales.items():
        first, second = spec["options"]
        for text, meaning in ((first, "affirmative"), (second, "negative"), (f"{first}.", "affirmative"),
                              (f"{second}.", "negative")):
            assert AnswerParser(scale, code).parse(text).value == meaning, (scale, text)


@pytest.mark.parametrize("code", NEW)
def test_tables_are_large_enough(code: str) -> None:
    yesno = _table(code, "yesno.csv") + _table(code, "yesno_heldout.csv")
    ratings = _table(code, "ratings.csv") + _table(code, "ratings_heldout.csv")
    assert len(yesno) >= 80 and len(ratings) >= 40
    for scale in ("certainty", "likelihood", "frequency"):
        assert sum(r["scale"] == scale for r in yesno) >= 25
    assert {r["language"] for r in yesno + ratings} == {code}


@pytest.mark.parametrize("code", NEW)
@pytest.mark.parametrize("split", ["dev", "heldout"])
def test_accuracy_floors(code: str, split: str) -> None:
    suffix = "" if split == "dev" else "_heldout"
    yesno = _table(code, f"yesno{suffix}.csv")
    wrong = yesno_misread(yesno)
    assert 1 - len(wrong) / len(yesno) >= YESNO_FLOOR[split], "\n".join(wrong)
    ratings = _table(code, f"ratings{suffix}.csv")
    wrong = rating_misread(ratings)
    assert 1 - len(wrong) / len(ratings) >= RATING_FLOOR[split], "\n".join(wrong)


def test_tokens_of_han_and_devanagari_text() -> None:
    # Chinese has no spaces: each Han character is a token; a Devanagari vowel sign stays in its word
    assert TOKEN.findall("这很可能") == ["这", "很", "可", "能"]
    assert TOKEN.findall("संभावित नहीं") == ["संभावित", "नहीं"]
    assert TOKEN.findall("don't know 50") == ["don't", "know", "50"]


def test_wide_punctuation_and_digits_against_han_or_hangul() -> None:
    assert normalise("不，排斥他们。我会说80。") == "不, 排斥他们. 我会说 80."
    assert normalise("80이라고") == "80 이라고"
    assert normalise("हाँ। ठीक").split() == ["हाँ.", "ठीक"]


def test_a_word_file_cannot_change_english() -> None:
    # the packs' files add languages; the English reading of a plain answer is unchanged
    assert AnswerParser("certainty", "en").parse("No.").value == "negative"
    assert AnswerParser("likelihood", "fr").parse("Unlikely.").value == "negative"  # English is always read
    assert Path(packs_root() / "fr" / "readers" / "yesno.csv").exists()
