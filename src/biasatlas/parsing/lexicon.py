"""The word lists of the yes/no-style reader (``data/parsing/lexicon.yaml``) and phrase matching.

A ``Lexicon`` holds, for one scale and language (English always added), every phrase that names an
option, a hedge or both options, and the words that negate, fill or split clauses. ``match`` finds
the phrases in a list of tokens, longest first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
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

    def is_negator(self, token: str) -> bool:
        return token in self.negators or token in self.dual_negators or token.endswith("n't")

    def match(self, tokens: list[str]) -> list[Hit]:
        """Every phrase in ``tokens``, longest match first, none overlapping."""
        hits: list[Hit] = []
        i = 0
        while i < len(tokens):
            for size in range(min(self.longest, len(tokens) - i), 0, -1):
                phrase = self.phrases.get(tuple(tokens[i : i + size]))
                if phrase is not None:
                    hits.append(Hit(i, i + size, phrase))
                    i += size
                    break
            else:
                i += 1
        return hits

    def is_refusal(self, text: str) -> bool:
        """A refusal phrase in ``text`` (lower case, straight apostrophes)."""
        return any(p.search(text) for p in self.refusals)


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    folder = resources.files("biasatlas") / "data" / "parsing"
    data: dict[str, Any] = yaml.safe_load((folder / "lexicon.yaml").read_text(encoding="utf-8"))
    # word lists of further languages (language packs): words_<lang>.yaml in lexicon.yaml's shape
    for file in sorted((f for f in folder.iterdir() if f.name.startswith("words_") and f.name.endswith(".yaml")),
                       key=lambda f: f.name):
        _merge(data, yaml.safe_load(file.read_text(encoding="utf-8")) or {})
    return data


def _merge(into: dict[str, Any], extra: dict[str, Any]) -> None:
    """Add ``extra``'s tables to ``into``: mappings merge, lists extend; other values (provenance) are skipped."""
    for key, value in extra.items():
        if isinstance(value, dict):
            _merge(into.setdefault(key, {}), value)
        elif isinstance(value, list) and isinstance(into.get(key, []), list):
            into[key] = [*into.get(key, []), *value]


def scales() -> tuple[str, ...]:
    """The scales the reader knows."""
    return tuple(_data()["scales"])


def _words(table: dict[str, list[str]], language: str) -> frozenset[str]:
    return frozenset(table.get("en", []) + (table.get(language, []) if language != "en" else []))


def _languages(language: str) -> tuple[str, ...]:
    return ("en",) if language == "en" else ("en", language)


@lru_cache(maxsize=64)
def lexicon(scale: str, language: str) -> Lexicon:
    """The lexicon for ``scale`` in ``language`` plus English."""
    data = _data()
    if scale not in data["scales"]:
        raise ValueError(f"unknown scale {scale!r}; valid: {', '.join(data['scales'])}")
    phrases: dict[tuple[str, ...], Phrase] = {}

    def add(entries: list[str], meaning: str) -> None:
        for entry in entries:
            edge_only = entry.startswith("^")
            words = tuple(TOKEN.findall(entry.lstrip("^").lower()))
            phrases.setdefault(words, Phrase(words, meaning, edge_only))

    for lang in _languages(language):
        add(data["hedges"].get(lang, []), HEDGE)  # first: "not sure" is a hedge, not a negated "sure"
        for meaning, entries in data["scales"][scale].get(lang, {}).items():
            add(entries, BOTH if meaning == "both" else meaning)
        for meaning, entries in data["common"].get(lang, {}).items():
            add(entries, meaning)
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
    )


@lru_cache(maxsize=64)
def refusal_patterns(language: str) -> tuple[re.Pattern[str], ...]:
    """The refusal expressions of ``language`` and English."""
    data = _data()
    return tuple(re.compile(p) for lang in _languages(language) for p in data["refusals"].get(lang, []))
