"""A mean probability's interval stays on the probability scale (the t interval of three values can run from
-0.78 to 1.51): where it leaves [0, 1], the table gives Wilson's on the mean and n, as the figures do, and says
which interval each row has."""

from __future__ import annotations

import numpy as np
import pandas as pd
from statsmodels.stats.proportion import proportion_confint

from biasatlas.probes.contact.analysis import probability_table
from biasatlas.stats.proportions import bounded_mean_interval, mean_interval


def test_an_interval_inside_the_scale_is_the_t_interval() -> None:
    values = np.array([0.40, 0.45, 0.50, 0.55, 0.60])
    assert bounded_mean_interval(values) == (*mean_interval(values), "t")


def test_an_interval_that_leaves_the_scale_is_wilson_on_the_mean_and_n() -> None:
    values = np.array([0.1, 0.1, 0.9])
    t_mean, t_low, t_high = mean_interval(values)
    assert t_low < 0 or t_high > 1
    mean, low, high, method = bounded_mean_interval(values)
    a, b = proportion_confint(mean * 3, 3, alpha=0.05, method="wilson")
    assert (mean, low, high, method) == (t_mean, float(a), float(b), "wilson")
    assert 0 <= low <= mean <= high <= 1


def test_the_table_never_shows_a_probability_interval_off_its_scale() -> None:
    rng = np.random.default_rng(3)
    rows = []
    for prompt in range(12):
        for contact in ("none", "positive"):
            p = rng.choice([0.01, 0.02, 0.99])
            rows.append({"model": "fake", "mode": "choice", "language": "en", "scale": "certainty",
                         "contact": contact, "prompt_id": f"{contact}-{prompt % 3}-{prompt}", "p_biased": p})
    table = probability_table(pd.DataFrame(rows), ["scale", "contact"])
    assert ((table["ci_low"] >= 0) & (table["ci_high"] <= 1)).all()
    assert set(table["ci_method"]) <= {"t", "wilson"}
