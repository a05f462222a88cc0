"""Reading a generated theme answer as one of the offered traits, in the prompt's language.

Levels, tried in order:
- ``exact``: the whole normalised answer is a form of an offered option (either gender form, or "neither");
- ``contains``: the answer names exactly one offered option (a lexicon form or variant, whole words; for
  Chinese, as a substring). Every trait of the lexicon is searched longest-first and found spans are masked,
  so "unconfident" never counts as "confident" and "不自信" never as "自信";
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


def normalise(text: str, language: str) -> str:
    """Case-fold, NFC, ё→е, hyphens to spaces, punctuation and symbols removed, spaces collapsed."""
    text = unicodedata.normalize("NFC", text).casefold().replace("ё", "е")
    kept = []
    for ch in text:
        category = unicodedata.category(ch)
        if ch in "-‐‑–—" or category[0] in "PSC":
            kept.append(" ")
        else:
            kept.append(ch)
    out = " ".join("".join(kept).split())
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


def _find_all(text: str, language: str) -> list[str]:
    """Traits (and 'neither') named in ``text``, longest form first, found spans masked."""
    found: list[str] = []
    if language in NO_SPACE_LANGUAGES:
        haystack = text
        for form, trait in _surface_index(language):
            if form in haystack:
                found.append(trait)
                haystack = haystack.replace(form, "\x00")
        return found
    haystack = f" {text} "
    for form, trait in _surface_index(language):
        needle = f" {form} "
        if needle in haystack:
            found.append(trait)
            haystack = haystack.replace(needle, " \x00 ")
    return found


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
    found = list(dict.fromkeys(_find_all(answer, language)))
    chosen = [t for t in found if t in options]
    if len(chosen) == 1:
        return Match(chosen[0], "contains")
    if len(chosen) > 1:
        return Match(None, "unmatched", "both options")
    if found:
        return Match(None, "unmatched", f"other trait: {found[0]}")
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
