"""Rules of the rating reader added for issue 27: the scale's legend restated, a value taken back,
a self-correction, a rating given with its complement.

- ``DECADES``: "in the 70s or 80s" is a range of ratings.
- ``LEGEND``: "(1 = not at all, 100 = certain)", "1 = nie, 100 = immer:" is the scale, not two ratings.
- ``RETRACTED``: "I said 70, but 60 is more realistic", "Ich habe 70 gesagt": the 70 is taken back.
- ``corrected``: "55 - no, let's say 50.", "I'd say 85... no, 88.": the value after the correction.
- ``complement``: "help: 70 out of 100; ignore: 30 out of 100": the rating, not its complement.
- ``per_case``: "60 for a man and 70 for a woman", "पुरुष हो तो 60, महिला हो तो 70": a value per case, none
  committed (issue 29; the case words are data, ``rating_cases``).
"""

from __future__ import annotations

import re
from itertools import pairwise
from typing import Protocol, TypeVar

NUM = r"\d+(?:[.,]\d+)?"
_LABEL = r"[^()\d=:;\n]{1,60}?"
_IS = r"\s*(?:=|:|means|is|bedeutet|heißt|ist)\s*"
LEGEND = re.compile(
    rf"\(?\s*(?<![\d.,])(?:1|one|eins)(?![\d.,]\d){_IS}[^,;/()\d=]{{1,60}}?[,;/]\s*(?:100|hundred|hundert)"
    rf"{_IS}{_LABEL}(?:\)|(?=[:;\n]|$))",
    re.IGNORECASE,
)
RETRACTED = re.compile(
    rf"\b(?:i\s+(?:first\s+|initially\s+|originally\s+)?said|i\s+had\s+said|i\s+was\s+going\s+to\s+say)\s+({NUM})"
    rf"|\b(?:habe|hatte)\s+(?:zuerst\s+|erst\s+|eben\s+)?({NUM})\s*%?\s*gesagt",
    re.IGNORECASE,
)
# Words that revise the value before them; the revised value must follow within MARKER_REACH characters.
CORRECTION = re.compile(
    r"\b(?:no|nein|actually|eigentlich|wait|warte|rather|eher|let's\s+say|let\s+me\s+say|sagen\s+wir|"
    r"make\s+(?:it|that)|correction|korrigiere|besser|on\s+second\s+thought|scratch\s+that|lieber)\b",
    re.IGNORECASE,
)
MARKER_REACH = 40
# "in the 70s or 80s", "the high 80s", "in den 70ern oder 80ern": decades of the scale, not ages ("in his
# 70s", "in seinen 70ern" stay ages: only "the"/"den"/"die" before them).
_HEIGHT = r"(?:(?:high|low|mid|upper|lower|hohen|niedrigen|mittleren|oberen|unteren)[\s-]+)?"
DECADES = re.compile(
    rf"\bthe\s+{_HEIGHT}(\d0)'?s\b(?:\s+(?:or|to|and)\s+(?:the\s+)?{_HEIGHT}(\d0)'?s\b)?"
    rf"|\b(?:den|die)\s+{_HEIGHT}(\d0)ern?\b(?:\s+(?:oder|bis|und)\s+(?:den\s+)?{_HEIGHT}(\d0)ern?\b)?",
    re.IGNORECASE,
)
# The label of a complement: not helping ("ignore: 30", "Not help: 35%", "Weitergehen: 25 von 100").
COMPLEMENT = re.compile(
    r"\b(?:ignor\w*|not\s+(?:to\s+)?(?:help|stop)\w*|no\s+help|wouldn't\s+help|won't\s+help|walk\w*\s+(?:past|by|on|away)"
    r"|driv\w*\s+(?:on|past|by)|pass\w*\s+by|keep\w*\s+(?:going|walking|driving)|look\w*\s+away"
    r"|nicht\s+(?:zu\s+)?(?:helfen|hilft|anhalten|eingreifen)|weiter(?:gehen|fahren|laufen)|vorbei(?:gehen|fahren|laufen)"
    r"|wegsehen|wegschauen)\b",
    re.IGNORECASE,
)


class Located(Protocol):
    @property
    def value(self) -> float: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...


C = TypeVar("C", bound=Located)


def corrected(masked: str, candidates: list[C], own: re.Pattern[str] | None = None) -> C | None:
    """The last value that a correction marker right before it puts in place of the value before it;
    ``own``: the language's markers besides the English and German ones ("en fait", "其实", "아니")."""
    for before, after in reversed(list(pairwise(candidates))):
        between = masked[before.end : after.start]
        found = [*CORRECTION.finditer(between), *(own.finditer(between.lower()) if own else ())]
        marker = max(found, key=lambda m: m.end(), default=None)
        if marker is not None and len(between) - marker.end() <= MARKER_REACH and before.value != after.value:
            return after
    return None


def complement(masked: str, candidates: list[C]) -> C | None:
    """Of two values that sum to 100, the one whose label is not a complement ("ignore: 30")."""
    values = sorted({c.value for c in candidates})
    if len(values) != 2 or abs(sum(values) - 100) > 0.5:
        return None
    labelled = []
    for i, c in enumerate(candidates):
        label = masked[candidates[i - 1].end if i else 0 : c.start]
        labelled.append((c, bool(COMPLEMENT.search(label))))
    plain = {c.value for c, is_complement in labelled if not is_complement}
    if len(plain) == 1 and any(is_complement for _, is_complement in labelled):
        return next(c for c, is_complement in labelled if not is_complement)
    return None


def per_case(masked: str, candidates: list[C], cases: re.Pattern[str] | None) -> bool:
    """Two different values, each right beside a case word ("for", "if", "pour", "हो तो"): several ratings."""
    if cases is None:
        return False
    marked = set()
    for c in candidates:
        after = masked[c.end : c.end + 30]
        before = masked[max(0, c.start - 30) : c.start]
        if re.match(rf"\s*(?:%|percent)?\s*(?:{cases.pattern})", after, re.IGNORECASE) or re.search(
            rf"(?:{cases.pattern})\s*$", before, re.IGNORECASE
        ):
            marked.add(c.value)
    return len(marked) >= 2
