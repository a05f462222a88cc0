"""Planted Samaritan designs for the unit tests (tests/helpers is on pytest's pythonpath: pyproject.toml).

Every phrasing is asked in every scenario x rephrasing; its rating is a scenario base, the rephrasing's
effect, the phrasing's true shift from the control and Gaussian noise, so a test knows the truth it plants.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

R_EFFECT = {1: 0.0, 2: 0.0, 3: 0.0, 4: 8.0}  # rephrasing 4 reads every scenario as 8 points kinder


def design(phrasings: dict[str, tuple[str, str, float]], n_scenarios: int = 40, noise: float = 1.0,
           seed: int = 0) -> pd.DataFrame:
    """One answered row per phrasing (name -> (group, category, true shift)), scenario and rephrasing."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(n_scenarios):
        base = 50 + (s * 7) % 30
        for r, effect in R_EFFECT.items():
            for phrasing, (group, category, shift) in phrasings.items():
                rows.append({
                    "model": "m", "language": "en", "temperature": 0.0, "max_tokens": 64,
                    "category": category, "group": group, "phrasing": phrasing, "scenario": f"s{s:03d}",
                    "rephrasing": r, "sample_index": 0, "status": "answered", "parse_reason": None,
                    "rating": base + effect + shift + float(rng.normal(0, noise)),
                })
    return pd.DataFrame(rows)


def unreadable(frame: pd.DataFrame, mask: pd.Series) -> pd.DataFrame:
    """``frame`` with the masked ratings made unreadable ('no number'), as the reader leaves them."""
    frame = frame.copy()
    frame.loc[mask, ["rating", "parse_reason"]] = [math.nan, "no number"]
    return frame
