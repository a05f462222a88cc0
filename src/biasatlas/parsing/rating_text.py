"""Preparing a rating answer for the reader: wide punctuation, native digits, number words as digits.

"66,67" is a decimal, "1,000" a thousands separator; "60~70" a range as East Asian answers write it;
"seventy-five" / "fünfundsiebzig" digits via text2num (imported on first use).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from biasatlas.parsing.numerals import ascii_digits
from biasatlas.parsing.text import WIDE_PUNCTUATION, normalise

# Languages text2num reads number words in (others fall back to English words only).
NUMBER_WORD_LANGUAGES = frozenset({"en", "de", "fr", "es", "pt", "it", "nl", "da"})


def to_float(token: str) -> float:
    """'66.67' and '66,67' are decimals; '1,000' is a thousands separator."""
    if "," in token:
        head, _, tail = token.partition(",")
        token = head + tail if len(tail) == 3 else f"{head}.{tail}"
    return float(token)


RANGE_TILDE = re.compile(r"(?<=\d)\s*[~〜～]\s*(?=\d)")  # "60~70": a range, as East Asian answers write it


def normalise_answer(text: str) -> str:
    # wide punctuation first: NFKC would make "，75" a bare ",75" (no blank after it, no number read)
    text = RANGE_TILDE.sub("-", ascii_digits(unicodedata.normalize("NFKC", text.translate(WIDE_PUNCTUATION))))
    return normalise(text).replace("~", " about ")


def _alpha2digit() -> Callable[[str, str], str]:
    # Imported on first use: a missing package then fails the rating parser with one clear line
    # instead of every command that imports the probe modules.
    try:
        from text_to_num import alpha2digit
    except ImportError as exc:  # pragma: no cover - text2num is a dependency
        raise RuntimeError("reading number words needs the package 'text2num' (pip install text2num)") from exc
    return alpha2digit


def words_to_digits(text: str, language: str) -> str:
    """Number words to digits ('seventy-five' -> '75'); isolated small words like 'one' stay words."""
    alpha2digit = _alpha2digit()
    for lang in dict.fromkeys([language if language in NUMBER_WORD_LANGUAGES else "en", "en"]):
        try:
            text = alpha2digit(text, lang)
        except Exception:  # text2num is a native extension; a failure must not lose the answer
            continue
    return text
