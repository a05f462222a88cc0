"""Korean particles that alternate with the sound their host ends in (과/와, 을/를, 이/가, 은/는, 으로/로).

A template writes either form of a pair right after a slot ("{group:np}과", "{A_person}이"); when the slot is
filled, the particle is chosen from the filled text's last sound, never taken as written. The last sound of a
Hangul syllable is read from its code point: syllables are U+AC00 + (initial*21 + vowel)*28 + final, so
``(code - 0xAC00) % 28`` is the final consonant (batchim), 0 for none and 8 for ㄹ.

Hosts that end in something other than Hangul are read as a Korean speaker reads them aloud:
- a digit by its Sino-Korean name (1 일, 3 삼, 6 육, 7 칠, 8 팔, 0 영 end in a consonant; 2 이, 4 사, 5 오,
  9 구 in a vowel; 1, 7, 8 in ㄹ);
- a Latin letter by its Korean letter name (L 엘, R 알 end in ㄹ; M 엠, N 엔 in a consonant; every other
  letter in a vowel: 에이, 비, 씨, …, 큐, 엑스, 제트) — right for acronyms ("LGBTQ를"), an approximation for
  whole English words;
- closing quotes and brackets are skipped; any other ending (a Han character, punctuation) leaves the
  particle as written and ``final_sound`` returns ``None`` (the structural test rejects such a host).
"""

from __future__ import annotations

import re
from typing import Literal

Sound = Literal["vowel", "rieul", "consonant"]

#: (after a consonant, after a vowel); ㄹ-final hosts take the vowel form of 으로/로 only
PAIRS: tuple[tuple[str, str], ...] = (("과", "와"), ("을", "를"), ("이", "가"), ("은", "는"), ("으로", "로"))
_FORMS = {form: pair for pair in PAIRS for form in pair}
#: a particle right after a slot, then a word boundary (so "이랑", "이다", "은행" are not read as one)
PARTICLE = r"(?P<particle>으로|과|와|을|를|이|가|은|는|로)(?![\uac00-\ud7a3\w])"
_DIGITS: dict[str, Sound] = {"0": "consonant", "1": "rieul", "2": "vowel", "3": "consonant", "4": "vowel",
                             "5": "vowel", "6": "consonant", "7": "rieul", "8": "rieul", "9": "vowel"}
_LETTERS: dict[str, Sound] = {"l": "rieul", "r": "rieul", "m": "consonant", "n": "consonant"}
_CLOSERS = "\"')]}”’」』》"
RIEUL = 8


def final_sound(host: str) -> Sound | None:
    """How ``host`` ends when read aloud: a vowel, ㄹ, another consonant, or ``None`` (unknown)."""
    text = host.rstrip().rstrip(_CLOSERS).rstrip()
    if not text:
        return None
    last = text[-1]
    if "\uac00" <= last <= "\ud7a3":
        final = (ord(last) - 0xAC00) % 28
        return "vowel" if final == 0 else "rieul" if final == RIEUL else "consonant"
    if last in _DIGITS:
        return _DIGITS[last]
    if last.isascii() and last.isalpha():
        return _LETTERS.get(last.lower(), "vowel")
    return None


def particle_for(host: str, particle: str) -> str:
    """The form of ``particle``'s pair that fits ``host`` (``particle`` itself if the host's end is unknown)."""
    pair = _FORMS.get(particle)
    sound = final_sound(host)
    if pair is None or sound is None:
        return particle
    after_consonant, after_vowel = pair
    if sound == "vowel" or (sound == "rieul" and after_consonant == "으로"):
        return after_vowel
    return after_consonant


def fill_slot(text: str, slot: str, value: str) -> str:
    """Replace every ``slot`` (a literal, e.g. ``{A_person}``) of ``text`` by ``value``, fixing a particle after it."""
    pattern = re.compile(re.escape(slot) + f"(?:{PARTICLE})?")
    return pattern.sub(lambda m: value + (particle_for(value, m["particle"]) if m["particle"] else ""), text)


def agrees(host: str, particle: str) -> bool:
    """Whether ``particle`` is the form its pair takes after ``host`` (hosts of unknown end never agree)."""
    return final_sound(host) is not None and particle_for(host, particle) == particle
