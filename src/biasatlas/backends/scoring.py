"""How choice mode turns option log-probabilities into probabilities: one rule for every backend.

The local backend and the HTTP backend (completions with echo) both call this, so the same model
gives the same option probabilities whichever way it is reached (docs/methods.md, "Choice mode").
"""

from __future__ import annotations

import math
from typing import Literal

#: sum of an option's token log-probabilities (the default), or their mean per token
ChoiceNorm = Literal["sum", "mean"]


def option_probabilities(
    logprobs: dict[str, float], tokens: dict[str, int], norm: ChoiceNorm = "sum"
) -> dict[str, float]:
    """Softmax over the options of their scores: summed log-probabilities, or their mean per token."""
    scores = logprobs if norm == "sum" else {o: v / tokens[o] for o, v in logprobs.items()}
    top = max(scores.values())
    unnorm = {o: math.exp(v - top) for o, v in scores.items()}
    total = sum(unnorm.values())
    return {o: v / total for o, v in unnorm.items()}
