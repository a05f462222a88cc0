"""Text clean-up shared by the answer readers: reasoning blocks, markdown, quotes, apostrophes, dashes.

Both readers first drop what a model thinks before it answers (``<think>...</think>`` and the like),
then normalise the rest so that ``**No**``, ``„Nei“``, ``I can’t`` and ``70–80`` read like their plain
forms.
"""

from __future__ import annotations

import re
import unicodedata

REASONING_TAGS = ("think", "thinking", "reasoning", "thought")
_TAGS = "|".join(REASONING_TAGS)
CLOSED_BLOCK = re.compile(rf"<({_TAGS})>.*?</\1>", re.IGNORECASE | re.DOTALL)
# A closing tag with no opening one: the chat template put the opening tag in the prompt.
ORPHAN_CLOSE = re.compile(rf"^.*</(?:{_TAGS})>", re.IGNORECASE | re.DOTALL)
# An opening tag never closed: the answer was cut inside the reasoning.
UNCLOSED = re.compile(rf"<(?:{_TAGS})>.*\Z", re.IGNORECASE | re.DOTALL)

APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "ʼ": "'"})
DASHES = str.maketrans({c: "-" for c in "–—−‑‒"})
# CJK and Devanagari punctuation as ASCII (with a space), so sentences and clauses split as in the others
WIDE_PUNCTUATION = str.maketrans({"。": ". ", "！": "! ", "？": "? ", "，": ", ", "：": ": ", "；": "; ", "、": ", ",
                                  "।": ". ", "॥": ". ", "（": " (", "）": ") "})
# a digit written against a Han or Hangul character ("我会说80", "80이라고") stands apart, as between words
SCRIPT_DIGIT = re.compile(r"(?<=[\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3])(?=\d)"
                          r"|(?<=\d)(?=[\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3])")
QUOTES = re.compile(r"[\"“”„«»‹›]")
MARKDOWN = re.compile(r"\*+|(?<!\w)_+|_+(?!\w)|^\s*#+\s*|^\s*>\s*|^\s*[-•]\s+", re.MULTILINE)
BACKTICKS = re.compile(r"`+")
# HTML markup a model writes around its answer (<b>No</b>, <p>, <br/>): inline tags go, block tags break
# the line; a tag between words must not split "I cannot answer" into "I cannot" + "answer"
INLINE_TAG = re.compile(r"</?(?:b|i|u|em|strong|span|mark|small|sup|sub|code|font|a)(?:\s[^<>]*)?>", re.IGNORECASE)
BLOCK_TAG = re.compile(r"</?(?:p|div|br|li|ul|ol|h[1-6]|blockquote|pre|tr|td|table)(?:\s[^<>]*)?/?>", re.IGNORECASE)


def strip_reasoning(text: str) -> tuple[str, bool]:
    """The text without reasoning blocks, and whether the answer was cut inside one."""
    text = CLOSED_BLOCK.sub(" ", text)
    text = ORPHAN_CLOSE.sub(" ", text)
    cut = bool(UNCLOSED.search(text))
    return UNCLOSED.sub(" ", text), cut


def normalise(text: str) -> str:
    """NFC, straight apostrophes, ASCII dashes; no HTML tags, quotes, emphasis, headings, quote marks or bullets."""
    text = unicodedata.normalize("NFC", text).translate(DASHES).translate(WIDE_PUNCTUATION)
    text = BLOCK_TAG.sub("\n", INLINE_TAG.sub("", text))
    text = SCRIPT_DIGIT.sub(" ", text)
    text = BACKTICKS.sub("", text).translate(APOSTROPHES)
    text = QUOTES.sub("", text)
    return MARKDOWN.sub("", text).strip()
