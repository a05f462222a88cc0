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


def test_word_list_files_merge_in_both_shapes() -> None:
    """Issue 27: further word-list files (idioms, new languages) merge into lexicon.yaml, in its shape or
    written flat for one language; a malformed value cannot replace a list."""
    from biasatlas.parsing.lexicon import merge, per_language

    base = {"negators": {"en": ["not"]}, "scales": {"certainty": {"en": {"affirmative": ["yes"]}}}}
    merge(base, {"negators": {"fr": ["pas"]}, "scales": {"certainty": {"en": {"affirmative": ["yep"]}}}})
    flat = {"language": "fr", "provenance": "test", "negators": ["ne"],
            "scales": {"certainty": {"affirmative": ["oui"], "negative": ["non"]}}}
    merge(base, per_language(flat))
    merge(base, {"negators": "broken"})
    assert base["negators"] == {"en": ["not"], "fr": ["pas", "ne"]}
    assert base["scales"]["certainty"] == {"en": {"affirmative": ["yes", "yep"]},
                                           "fr": {"affirmative": ["oui"], "negative": ["non"]}}


def test_idiom_files_are_loaded_with_provenance() -> None:
    from biasatlas.parsing.lexicon import _data

    assert ("count", "me", "in") in lexicon("certainty", "en").phrases
    assert ("gerne", "doch") in lexicon("certainty", "de").phrases
    assert ("litlar", "líkur") in lexicon("likelihood", "is").phrases
    assert "provenance" in _data()


def test_off_question_needs_the_languages_self_words() -> None:
    """Telling "about others" needs the language's self words; without them the rule stays off."""
    lex = lexicon("frequency", "fr")
    assert not lex.knows_self and lexicon("frequency", "is").knows_self
