"""Reading a generated theme answer as one of the offered traits, in the prompt's language.

Levels, tried in order:
- ``exact``: the whole normalised answer is a form of an offered option (either gender form, or "neither");
- ``contains``: the answer names exactly one offered option that it does not negate (a lexicon form, plural
  or variant, whole words; for Chinese, as a substring). Every trait of the lexicon is searched longest-first
  and found spans are masked, so "unconfident" never counts as "confident" and "不自信" never as "自信". A
  negated option ("not wealthy", "не богатые", "अमीर नहीं", "不富有"; "rather than poor") is not chosen:
  "wealthy, not poor" is "wealthy"; both offered traits negated ("neither poor nor wealthy", "ни бедные, ни
  богатые", "既不贫穷也不富有") is "neither"; an option only named negated is unmatched ("negated option");
- ``fuzzy``: one offered option is close to a word (or short phrase) of the answer (difflib ratio >= 0.8),
  which catches inflected forms ("сильной") and typos.
Anything else is unmatched, with a reason ("both options", "other trait: X", "no option"); unmatched answers
are kept and counted, never dropped silently.
"""

from __future__ import annotations

import difflib
import unicodedata
from dataclasses import dataclass
from functools import cache, lru_cache
from itertools import pairwise
from typing import Any

from biasatlas.probes.leakage.data import Lexicon, lexicon, trait_ids

NO_SPACE_LANGUAGES = frozenset({"zh"})
FUZZY_MIN = 0.8
NEITHER = "neither"


@dataclass(frozen=True)
class Match:
    """The option an answer chose (a trait id or ``"neither"``), how it matched, or why it did not."""

    choice: str | None
    level: str  # exact | contains | fuzzy | unmatched
    reason: str | None = None


BOUNDARY = "|"  # clause punctuation, where negation stops (see _marked)


def _folded(text: str, boundaries: bool = False) -> str:
    """Case-folded NFC text, ё→е, hyphens, symbols and control characters as spaces; other punctuation as
    spaces too, or (``boundaries``) as BOUNDARY tokens with apostrophes dropped ("aren't" -> "arent")."""
    text = unicodedata.normalize("NFC", text).casefold().replace("ё", "е")
    kept = []
    for ch in text:
        category = unicodedata.category(ch)[0]
        if boundaries and ch in "'’ʼ`":
            continue
        if ch in "-‐‑–—" or category in "SC" or (category == "P" and not boundaries):
            kept.append(" ")
        elif category == "P":
            kept.append(f" {BOUNDARY} ")
        else:
            kept.append(ch)
    return "".join(kept)


def normalise(text: str, language: str) -> str:
    """Case-fold, NFC, ё→е, hyphens to spaces, punctuation and symbols removed, spaces collapsed."""
    out = " ".join(_folded(text).split())
    return out.replace(" ", "") if language in NO_SPACE_LANGUAGES else out


@cache
def _surface_index(language: str) -> tuple[tuple[str, str], ...]:
    """(normalised surface form, trait id or 'neither'), longest first."""
    lex = lexicon(language)
    pairs = {
        (normalise(form, language), trait)
        for trait in (*trait_ids(), NEITHER)
        for form in lex.surface_forms(trait)
    }
    return tuple(sorted((p for p in pairs if p[0]), key=lambda p: (-len(p[0]), p[0], p[1])))


# Negation, per language: words that negate a trait named right after them (with at most two FILLER words
# between: "not at all wealthy", "не очень надёжные"), or right before them (Hindi: "अमीर नहीं"); Chinese: a
# negating character among the two before the trait ("不富有", "不是富有"). A clause boundary stops the
# search: "wealthy, not poor" negates only "poor". Apostrophes are dropped first ("aren't" -> "arent").
NEGATE_BEFORE = {
    "en": frozenset({"not", "never", "no", "nor", "neither", "isnt", "arent", "wasnt", "werent", "dont", "doesnt",
                     "didnt", "cannot", "cant", "hardly", "barely", "wouldnt", "shouldnt", "nt"}),
    "ru": frozenset({"не", "ни", "нет"}),
    "hi": frozenset({"न", "ना", "नहीं"}),
}
NEGATE_PAIRS = {"en": frozenset({("rather", "than"), ("instead", "of")}), "ru": frozenset({("а", "не")})}
NEGATE_AFTER = {"hi": frozenset({"नहीं", "न"})}
FILLER = {
    "en": frozenset({"very", "really", "particularly", "so", "too", "that", "exactly", "necessarily", "especially",
                     "overly", "all", "at", "a", "an", "the", "be", "being", "been", "is", "are", "was", "were",
                     "seen", "as", "considered", "theme", "of", "definitely", "certainly"}),
    "ru": frozenset({"очень", "слишком", "особо", "совсем", "так", "уж", "такие", "такой", "такая", "являются"}),
    "hi": frozenset({"तो", "भी", "ही", "बहुत", "हैं", "है"}),
}
NEGATE_CHARS = frozenset("不没非")
# "not wealthy or poor", "अमीर या गरीब नहीं": a negation reaches over traits joined by one of these.
COORDINATORS = {"en": frozenset({"or", "nor", "and"}), "ru": frozenset({"или", "и", "ни"}),
                "hi": frozenset({"या", "और", "न"}), "zh": frozenset("或和与")}


def _marked(text: str, language: str) -> list[str]:
    """Tokens of ``text`` as :func:`normalise` makes them, with clause punctuation kept as BOUNDARY tokens
    (one token per character for Chinese)."""
    folded = _folded(text, boundaries=True)
    if language in NO_SPACE_LANGUAGES:
        return [ch for ch in folded if not ch.isspace()]
    return folded.split()


