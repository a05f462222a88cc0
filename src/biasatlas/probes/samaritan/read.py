"""Samaritan answer reading: the probability rating (1-100) in each stored answer, or why there is none."""

from __future__ import annotations

import math

import pandas as pd

from biasatlas.parsing.numbers import RatingParser
from biasatlas.probes.samaritan.data import NAME
from biasatlas.store import Store


def outcomes(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with ``rating`` (float, NaN if unreadable) and ``parse_reason`` for every row.

    Rows without an answer keep their status as the reason ("pending", "failed"); answered rows
    that cannot be read keep the parser's reason. Nothing is dropped.
    """
    out = frame.copy()
    if out.empty:
        return out.assign(rating=pd.Series(dtype=float), parse_reason=pd.Series(dtype=object))
    parsers: dict[str, RatingParser] = {}
    ratings: list[float] = []
    reasons: list[str | None] = []
    for text, status, language in zip(out["text"], out["status"], out["language"], strict=True):
        if status != "answered":
            ratings.append(math.nan)
            reasons.append(str(status))
            continue
        parser = parsers.setdefault(language, RatingParser(language))
        result = parser.parse(text)
        ratings.append(math.nan if result.value is None else float(result.value))
        reasons.append(result.reason)
    out["rating"] = ratings
    out["parse_reason"] = reasons
    for column, default in (("temperature", 0.0), ("max_tokens", 0)):
        if column not in out.columns:
            out[column] = default
        out[column] = out[column].fillna(default)
    out["temperature"] = out["temperature"].astype(float)
    out["max_tokens"] = out["max_tokens"].astype(int)
    return out


def load_outcomes(store: Store) -> pd.DataFrame:
    """Every stored Samaritan answer (one row per model × prompt × sample), read."""
    return outcomes(store.frame(probe=NAME))
