"""Reading the stories back: one row per story, without reasoning blocks, with its refusal and empty flags."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pandas as pd

from biasatlas.parsing.text import strip_reasoning
from biasatlas.probes.stories.extract import FORMER_KEYS
from biasatlas.probes.stories.plan import NAME
from biasatlas.probes.stories.seeds import load_seeds
from biasatlas.store import Store

# quoted speech and dialogue lines: a character saying "I'm sorry, but..." is not a refusal
_QUOTED = (
    re.compile(r"\u201c[^\u201d]*\u201d"),  # “...”
    re.compile(r"\u201e[^\u201c\u201d]*[\u201c\u201d]"),  # „...“
    re.compile(r"\u00ab[^\u00bb]*\u00bb"),  # «...»
    re.compile(r"\u300c[^\u300d]*\u300d|\u300e[^\u300f]*\u300f"),  # 「...」 『...』
    re.compile(r'"[^"]*"'),
    re.compile(r"\u2018.*?\u2019(?!\w)", re.S),  # ‘...’ (an apostrophe inside a word does not close it)
    # '...' with straight quotes: opened where no letter precedes, closed where none follows, within a
    # paragraph; an apostrophe inside a word ("I'm", "can't") neither opens nor closes it
    re.compile(r"(?<!\w)'(?=\S)[^\n]*?(?<=\S)'(?!\w)"),
    re.compile(r"(?m)^[ \t]*[\u2014\u2013\u2015].*$"),  # a line of dialogue opened by a dash (fr, es, it)
)
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u2032": "'", "\uff07": "'"})


def _unquoted(text: str) -> str:
    for pattern in _QUOTED:
        text = pattern.sub(" ", text)
    return text


def is_refusal(text: str | None, markers: Sequence[str]) -> bool:
    """A refusal: a marker phrase near the start of the answer, outside quoted speech.

    Curly apostrophes count as straight ones; quoted speech and dialogue lines are left out
    first, so a story that opens with a character's "I'm sorry, but..." is a story.
    """
    head = _unquoted((text or "").strip()[:400].lower()).translate(_APOSTROPHES)[:300]
    return any(m.translate(_APOSTROPHES) in head for m in markers)


def story_text(text: Any) -> Any:
    """The story an answer tells: without reasoning blocks (``<think>…</think>``), whose deliberation
    ("a nurse or a teacher?") is not the story; "" when the answer was cut inside its reasoning. What is
    not text (no answer: None or NaN) is returned as it is."""
    if not isinstance(text, str):
        return text
    story, _ = strip_reasoning(text)
    return story.strip() if story != text else text


def story_rows(store: Store) -> pd.DataFrame:
    """The stories frame with ``story_id``, ``refusal`` and ``empty`` flags; ``text`` is the story
    without reasoning blocks (:func:`story_text`), what refusals are looked for in and what is extracted."""
    frame = store.frame(probe=NAME)
    if frame.empty:
        return frame
    frame = _current_keys(frame)
    frame["text"] = [story_text(t) for t in frame["text"]]
    frame["story_id"] = frame["prompt_id"] + ":" + frame["sample_index"].astype(str)
    markers: dict[str, tuple[str, ...]] = {}
    refusal, empty = [], []
    for lang, text, status in zip(frame["language"], frame["text"], frame["status"], strict=True):
        if lang not in markers:
            markers[lang] = _markers(lang)
        answered = status == "answered"
        empty.append(answered and not str(text or "").strip())
        refusal.append(answered and is_refusal(text, markers[lang]))
    frame["refusal"] = refusal
    frame["empty"] = empty
    return frame


def _current_keys(frame: pd.DataFrame) -> pd.DataFrame:
    """Stories prompted with a former value key (``disability_status.none``) carry the key that replaced it;
    one story stored under both (the same text planned again with the new key: one cached answer, two
    prompts) is one row, its latest plan's."""
    frame = frame.copy()
    if "base_attribute" in frame.columns and "base_value" in frame.columns:
        frame["base_value"] = [FORMER_KEYS.get(str(a), {}).get(str(v), v)
                               for a, v in zip(frame["base_attribute"], frame["base_value"], strict=True)]
    if {"key", "model", "run_id"} <= set(frame.columns):
        order = frame.sort_values("run_id", kind="stable")
        frame = order.drop_duplicates(["model", "key"], keep="last").sort_index()
    return frame


def _markers(language: str) -> tuple[str, ...]:
    english = load_seeds("en").refusal_markers
    try:
        return tuple(dict.fromkeys([*load_seeds(language).refusal_markers, *english]))
    except ValueError:
        return english

