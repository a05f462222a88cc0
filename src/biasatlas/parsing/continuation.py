"""Cutting a small model's invented continuation off its answer.

Small models answer, then invent the next turn ("Question: ... Answer: ...", "Frage:/Antwort:",
"Spurning:/Svar:", "Q:/A:", "User:/Assistant:", "### Instruction", the prompt repeated) and answer that
too. The answer is what comes before: the text is cut at the first continuation marker that has words
before it. A marker is a label of ``continuations`` in ``data/parsing/*.yaml`` (every language's, so a
language pack adds its own as data) followed by a colon, at the start of a line or after a sentence end,
or a markdown heading with the label; or a line that repeats a question (at least QUESTION_WORDS words
ending in "?") with more text after it.
"""

from __future__ import annotations

import re
from functools import lru_cache

from biasatlas.parsing.lexicon import TOKEN, continuation_labels

QUESTION_WORDS = 6  # "Why not?" is part of an answer; a prompt repeated is longer
# A repeated question: a whole line ending in "?" (its words counted below), with a further line after it.
QUESTION_LINE = re.compile(r"(?<=\n)[ \t]*([^\n]*\?)[ \t]*\n(?=\s*\S)")


@lru_cache(maxsize=1)
def _markers() -> re.Pattern[str]:
    labels = "|".join(sorted((re.escape(label) for label in continuation_labels()), key=len, reverse=True))
    decoration = r"[ \t>*_]*"  # "**Question:**", "> Q:"
    return re.compile(
        rf"(?:^|(?<=\n)|(?<=[.!?])[ \t]+){decoration}(?:(?:{labels})[ \t]*\d*[ \t]*[*_]*[ \t]*[:：]"
        rf"|#{{2,}}[ \t]*(?:{labels})\b)",
        re.IGNORECASE,
    )


def cut_continuation(text: str) -> str:
    """``text`` up to the first continuation marker with words before it (unchanged if there is none)."""
    cuts = [m.start() for m in _markers().finditer(text)]
    cuts += [m.start() for m in QUESTION_LINE.finditer(text) if len(TOKEN.findall(m.group(1))) >= QUESTION_WORDS]
    for cut in sorted(cuts):
        if TOKEN.search(text[:cut]):
            return text[:cut]
    return text
