"""Which stored answers stopped at the token limit, for the readers' ``cut`` flag.

A backend reports why generation stopped in ``finish_reason``: "length" (HTTP APIs, the local backend when a
row used all of ``max_tokens``) means the answer was cut, so a number or option at its end may be the start of
another; "stop", "choice" (scored options) and missing values do not.
"""

from __future__ import annotations

import inspect
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from biasatlas.records import Outcome

if TYPE_CHECKING:
    import pandas as pd

CUT = "length"


def cut_at_limit(frame: pd.DataFrame) -> list[bool]:
    """Per row: whether the answer stopped at the token limit (False where the frame has no finish_reason)."""
    if "finish_reason" not in frame.columns:
        return [False] * len(frame)
    return [value == CUT for value in frame["finish_reason"].tolist()]


def parse_with_cut(parser: Any, text: str | None, cut: bool) -> Outcome:
    """``parser.parse(text, cut=cut)``; a reader without the ``cut`` keyword reads the text as it is."""
    outcome: Outcome = parser.parse(text, cut=cut) if takes_cut(parser.parse) else parser.parse(text)
    return outcome


def takes_cut(function: Any) -> bool:
    """Whether ``function`` takes the ``cut`` keyword (the readers gain it one at a time)."""
    return _takes_cut(getattr(function, "__func__", function))  # a bound method: its class's function


@lru_cache(maxsize=32)
def _takes_cut(function: Any) -> bool:
    try:
        return "cut" in inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False
