"""Where the Samaritan across-languages rule MIN_PAIRS comes from (not a test; run it to reproduce the figures).

Cochran's Q takes each language's variance as known; the Samaritan probe estimates it from the scenario
differences, so with few scenarios per language Q rejects a true null more often than alpha. This simulates the
level (normal scenario differences, the same mean in every language, a different spread per language) for
2 to 12 languages and prints it as a multiple of alpha:

    PYTHONPATH=src python tests/unit/languages/q_level_simulation.py

The Q statistic here is the closed form sum w_i (d_i - d_w)^2 with w_i = n_i / s_i^2, the statistic statsmodels'
``combine_effects(...).test_homogeneity()`` returns, vectorised so that 20,000 draws per cell run in seconds.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import chi2


def level(languages: int, scenarios: int, alpha: float, draws: int = 20_000, seed: int = 0) -> float:
    """Share of draws with Q above its chi-square critical value, under the null."""
    rng = np.random.default_rng(seed)
    spread = np.linspace(4.0, 12.0, languages)[None, :, None]
    d = rng.standard_normal((draws, languages, scenarios)) * spread
    mean, var = d.mean(2), d.var(2, ddof=1) / scenarios
    w = 1 / var
    pooled = (w * mean).sum(1) / w.sum(1)
    q = (w * (mean - pooled[:, None]) ** 2).sum(1)
    return float((q > chi2.ppf(1 - alpha, languages - 1)).mean())


if __name__ == "__main__":
    for alpha in (0.05, 0.01):
        for k in (2, 3, 6, 12):
            cells = [f"{n}: {level(k, n, alpha) / alpha:.2f}" for n in (10, 20, 30, 50, 103)]
            print(f"alpha {alpha:g}, {k:2d} languages, level / alpha by scenarios per language: " + "  ".join(cells))
