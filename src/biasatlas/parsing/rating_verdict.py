"""When a rating answer commits to one value: labelled verdicts, a changed mind, alternatives, the cut.

The rating reader (``numbers.py``) finds candidate values; these rules decide whether the answer commits
to one of them, so that a wrong rating is rarer than an unread one (an unread answer costs n, a wrong one
moves a group's mean):

- ``labelled``: "**Einschätzung: 75**", "Điểm: 70. Lý do: ...": a value right after a line's label and a
  colon, ending its sentence, is the answer's verdict (any language: the label's words are not needed).
- ``revised``: "Zunächst hätte ich 40 gesagt ... aber 65", "Initial estimate: 30 / Revised estimate: 55",
  "一开始我想说40，但仔细想想，我会说60": a first value marked as first and a later one after a revision
  word; the later one is the verdict.
- ``alternatives``: "vielleicht 40, vielleicht 70", "either 40 or 60", "40일 수도 있고 70일 수도":
  two values offered side by side, none committed ("several ratings").
- ``at_cut`` / ``verdict_open``: an answer stopped at the token limit. A value at the cut (nothing after
  it but blanks, punctuation or a word or two that may have gone on: "is 1", "around 7", "70 out of",
  "七十") may be the start of another number or sentence, so it is never a rating; a verdict complete
  before the cut ("Rating: 70. Reason: the person ...") is read unless the text after it starts revising.
- ``confidence``: how sure the reader is of its label ("high", "medium", "low"), by the rule that decided
  it (``extra["confidence"]``).

The words of each language are data: ``rating_first``, ``rating_revised`` and ``rating_alternatives`` in
``data/parsing/ratings.yaml``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import pairwise

from biasatlas.parsing.lexicon import data_section
from biasatlas.parsing.numerals import word_pattern
from biasatlas.parsing.rating_rules import CORRECTION, C, Located  # a located rating candidate

# A line's or sentence's label before the value: "Rating:", "**Estimate:**", "- Endgültige Antwort :",
# "... . The elderly woman: 85." (no digit or sentence end in it).
LABEL_BEFORE = re.compile(r"(?:^|\n|[.!?;][ \t]+)[ \t]*[^\W\d_][^\d:\n.!?;]{0,40}?:[ \t]*$")
# What may follow a labelled value: the end of the text or of its line or sentence.
LABEL_AFTER = re.compile(r"[ \t]*(?:$|\n|[.!?;](?:\s|$))")
BOUNDARY_THEN_TEXT = re.compile(r"[.!?;\n][^\S\n]*\n?\s*[^\W_]")  # a sentence ended, and more text came
JOINED = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3]")
WORDS_AFTER_CUT = 3  # this many words after a value: it was complete when the answer stopped
ALTERNATIVE_REACH = 20  # the most text between two alternatives, and before the first's hedge
SCALE_ENDS = frozenset({1.0, 100.0})
LEGEND_REACH = 60
FIRST_REACH = 60  # how far before the first value its "first" marker may stand

# How sure the reader is of a label, by the rule that decided it ("high", "medium", "low", as the yes/no
# reader writes it; the judge reads a "low" one again under ``--reader both``).
LEVELS = ("high", "medium", "low")
CONFIDENCE = {
    "leading": "high", "final": "high", "only number": "high", "cue": "medium", "revised": "medium",
    "self-correction": "medium", "marked": "medium", "after range": "low", "complement": "low",
}
SURELY_UNREAD = frozenset({"no answer", "no number", "refusal", "cut", "range", "out of range", "other scale"})


def _words(section: str, language: str) -> str | None:
    table = data_section(section)
    words = [*table.get("en", []), *(table.get(language, []) if language != "en" else [])]
    return word_pattern(words) if words else None


@lru_cache(maxsize=64)
def _pattern(section: str, language: str) -> re.Pattern[str] | None:
    words = _words(section, language)
    return re.compile(words, re.IGNORECASE) if words else None


def labelled(masked: str, candidate: Located) -> bool:
    """The value stands right after its line's label and a colon, and ends its line or sentence."""
    return bool(LABEL_BEFORE.search(masked[: candidate.start]) and LABEL_AFTER.match(masked, candidate.end))


def scale_legend(candidates: list[C]) -> list[C]:
    """The scale's ends named in words beside other values ("1 berarti tidak pernah dan 100 berarti selalu,
    saya pilih 65", "1代表..., 100代表..."): a 1 and then a 100 within LEGEND_REACH characters."""
    for a, b in pairwise(candidates):
        if a.value == 1 and b.value == 100 and b.start - a.end <= LEGEND_REACH and len(candidates) > 2:
            return [a, b]
    return []


