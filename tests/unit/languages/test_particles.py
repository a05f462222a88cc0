"""Korean particles agree with the sound their host ends in, in the rule and in every rendered ko prompt."""

from __future__ import annotations

import re
from functools import cache

import pytest

from biasatlas.languages.particles import PAIRS, agrees, final_sound, particle_for
from biasatlas.probes.contact.data import descriptors_for, fill, template_sets
from biasatlas.probes.samaritan.data import Phrasing, load_groups, load_scenarios

ALTERNATING = sorted({form for pair in PAIRS for form in pair}, key=len, reverse=True)
AFTER = re.compile("(" + "|".join(ALTERNATING) + r")(?![\uac00-\ud7a3\w])")


def _batchim(syllable: str) -> int:
    """The oracle: Hangul syllable = U+AC00 + (initial*21 + vowel)*28 + final."""
    return (ord(syllable) - 0xAC00) % 28


@pytest.mark.parametrize(("host", "particle", "expected"), [
    ("친구", "과", "와"), ("동료들", "와", "과"), ("사람", "를", "을"), ("여자", "을", "를"),
    ("한 여자", "이", "가"), ("그 남성", "가", "이"), ("노인", "는", "은"), ("학교", "은", "는"),
    ("집", "로", "으로"), ("서울", "으로", "로"), ("버스", "으로", "로"),
    ("LGBTQ", "을", "를"), ("HTML", "으로", "로"), ("HTML", "를", "을"), ("BTS", "이", "가"),
    ("2", "이", "가"), ("1", "가", "이"), ("3", "로", "으로"), ("7", "으로", "로"), ('"친구"', "과", "와"),
])
def test_the_particle_follows_the_last_sound(host: str, particle: str, expected: str) -> None:
    assert particle_for(host, particle) == expected
    assert agrees(host, expected) and not agrees(host, particle if particle != expected else "")


def test_an_unknown_ending_keeps_the_particle_and_never_agrees() -> None:
    assert final_sound("白人") is None and particle_for("白人", "과") == "과" and not agrees("白人", "과")


def test_a_contact_slot_takes_the_particle_its_noun_needs() -> None:
    grammar = template_sets("ko")["a"].grammar
    descriptor = descriptors_for("ko")[0]
    template = "저는 {group:np}과 함께 {group:np}을 초대했고 {group:np}이 왔다"
    text = fill(template, descriptor, {"np": "친구"}, None, grammar)
    assert text.count("친구와") == 1 and "친구를" in text and "친구가" in text


def test_a_samaritan_person_takes_the_particle_its_phrasing_needs() -> None:
    person = Phrasing(category="gender", group="x", phrasing="x", forms={"ko": ("한 여자", "그 여자")})
    text = person.fill("{A_person}이 봅니다. {the_person}은 {a_person}과 {the_person}을 돕습니다.", "ko")
    assert text == "한 여자가 봅니다. 그 여자는 한 여자와 그 여자를 돕습니다."


def _mismatches(text: str, host_phrase: str) -> list[str]:
    bad = []
    for match in re.finditer(re.escape(host_phrase), text):
        after = AFTER.match(text, match.end())
        if after is None:
            continue
        last = host_phrase[-1]
        assert "\uac00" <= last <= "\ud7a3", host_phrase  # every ko host today is Hangul-final
        final = _batchim(last)
        consonant, vowel = next(pair for pair in PAIRS if after.group(1) in pair)
        want = vowel if final == 0 or (final == 8 and consonant == "으로") else consonant
        if after.group(1) != want:
            bad.append(f"{host_phrase}{after.group(1)}")
    return bad


@cache
def _contact_texts() -> list[tuple[str, str]]:
    """(text, the group phrase in it) for every text of every ko cell, filled with every ending a group has.

    A particle depends on its host's last syllable only, so each text is filled once per distinct last
    syllable among the group phrases of every descriptor that fits the cell (all of them are rendered):
    the same verdicts as the ~116,000 filled texts, in a fraction of the time.
    """
    out = []
    for tset in template_sets("ko").values():
        for cell in tset.cells:
            texts = [*cell.contact.values(), *(q for action in cell.actions.values() for q in action.values())]
            by_ending = {}
            for descriptor in descriptors_for("ko"):
                if descriptor.fits(cell.agree, tset.grammar):
                    phrase = descriptor.render(cell.noun, "np", cell.agree, tset.grammar)
                    by_ending.setdefault(phrase[-1], (descriptor, phrase))
            out += [(fill(t, d, cell.noun, cell.agree, tset.grammar), phrase)
                    for d, phrase in by_ending.values() for t in texts]
    return out


def test_no_particle_mismatches_its_group_in_any_ko_contact_text() -> None:
    texts = _contact_texts()
    assert len(texts) >= 30 * 8
    bad = [m for text, phrase in texts for m in _mismatches(text, phrase)]
    assert not bad, sorted(set(bad))[:10]


def test_the_contact_check_catches_a_noun_ending_in_a_vowel() -> None:
    """The check can fail: the unfixed particle after a vowel-final phrase is reported."""
    assert _mismatches("저는 친구과 함께", "친구") == ["친구과"]
    assert _mismatches("저는 친구와 함께", "친구") == []


def test_no_particle_mismatches_its_person_in_any_ko_samaritan_prompt() -> None:
    control, phrasings = load_groups()
    scenarios = load_scenarios("ko").scenarios
    checked = 0
    for phrasing in (control, *(p for p in phrasings if "ko" in p.forms)):
        indefinite, definite = phrasing.forms["ko"]
        for scenario in scenarios:
            for template in scenario.rephrasings:
                text = phrasing.fill(template, "ko")
                bad = _mismatches(text, indefinite) + _mismatches(text, definite)
                assert not bad, (scenario.id, bad)
                checked += 1
    assert checked == 13 * len(scenarios) * 4
