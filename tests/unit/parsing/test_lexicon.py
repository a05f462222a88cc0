"""The reader's word lists: loading, per-language merging, longest-first matching, refusals."""

from __future__ import annotations

import pytest

from biasatlas.parsing.lexicon import AFFIRMATIVE, HEDGE, NEGATIVE, lexicon, refusal_patterns, scales


def test_scales() -> None:
    assert scales() == ("certainty", "likelihood", "frequency")


def test_unknown_scale_lists_valid_ones() -> None:
    with pytest.raises(ValueError, match="certainty"):
        lexicon("politeness", "en")


def test_english_is_always_included() -> None:
    lex = lexicon("certainty", "is")
    assert lex.phrases[("já",)].meaning == AFFIRMATIVE
    assert lex.phrases[("yes",)].meaning == AFFIRMATIVE
    assert ("ja",) not in lexicon("certainty", "en").phrases


def test_longest_match_first() -> None:
    lex = lexicon("certainty", "en")
    hits = lex.match(["not", "at", "all"])
    assert [(h.text, h.phrase.meaning) for h in hits] == [("not at all", NEGATIVE)]
    hits = lex.match(["not", "sure"])  # a hedge, not a negated "sure"
    assert [(h.text, h.phrase.meaning) for h in hits] == [("not sure", HEDGE)]


def test_edge_only_words_are_marked() -> None:
    lex = lexicon("certainty", "en")
    assert lex.phrases[("no",)].edge_only and not lex.phrases[("nope",)].edge_only


@pytest.mark.parametrize(
    ("language", "text"),
    [("en", "i can't answer that"), ("en", "i'm unable to say"), ("de", "das kann ich nicht beurteilen"),
     ("is", "ég get því miður ekki svarað þessu"), ("de", "as an ai, i have no opinion")],
)
def test_refusals(language: str, text: str) -> None:
    assert lexicon("certainty", language).is_refusal(text)
    assert any(p.search(text) for p in refusal_patterns(language))