def revised(masked: str, candidates: list[C], language: str) -> C | None:
    """The value a marked first value was revised to ("first 40 ... but on reflection 60"), or None."""
    first = _pattern("rating_first", language)
    turns = [p for p in (_pattern("rating_contrast", language), _pattern("rating_revised", language)) if p]
    if first is None or not turns:
        return None
    for i, a in enumerate(candidates):
        if not first.search(masked[max(0, a.start - FIRST_REACH) : a.start]):
            continue
        rest = candidates[i + 1 :]
        for j, b in enumerate(rest):
            before = masked[(rest[j - 1].end if j else a.end) : b.start]
            if b.value != a.value and any(p.search(before) for p in turns):
                return _agreed(rest[j:])
        return None
    return None


def revised_later(masked: str, chosen: C, candidates: list[C], language: str,
                  corrections: re.Pattern[str] | None) -> tuple[C | None, bool]:
    """After the chosen value, another one: (the value it was revised to, True) when a revision or
    correction word stands between them ("I'll say 50. Actually, no: ... Let me revise that to 65"),
    else (None, True): two values and none committed; (chosen, False) when no other value follows."""
    later = [c for c in candidates if c.start >= chosen.end and c.value != chosen.value]
    if not later:
        return chosen, False
    between = masked[chosen.end : later[-1].start]
    strong = _pattern("rating_revised", language)
    if (strong and strong.search(between)) or CORRECTION.search(between) or (
            corrections and corrections.search(between.lower())):
        return _agreed([c for c in candidates if c.start >= later[0].start]), True
    if all(c.value in SCALE_ENDS for c in later):  # "70 sur 100", "70. 100 would be certain": the scale
        return chosen, False
    return None, True


def last_cue_settles(masked: str, cued: list[C], language: str, corrections: re.Pattern[str] | None) -> bool:
    """Several cued values: the last one is the verdict only when a revision, contrast or conclusion word
    stands between it and the last different one ("... maybe 50. But given the rain, I'd say 40")."""
    last = cued[-1]
    different = [c for c in cued if c.value != last.value and c.start < last.start]
    if not different:
        return True
    doubt = _pattern("rating_doubt", language)
    if doubt and doubt.search(masked[different[0].end :]):
        return False
    between = masked[different[-1].end : last.start]
    words = [_pattern(s, language) for s in ("rating_revised", "rating_contrast", "rating_conclusion")]
    return any(p and p.search(between) for p in [*words, CORRECTION]) or bool(
        corrections and corrections.search(between.lower()))


def _agreed(values: list[C]) -> C | None:
    """The last of ``values`` when they all agree, else None."""
    return values[-1] if values and len({c.value for c in values}) == 1 else None


def alternatives(masked: str, candidates: list[C], language: str) -> bool:
    """Two different values offered side by side ("maybe 40, maybe 70", "40 or 60"): none committed."""
    either, maybe = _pattern("rating_alternatives", language), _pattern("rating_maybe", language)
    for a, b in pairwise(candidates):
        between = masked[a.end : b.start]
        if a.value == b.value or len(between.strip()) > ALTERNATIVE_REACH or "\n" in between:
            continue
        if CORRECTION.search(between):  # "70, or rather 75": a correction, not two alternatives
            continue
        if either and either.search(between):
            return True
        if maybe and maybe.search(between) and maybe.search(masked[max(0, a.start - ALTERNATIVE_REACH) : a.start]):
            return True
    return False


def _word_count(text: str) -> float:
    """Words in ``text``; a Han or Hangul character counts as half a word (no blanks between words)."""
    joined = len(JOINED.findall(text))
    spaced = len(re.findall(r"[^\W\d_]+", JOINED.sub(" ", text)))
    return spaced + joined / 2


def at_cut(text: str, candidate: Located) -> bool:
    """In an answer stopped at the token limit: whether the value may have gone on (it ends the text, or
    only a word or two follow it without a sentence ending between)."""
    tail = text[candidate.end :]
    return not BOUNDARY_THEN_TEXT.search(tail) and _word_count(tail) < WORDS_AFTER_CUT


def verdict_open(text: str, candidate: Located, language: str, corrections: re.Pattern[str] | None) -> bool:
    """In a cut answer: whether the text after the value starts revising it (the verdict may have changed)."""
    tail = text[candidate.end :]
    later = _pattern("rating_revised", language)
    return bool((later and later.search(tail)) or CORRECTION.search(tail)
                or (corrections and corrections.search(tail.lower())))


def confidence(rule: str | None, read: bool, cut: bool = False) -> str:
    """The reader's confidence in a label decided by ``rule`` (for an unread answer: its reason). A rating
    read from a cut answer's verdict is one level less sure than the same rule on a whole answer."""
    if not read:
        return "high" if rule in SURELY_UNREAD else "medium"
    level = LEVELS.index(CONFIDENCE.get(rule or "", "medium"))
    return LEVELS[min(level + (1 if cut else 0), len(LEVELS) - 1)]