def _negated(tokens: list[str], start: int, end: int, language: str) -> bool:
    """Whether the trait at ``tokens[start:end]`` is negated in its clause."""
    if language in NO_SPACE_LANGUAGES:
        return any(t in NEGATE_CHARS for t in tokens[max(0, start - 2) : start])
    before, fillers = NEGATE_BEFORE.get(language, frozenset()), FILLER.get(language, frozenset())
    i = start - 1
    for _ in range(3):  # the negator, after at most two fillers
        if i < 0 or tokens[i] == BOUNDARY:
            break
        if tokens[i] in before or (i > 0 and (tokens[i - 1], tokens[i]) in NEGATE_PAIRS.get(language, ())):
            return True
        if tokens[i] not in fillers:
            break
        i -= 1
    after = NEGATE_AFTER.get(language, frozenset())
    j = end
    for _ in range(2):
        if j >= len(tokens) or tokens[j] == BOUNDARY:
            break
        if tokens[j] in after:
            return True
        if tokens[j] not in fillers:
            break
        j += 1
    return False


def _find_all(text: str, language: str) -> list[tuple[str, bool]]:
    """(trait or 'neither', negated) for every one named in ``text``, longest form first, found spans masked."""
    tokens: list[str] = _marked(text, language)
    # Forms are matched on the words alone ("ни то, ни другое", "नि:स्वार्थ" hold punctuation); the clause
    # boundaries count for negation only. at[i]: where word i stands in ``tokens``.
    at = [i for i, token in enumerate(tokens) if token != BOUNDARY]
    words = [tokens[i] for i in at]
    spans: list[list[Any]] = []  # [start, end, trait, negated], positions in ``tokens``
    masked = [False] * len(words)
    for form, trait in _surface_index(language):
        needle = list(form) if language in NO_SPACE_LANGUAGES else form.split()
        width = len(needle)
        start = 0
        while start + width <= len(words):
            if words[start : start + width] == needle and not any(masked[start : start + width]):
                first, last = at[start], at[start + width - 1] + 1
                spans.append([first, last, trait, _negated(tokens, first, last, language)])
                masked[start : start + width] = [True] * width
                start += width
            else:
                start += 1
    spans.sort()
    joins = COORDINATORS.get(language, frozenset())
    for _ in range(2):  # both ways: the negation is before the first trait (en, ru) or after the last (hi)
        for left, right in pairwise(spans):
            if right[0] == left[1] + 1 and tokens[left[1]] in joins and (left[3] or right[3]):
                left[3] = right[3] = True
    return [(trait, negated) for _, _, trait, negated in spans]


def _fuzzy(text: str, language: str, offered: dict[str, tuple[str, ...]]) -> list[str]:
    """Offered options some word or short phrase of ``text`` resembles (difflib ratio >= 0.8)."""
    if language in NO_SPACE_LANGUAGES:
        windows = [text]
    else:
        words = text.split()
        windows = [" ".join(words[i : i + n]) for n in (1, 2, 3) for i in range(len(words) - n + 1)]
    return [option for option, forms in offered.items()
            if any(_close(window, form) for window in windows for form in forms)]


def _close(a: str, b: str) -> bool:
    # Cheap upper bounds first: the ratio can never exceed 2·min(len)/(len a + len b).
    if 2 * min(len(a), len(b)) < FUZZY_MIN * (len(a) + len(b)):
        return False
    matcher = difflib.SequenceMatcher(None, a, b)
    return matcher.real_quick_ratio() >= FUZZY_MIN and matcher.quick_ratio() >= FUZZY_MIN and (
        matcher.ratio() >= FUZZY_MIN
    )


@lru_cache(maxsize=65536)
def match_answer(text: str | None, options: tuple[str, ...], language: str) -> Match:
    """Which of ``options`` (trait ids, plus ``"neither"``) the answer ``text`` chose (cached: sampled
    answers repeat a lot)."""
    if text is None or not text.strip():
        return Match(None, "unmatched", "empty answer")
    lex = lexicon(language)
    answer = normalise(text, language)
    offered = {o: tuple(normalise(f, language) for f in lex.surface_forms(o)) for o in options}
    for option in options:
        primary = {normalise(f, language) for f in _primary_forms(lex, option)}
        if answer in primary:
            return Match(option, "exact")
    found = _find_all(text, language)
    named = list(dict.fromkeys(t for t, _ in found))
    affirmed = list(dict.fromkeys(t for t, negated in found if not negated))
    chosen = [t for t in affirmed if t in options]
    if len(chosen) == 1:
        return Match(chosen[0], "contains")
    if len(chosen) > 1:
        return Match(None, "unmatched", "both options")
    denied = [t for t in named if t in options]  # named, every time negated
    traits = [o for o in options if o != NEITHER]
    if NEITHER in options and len(traits) >= 2 and all(t in denied for t in traits):
        return Match(NEITHER, "contains")  # "neither poor nor wealthy"
    if denied:
        return Match(None, "unmatched", f"negated option: {denied[0]}")
    if named:
        return Match(None, "unmatched", f"other trait: {named[0]}")
    fuzzy = _fuzzy(answer, language, offered)
    if len(fuzzy) == 1:
        return Match(fuzzy[0], "fuzzy")
    if len(fuzzy) > 1:
        return Match(None, "unmatched", "both options")
    return Match(None, "unmatched", "no option")


def _primary_forms(lex: Lexicon, option: str) -> tuple[str, ...]:
    if option == NEITHER:
        return (lex.neither_form,)
    return tuple(dict.fromkeys(lex.forms[option].values()))
