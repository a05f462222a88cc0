"""The word lists of the yes/no-style reader (``data/parsing/*.yaml``) and phrase matching.

A ``Lexicon`` holds, for one scale and language (English always added), every phrase that names an
option, a hedge or both options, and the words that negate, fill or split clauses. ``match`` finds
the phrases in a list of tokens, longest first.

``lexicon.yaml`` is read first, then every other ``*.yaml`` file of ``data/parsing/`` in name order
(the idiom lists ``idioms_<lang>.yaml``, word lists of further languages), each in the same format:
sections of per-language lists (``negators: {fr: [...]}``, ``scales: {certainty: {fr: {...}}}``) are
merged, lists concatenated, so a file may hold one language's entries only. Keys a file adds that the
reader does not know (``provenance``) are kept in the data and ignored.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

import yaml

AFFIRMATIVE = "affirmative"
NEGATIVE = "negative"
BOTH = "both"
HEDGE = "hedge"
OPPOSITE = {AFFIRMATIVE: NEGATIVE, NEGATIVE: AFFIRMATIVE}

# Words, with inner apostrophes ("don't", "i'd") and numbers ("50 50"); hyphens and slashes split.
TOKEN = re.compile(
    r"[\u3400-\u4dbf\u4e00-\u9fff]"  # a Han character is a token: Chinese is written without spaces
    r"|(?:[^\W\d_\u3400-\u4dbf\u4e00-\u9fff]|[\u0900-\u0903\u093a-\u094f\u0951-\u0957\u0962\u0963])+"
    r"(?:'[^\W\d_]+)*|\d+"  # Devanagari vowel signs are marks, not letters: they stay inside their word
)


@dataclass(frozen=True)
class Phrase:
    """One lexicon entry: its words, what it means, and whether it counts only at a clause edge."""

    words: tuple[str, ...]
    meaning: str
    edge_only: bool = False
    foreign: bool = False  # another language's option word: read only as a bare answer ("Ja." to an English prompt)


@dataclass(frozen=True)
class Hit:
    """A phrase found at tokens[start:end]."""

    start: int
    end: int
    phrase: Phrase

    @property
    def text(self) -> str:
        return " ".join(self.phrase.words)


@dataclass(frozen=True)
class Lexicon:
    phrases: dict[tuple[str, ...], Phrase]
    longest: int
    negators: frozenset[str]
    dual_negators: frozenset[str]
    fillers: frozenset[str]
    clause_words: frozenset[str]
    concessive: frozenset[str]
    neg_raising: frozenset[str]
    refusals: tuple[re.Pattern[str], ...]
    self_words: frozenset[str] = frozenset()
    turns: frozenset[str] = frozenset()
    rhetorical: frozenset[tuple[str, ...]] = frozenset()
    degree_words: frozenset[str] = frozenset()
    assent: frozenset[str] = frozenset()
    answer_words: frozenset[str] = frozenset()  # one-word options of every scale
    impersonal: frozenset[str] = frozenset()
    complementizers: frozenset[str] = frozenset()
    articles: frozenset[str] = frozenset()
    retractions: frozenset[str] = frozenset()  # "no" taking back the answer before a correction
    knows_self: bool = False  # the language lists its self words: "about others" can be told
    cue: re.Pattern[str] | None = None  # the language's own answer cues ("Réponse :"), besides the built-in ones
    corrections: re.Pattern[str] | None = None
    patterns: tuple[tuple[re.Pattern[str], str], ...] = ()
    undecided: tuple[re.Pattern[str], ...] = ()  # "I can't decide", "a hard question" (data/parsing/precision.yaml)
    conditionals: frozenset[str] = frozenset()  # "if", "wenn": the option before holds in one case only
    disjunctions: frozenset[str] = frozenset()  # "or", "또는": a refusal naming the options ("yes or no")
    conjunctions: frozenset[str] = frozenset()  # "and", "but": skipped before a second answer ("Ja. Und nein.")
    coordinators: frozenset[str] = frozenset()  # "and", "also" joining both options ("是和否都有道理")
    both_words: frozenset[str] = frozenset()  # "both", "都" after them
    alternatives: frozenset[tuple[str, ...]] = frozenset()  # "otherwise", "sonst": the option after is the other case
    folded: dict[tuple[str, ...], Phrase] = field(default_factory=dict)  # phrases by their unaccented words

    def is_negator(self, token: str) -> bool:
        return token in self.negators or token in self.dual_negators or token.endswith("n't")

    def match(self, tokens: list[str]) -> list[Hit]:
        """Every phrase in ``tokens``, longest match first, none overlapping."""
        hits: list[Hit] = []
        bare = [fold(t) for t in tokens] if self.folded else tokens
        i = 0
        while i < len(tokens):
            for size in range(min(self.longest, len(tokens) - i), 0, -1):
                phrase = self.phrases.get(tuple(tokens[i : i + size])) or self.folded.get(tuple(bare[i : i + size]))
                if phrase is not None:
                    hits.append(Hit(i, i + size, phrase))
                    i += size
                    break
            else:
                i += 1
        return hits

    def is_undecided(self, text: str) -> bool:
        """An "I can't decide" / "hard question" phrase in ``text`` (lower case, straight apostrophes)."""
        return any(p.search(text) for p in self.undecided)

    def is_refusal(self, text: str) -> bool:
        """A refusal phrase in ``text`` (lower case, straight apostrophes)."""
        return any(p.search(text) for p in self.refusals)


@lru_cache(maxsize=4096)
def fold(word: str) -> str:
    """``word`` without accents or diacritics ("ólíklegt" -> "oliklegt", "üblich" -> "ublich")."""
    decomposed = unicodedata.normalize("NFD", word)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _foreign(data: dict[str, Any], scale: str, language: str, own: dict[tuple[str, ...], Phrase],
             words: frozenset[str]) -> dict[tuple[str, ...], Phrase]:
    """The scale's option phrases of the other known languages that mean one thing across them and clash
    with nothing of ``language`` (none of its phrases, negators, fillers or other listed words)."""
    meanings: dict[tuple[str, ...], set[str]] = {}
    edge: dict[tuple[str, ...], bool] = {}
    for lang, table in data["scales"][scale].items():
        if lang in _languages(language):
            continue
        for meaning, entries in table.items():
            if meaning not in OPPOSITE:
                continue
            for entry in entries:
                key = tuple(TOKEN.findall(entry.lstrip("^").lower()))
                meanings.setdefault(key, set()).add(meaning)
                edge[key] = edge.get(key, False) or entry.startswith("^")
    return {
        key: Phrase(key, found.pop(), edge[key], foreign=True)
        for key, found in meanings.items()
        if key and len(found) == 1 and key not in own and not set(key) & words
    }


# How letters are written on a keyboard without them: "hoechstwahrscheinlich", "natuerlich", "i fæstum" -> "i faestum".
TRANSLITERATION = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "ß": "ss", "æ": "ae", "þ": "th", "ð": "d"})


def _folded(phrases: dict[tuple[str, ...], Phrase]) -> dict[tuple[str, ...], Phrase]:
    """Phrases by their words without accents (or with umlauts written out), where that is unambiguous: no
    two meanings share the form, and it is not itself a phrase ("Olíklegt" is "ólíklegt", "Hoechstwahr-
    scheinlich" is "höchstwahrscheinlich"; "nö" is left to "no")."""
    by_fold: dict[tuple[str, ...], list[Phrase]] = {}
    for words, phrase in phrases.items():
        for bare in {tuple(fold(w) for w in words), tuple(fold(w.translate(TRANSLITERATION)) for w in words)}:
            if bare != words:
                by_fold.setdefault(bare, []).append(phrase)
    return {
        bare: found[0]
        for bare, found in by_fold.items()
        if bare not in phrases and len({p.meaning for p in found}) == 1
    }


def merge(into: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """``extra`` merged into ``into``: mappings recursively, lists concatenated, new keys added; a value
    of another type than the one it would replace is skipped (a malformed file cannot break the lists)."""
    for key, value in extra.items():
        old = into.get(key)
        if old is None:
            into[key] = value
        elif isinstance(old, dict) and isinstance(value, dict):
            merge(old, value)
        elif isinstance(old, list) and isinstance(value, list):
            into[key] = old + value
        elif type(old) is type(value) and not isinstance(old, (dict, list)):
            into[key] = value
    return into


def per_language(loaded: dict[str, Any]) -> dict[str, Any]:
    """A file of one language written flat (``language: fr`` and ``negators: [...]``, ``scales: {certainty:
    {affirmative: [...]}}``) in the per-language shape of lexicon.yaml (``negators: {fr: [...]}``)."""
    language = loaded.get("language")
    if not isinstance(language, str):
        return loaded
    shaped: dict[str, Any] = {}
    for key, value in loaded.items():
        if key == "language" or key == "provenance":
            continue
        if key in ("scales", "patterns") and isinstance(value, dict):
            shaped[key] = {name: {language: entries} for name, entries in value.items()}
        else:
            shaped[key] = {language: value}
    return shaped


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    folder = resources.files("biasatlas") / "data" / "parsing"
    data: dict[str, Any] = yaml.safe_load((folder / "lexicon.yaml").read_text(encoding="utf-8"))
    extra = sorted((f for f in folder.iterdir() if f.name.endswith(".yaml") and f.name != "lexicon.yaml"),
                   key=lambda f: f.name)
    for file in extra:
        loaded = yaml.safe_load(file.read_text(encoding="utf-8"))
        if isinstance(loaded, dict):
            merge(data, per_language(loaded))
    return data


def data_section(name: str) -> dict[str, Any]:
    """One section of the merged word lists (``{}`` where no file has it), e.g. ``number_words``."""
    section = _data().get(name)
    return section if isinstance(section, dict) else {}


def scales() -> tuple[str, ...]:
    """The scales the reader knows."""
    return tuple(_data()["scales"])


def _words(table: dict[str, list[str]] | None, language: str) -> frozenset[str]:
    table = table or {}
    return frozenset(table.get("en", []) + (table.get(language, []) if language != "en" else []))


def _phrases(table: dict[str, list[str]] | None, language: str) -> frozenset[tuple[str, ...]]:
    return frozenset(tuple(TOKEN.findall(entry.lower())) for entry in _words(table, language))


def _languages(language: str) -> tuple[str, ...]:
    return ("en",) if language == "en" else ("en", language)


@lru_cache(maxsize=64)
def lexicon(scale: str, language: str) -> Lexicon:
    """The lexicon for ``scale`` in ``language`` plus English."""
    data = _data()
    if scale not in data["scales"]:
        raise ValueError(f"unknown scale {scale!r}; valid: {', '.join(data['scales'])}")
    phrases: dict[tuple[str, ...], Phrase] = {}

    # Endings a language attaches to the last word of a phrase (Korean "자주요", "예이기도"): each phrase is
    # also read with them, unless that form is a phrase of its own.
    endings = [str(e) for e in (data.get("suffixes") or {}).get(language, [])] if language != "en" else []

    def add(entries: list[str], meaning: str) -> None:
        for entry in entries:
            edge_only = entry.startswith("^")
            words = tuple(TOKEN.findall(entry.lstrip("^").lower()))
            phrases.setdefault(words, Phrase(words, meaning, edge_only))
        for entry in entries if endings else ():
            words = tuple(TOKEN.findall(entry.lstrip("^").lower()))
            for ending in endings:
                inflected = (*words[:-1], words[-1] + ending)
                phrases.setdefault(inflected, Phrase(inflected, meaning, entry.startswith("^")))

    for lang in _languages(language):
        add(data["hedges"].get(lang, []), HEDGE)  # first: "not sure" is a hedge, not a negated "sure"
        for meaning, entries in data["scales"][scale].get(lang, {}).items():
            add(entries, BOTH if meaning == "both" else meaning)
        for meaning, entries in data["common"].get(lang, {}).items():
            add(entries, meaning)
    patterns = []
    for lang in _languages(language):
        by_scale = (data.get("patterns") or {}).get(lang, {})
        for group in (scale, "common"):
            for meaning, entries in (by_scale.get(group) or {}).items():
                patterns += [(re.compile(p), HEDGE if meaning == "hedge" else meaning) for p in entries]
    markers = [p for lang in _languages(language) for p in (data.get("corrections") or {}).get(lang, [])]
    own_words = frozenset().union(*(
        _words(data.get(key), language)
        for key in ("negators", "dual_negators", "fillers", "clause_words", "self_words", "turns", "impersonal",
                    "complementizers", "neg_raising", "assent", "degree_words")
    ))
    phrases.update(_foreign(data, scale, language, phrases, own_words))
    return Lexicon(
        phrases=phrases,
        longest=max(len(w) for w in phrases),
        negators=_words(data["negators"], language),
        dual_negators=_words(data["dual_negators"], language),
        fillers=_words(data["fillers"], language),
        clause_words=_words(data["clause_words"], language),
        concessive=_words(data["concessive"], language),
        neg_raising=_words(data["neg_raising"], language),
        refusals=refusal_patterns(language),
        self_words=_words(data.get("self_words"), language),
        turns=_words(data.get("turns"), language),
        rhetorical=_phrases(data.get("rhetorical"), language),
        degree_words=_words(data.get("degree_words"), language),
        assent=_words(data.get("assent"), language),
        impersonal=_words(data.get("impersonal"), language),
        complementizers=_words(data.get("complementizers"), language),
        articles=_words(data.get("articles"), language),
        retractions=_words(data.get("retractions"), language),
        knows_self=bool((data.get("self_words") or {}).get(language)),
        cue=_cue(data, language),
        answer_words=frozenset(
            entry.lstrip("^")
            for lang in _languages(language)
            for table in data["scales"].values()
            for meaning, entries in table.get(lang, {}).items()
            if meaning != "both"
            for entry in entries
            if " " not in entry
        ),
        corrections=re.compile("|".join(f"(?:{m})" for m in markers)) if markers else None,
        patterns=tuple(patterns),
        undecided=_patterns(data.get("undecided"), language),
        conditionals=_words(data.get("conditionals"), language),
        disjunctions=_words(data.get("disjunctions"), language),
        conjunctions=_words(data.get("conjunctions"), language),
        alternatives=_phrases(data.get("alternatives"), language),
        coordinators=_words(data.get("coordinators"), language),
        both_words=_words(data.get("both_words"), language),
        folded=_folded(phrases),
    )


def _patterns(table: dict[str, list[str]] | None, language: str) -> tuple[re.Pattern[str], ...]:
    """The regular expressions of ``table`` for English and ``language``."""
    return tuple(re.compile(p) for lang in _languages(language) for p in (table or {}).get(lang, []))


def _cue(data: dict[str, Any], language: str) -> re.Pattern[str] | None:
    cues = [c for lang in _languages(language) for c in (data.get("answer_cues") or {}).get(lang, [])]
    return re.compile("|".join(f"(?:{c})" for c in cues)) if cues else None


@lru_cache(maxsize=1)
def continuation_labels() -> tuple[str, ...]:
    """The labels that open an invented next turn ("question", "frage", "user"), of every language."""
    table = _data().get("continuations") or {}
    return tuple(dict.fromkeys(label.lower() for entries in table.values() for label in entries))


@lru_cache(maxsize=64)
def refusal_patterns(language: str) -> tuple[re.Pattern[str], ...]:
    """The refusal expressions of ``language`` and English."""
    data = _data()
    return tuple(re.compile(p) for lang in _languages(language) for p in data["refusals"].get(lang, []))
