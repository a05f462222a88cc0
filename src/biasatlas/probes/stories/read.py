"""Reading the stories back: one row per story with its refusal and empty flags."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from biasatlas.probes.stories.plan import NAME
from biasatlas.probes.stories.seeds import load_seeds
from biasatlas.store import Store


def is_refusal(text: str | None, markers: Sequence[str]) -> bool:
    """A refusal: a marker phrase near the start of the answer (stories quoting one later are fine)."""
    head = (text or "").strip().lower()[:300]
    return any(m in head for m in markers)


def story_rows(store: Store) -> pd.DataFrame:
    """The stories frame with ``story_id``, ``refusal`` and ``empty`` flags."""
    frame = store.frame(probe=NAME)
    if frame.empty:
        return frame
    frame = frame.copy()
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


def _markers(language: str) -> tuple[str, ...]:
    english = load_seeds("en").refusal_markers
    try:
        return tuple(dict.fromkeys([*load_seeds(language).refusal_markers, *english]))
    except ValueError:
        return english

