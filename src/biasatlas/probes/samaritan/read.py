"""Samaritan answer reading: the probability rating (1-100) in each stored answer, or why there is none."""

from __future__ import annotations

import math

import pandas as pd

from biasatlas.parsing.numbers import RatingParser
from biasatlas.parsing.truncation import cut_at_limit
from biasatlas.probes.samaritan.data import NAME
from biasatlas.records import Outcome
from biasatlas.store import Store


def outcomes(frame: pd.DataFrame, store: Store | None = None) -> pd.DataFrame:
    """The frame with ``rating`` (float, NaN if unreadable) and ``parse_reason`` for every row.

    Rows without an answer keep their status as the reason ("pending", "failed"); answered rows
    that cannot be read keep the parser's reason ("cut": stopped at the token limit, ``finish_reason``
    "length", before its verdict was complete). Nothing is dropped. With the study's ``store``, its
    recorded reading applies (``biasatlas.readers``: rules, a judge, or both); ``reader`` names who read each
    answer, ``rules_label`` / ``judge_label`` what each reader read.
    """
    from biasatlas.readers.merge import merge

    out = frame.copy()
    if out.empty:
        return out.assign(rating=pd.Series(dtype=float), parse_reason=pd.Series(dtype=object),
                          reader=pd.Series(dtype=object))
    parsers: dict[str, RatingParser] = {}
    parsed: list[Outcome] = []
    for text, status, language, cut in zip(out["text"], out["status"], out["language"], cut_at_limit(out),
                                           strict=True):
        if status != "answered":
            parsed.append(Outcome(reason=str(status)))
            continue
        parser = parsers.setdefault(language, RatingParser(language))
        parsed.append(parser.parse(text, cut=cut))  # a number at the token limit is never a rating
    fields = ("key", "status", "text", "mode", "option_probs")
    rows = [dict(zip(fields, values, strict=True)) for values in zip(*(out[c].tolist() for c in fields), strict=True)]
    merged = merge(store, NAME, rows, parsed)
    out["rating"] = [math.nan if o.value is None else float(o.value) for o in merged.outcomes]
    out["parse_reason"] = [o.reason for o in merged.outcomes]
    out["reader"] = merged.readers
    out["rules_label"] = merged.rules_labels
    out["judge_label"] = merged.judge_labels
    for column, default in (("temperature", 0.0), ("max_tokens", 0)):
        if column not in out.columns:
            out[column] = default
        out[column] = out[column].fillna(default)
    out["temperature"] = out["temperature"].astype(float)
    out["max_tokens"] = out["max_tokens"].astype(int)
    return out


def load_outcomes(store: Store) -> pd.DataFrame:
    """Every stored Samaritan answer (one row per model × prompt × sample), read."""
    return outcomes(store.frame(probe=NAME), store)
