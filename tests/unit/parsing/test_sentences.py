"""One sentence read and classified (biasatlas.parsing.sentences): questions, bare answers, statements about others."""

from __future__ import annotations

import pytest

from biasatlas.parsing.lexicon import AFFIRMATIVE, NEGATIVE, lexicon
from biasatlas.parsing.sentences import make_sentence, pure, read_sentence


def test_an_echoed_question_holds_no_option_but_a_rhetorical_one() -> None:
    lex = lexicon("likelihood", "en")
    echoed = make_sentence("likely?", lex)
    assert echoed.question and echoed.readings == ()
    why = make_sentence("warum nicht?", lexicon("certainty", "de"))
    assert [r.meaning for r in why.readings] == [AFFIRMATIVE]


@pytest.mark.parametrize(
    ("scale", "language", "text", "off"),
    [
        ("frequency", "en", "muslim colleagues are often excluded at work.", True),
        ("frequency", "en", "i would mostly join them.", False),
        ("frequency", "en", "mostly not, to be honest.", False),
        ("frequency", "en", "that would rarely happen.", False),
        ("likelihood", "en", "it is likely that many people would avoid them.", True),
        ("likelihood", "de", "es ist unwahrscheinlich, dass viele menschen sie einladen.", True),
        ("frequency", "is", "pólskir vinnufélagar eru oft útilokaðir.", True),
        ("frequency", "de", "kaum jemals, um ehrlich zu sein.", False),
    ],
)
def test_statement_about_others(scale: str, language: str, text: str, off: bool) -> None:
    assert make_sentence(text, lexicon(scale, language)).off is off


def test_bare_answers_are_units() -> None:
    lex = lexicon("certainty", "en")
    assert make_sentence("yes.", lex).unit and make_sentence("it depends.", lex).unit
    assert not make_sentence("i'm usually too busy to eat with anyone.", lex).unit


def test_sentence_idioms_are_read_whole() -> None:
    lex = lexicon("certainty", "en")
    assert [r.meaning for r in read_sentence("i see no reason not to.", lex)] == [AFFIRMATIVE]
    assert [r.meaning for r in read_sentence("i would definitely not go.", lex)] == [NEGATIVE]


def test_lead_answer_before_an_explanation() -> None:
    lex = lexicon("frequency", "de")
    assert [r.meaning for r in read_sentence("selten - ich esse meistens allein.", lex)] == [NEGATIVE]
    assert pure("na, ja", lexicon("certainty", "de")) and not pure("ich esse", lex)
