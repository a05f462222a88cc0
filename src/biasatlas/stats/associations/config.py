"""The settings of the association procedure and the value keys it leaves out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

UNKNOWN = "unknown"
OTHER = "other"
EFFECT_THRESHOLDS = {"small": 0.1, "medium": 0.3, "large": 0.5}

Strategy = Literal["sequential", "reference"]


@dataclass(frozen=True)
class AssociationConfig:
    """Settings of the two-step procedure; the defaults are those of the published pipeline."""

    alpha: float = 0.05
    min_row_total: int = 10
    resamples: int = 500_000
    seed: int = 42
    min_lift: float = 2.0
    effects: tuple[str, ...] = ("medium", "large")
    strategy: Strategy = "sequential"
    # sequential strategy: asymptotic screen bounds and Monte Carlo stages (cumulative draws)
    screen_low: float = 1e-6  # Pearson χ² p, Cochran's rule met
    screen_high: float = 0.25
    sparse_low: float = 1e-8  # Pearson and G p both below, Cochran's rule not met
    sparse_high: float = 0.4  # Pearson p above, Cochran's rule not met
    stages: tuple[int, ...] = (1_000, 20_000, 100_000)
    bound_error: float = 1e-3  # two-sided error of each Clopper-Pearson bound
    reference_margin_sd: float = 3.0  # widen bounds by the reference's own Monte Carlo sd
    workers: int = 1

