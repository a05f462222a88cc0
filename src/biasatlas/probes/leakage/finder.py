"""The qualitative finder of paper 004 (section 4.2): traits a model holds that the target language's humans do
not, but a source language's humans do."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np
import pandas as pd


def find_leaked(
    model_matrix: pd.DataFrame,
    human: Mapping[str, pd.DataFrame],
    *,
    target: str,
    sources: Sequence[str],
    top_k: int = 5,
    weak: float = 10.0,
    strong: float = 20.0,
) -> pd.DataFrame:
    """Traits among a group's ``top_k`` in the target-language model (and above the group's mean model score)
    that target-language humans rate weak (<= ``weak``, or not at all: the group is unknown there) while a
    source language's humans rate them strong (>= ``strong``). Human scores are pole strengths on 0–50."""
    rows: list[dict[str, Any]] = []
    target_human = human.get(target)
    for group in model_matrix.columns:
        scores = model_matrix[group].dropna()
        if scores.empty:
            continue
        ranked = scores.sort_values(ascending=False)
        for rank, (trait, score) in enumerate(ranked.head(top_k).items(), start=1):
            if score < scores.mean():  # with few measured traits the top k can include weak ones
                continue
            h_target = np.nan if target_human is None else float(cast(float, target_human.at[trait, group]))
            if not (np.isnan(h_target) or h_target <= weak):
                continue
            for source in sources:
                if source == target or source not in human:
                    continue
                h_source = float(cast(float, human[source].at[trait, group]))
                if not np.isnan(h_source) and h_source >= strong:
                    rows.append({"target": target, "source": source, "group": group, "trait": trait,
                                 "model_score": float(score), "model_rank": rank,
                                 "human_target": h_target, "human_source": h_source})
    out = pd.DataFrame(rows)
    if out.empty:
        return pd.DataFrame(columns=["target", "source", "group", "trait", "model_score", "model_rank",
                                     "human_target", "human_source"])
    return out.sort_values(["group", "model_rank", "source"]).reset_index(drop=True)
