"""Simulated studies on a probe's real plan for the group test of reading failures.

:func:`plan_outcomes` turns the plan's prompts into an outcomes frame (one model, generate mode, every answer
read); :func:`plant` makes answers fail: each question (what the probe's test stratifies by) gets its own
failure probability, the same for every group, times ``planted[group]`` for a planted group. A text several
prompts share is one answer and fails or not as one.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import pandas as pd

import biasatlas
from biasatlas.readers.failures import QUESTION, VALUE, joined


def plan_outcomes(probe: str, language: str, **config: Any) -> pd.DataFrame:
    rows = []
    for p in biasatlas.plan(probe, languages=[language], **config):
        text = p.messages[-1].content
        rows.append({**p.meta, "model": "m", "mode": "generate", "language": p.language, "status": "answered",
                     "key": hashlib.sha256(text.encode()).hexdigest()[:16], "sample_index": 0})
    frame = pd.DataFrame(rows)
    value, reason = VALUE[probe]
    frame[value] = "affirmative" if probe == "contact" else 50.0
    frame[reason] = None
    return frame


def question_rates(questions: pd.Series, rng: np.random.Generator, mean: float) -> pd.Series:
    """A failure probability per question, varying between questions (Beta with the given mean)."""
    unique = questions.unique()
    return pd.Series(rng.beta(1.0, (1 - mean) / mean, len(unique)), index=unique)


def questions(frame: pd.DataFrame, probe: str) -> pd.Series:
    """Each row's question as the probe's test stratifies (a shared answer: all its prompts' questions)."""
    own = joined(frame, QUESTION[probe])
    return own.groupby(frame["key"]).transform(lambda q: " & ".join(sorted(set(q))))


def plant(frame: pd.DataFrame, probe: str, rng: np.random.Generator, *, mean: float, kind: str = "refusal",
          planted: dict[str, float] | None = None, question: pd.Series | None = None) -> pd.DataFrame:
    """A copy of ``frame`` whose answers fail (reason ``kind``) with their question's probability, scaled for
    the groups of ``planted`` (``question``: :func:`questions`, computed once by a caller that loops)."""
    question = questions(frame, probe) if question is None else question
    rates = question_rates(question, rng, mean)
    p = question.map(rates).to_numpy() * frame["group"].map(planted or {}).fillna(1.0).to_numpy()
    draws = pd.Series(rng.random(len(frame)), index=frame.index).groupby(frame["key"]).transform("first")
    failed = draws.to_numpy() < np.minimum(p, 1.0)  # a shared text: one draw, one question, one group
    out = frame.copy()
    value, reason = VALUE[probe]
    out.loc[failed, value] = None if probe == "contact" else np.nan
    out.loc[failed, reason] = kind
    return out
