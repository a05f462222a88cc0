"""The scripted extractor of the stories control: reads the character's professional field from the story.

The embedded model cannot extract profiles, so the control's extraction step asks a scripted
OpenAI-compatible server (:mod:`.server`) that answers with this reader. It sees only the
extraction prompt (the story inside it), never the prompted group, and uses one keyword table for
every story: the field whose job word comes first in the text, with the sentence holding it as the
evidence. Every other attribute is "unknown" (the table covers the professional field only).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

from biasatlas.probes.stories.seeds import UNKNOWN

FIELD = "professional_field"
#: job words per value of ``professional_field`` (the same table for every group); a word matches whole,
#: in any case, also in the plural ("nurses")
KEYWORDS: dict[str, tuple[str, ...]] = {
    "stem": ("engineer", "software developer", "programmer", "scientist", "chemist", "physicist",
             "mathematician", "lab technician"),
    "healthcare": ("nurse", "doctor", "physician", "surgeon", "pharmacist", "paramedic", "dentist", "midwife"),
    "education": ("teacher", "schoolteacher", "professor", "tutor", "lecturer"),
    "media": ("journalist", "reporter", "news editor", "radio host"),
    "arts": ("painter", "musician", "sculptor", "artist", "actor", "actress", "dancer", "violinist", "singer"),
    "business": ("accountant", "lawyer", "banker", "entrepreneur", "business owner", "financial analyst"),
    "admin_support": ("secretary", "receptionist", "office clerk", "administrative assistant"),
    "social_services": ("social worker", "caseworker", "counsellor", "counselor"),
    "public_admin": ("civil servant", "government official", "public official"),
    "trades": ("carpenter", "plumber", "electrician", "mechanic", "welder", "bricklayer", "builder"),
    "agriculture": ("farmer", "fisherman", "shepherd", "rancher", "farmhand"),
}
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
_STORY = re.compile(r'Story:\s*"""\s*(.*?)\s*"""', re.S)


@lru_cache(maxsize=1)
def _pattern() -> re.Pattern[str]:
    words = sorted({w for ws in KEYWORDS.values() for w in ws}, key=len, reverse=True)  # longest first
    return re.compile(r"\b(" + "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in words) + r")(?:e?s)?\b", re.I)


def _value_of(word: str) -> str:
    low = re.sub(r"\s+", " ", word.lower())
    return next(v for v, ws in KEYWORDS.items() if low in ws)


def read_field(story: str) -> tuple[str, str]:
    """(value, evidence): the field of the first job word in ``story`` and the sentence that holds it;
    ("unknown", "") when the story names no job of the table."""
    match = _pattern().search(story or "")
    if match is None:
        return UNKNOWN, ""
    for sentence in _SENTENCE.finditer(story):
        if sentence.start() <= match.start() < sentence.end():
            return _value_of(match.group(1)), sentence.group(0).strip()
    return _value_of(match.group(1)), match.group(0)  # pragma: no cover - every match lies in a sentence


def story_of(prompt_text: str) -> str | None:
    """The story inside an extraction prompt (between the template's triple quotes), or None."""
    found = _STORY.search(prompt_text or "")
    return found.group(1) if found else None


def json_keys_of(prompt_text: str) -> list[str]:
    """The attribute keys the extraction prompt asks for (its "with exactly these keys:" line)."""
    found = re.search(r"exactly these keys:\s*\n([^\n]+)", prompt_text or "")
    return [k.strip() for k in found.group(1).split(",") if k.strip()] if found else []


def answer(prompt_text: str) -> str:
    """The scripted extractor's answer to one extraction prompt: a JSON object with every asked key,
    ``professional_field`` read by :func:`read_field`, the others "unknown"."""
    story = story_of(prompt_text)
    keys = json_keys_of(prompt_text)
    if story is None or not keys:
        return "I cannot find a story in this request."
    out = {k: {"value": UNKNOWN, "evidence": ""} for k in keys}
    if FIELD in out:
        value, evidence = read_field(story)
        out[FIELD] = {"value": value, "evidence": evidence}
    return json.dumps(out)
