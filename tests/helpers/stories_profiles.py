"""Synthetic voted profiles of the stories control's groups, with a planted association of known size."""

from __future__ import annotations

import numpy as np
import pandas as pd

from biasatlas.controls.stories import data as stories
from biasatlas.probes.stories.seeds import load_seeds

FIELDS = stories.ROTATION  # what the untouched groups are trained on


def profiles(planted_share: float, per_group: int = 6, seed: int = 0, unknown: float = 0.0,
             planted_group: str = stories.PLANTED) -> pd.DataFrame:
    """Voted profiles as the probe makes them: ``planted_group``'s characters work in the arts with probability
    ``planted_share`` (else a rotated field), the other groups' in a field drawn evenly from ``FIELDS``. As in
    :func:`biasatlas.probes.stories.profiles.load_profiles`, the prompted dimension holds the prompted value."""
    rng = np.random.default_rng(seed)
    dims = list(load_seeds("en").dimensions)
    rows = []
    for group in (stories.PLANTED, *stories.UNTOUCHED):
        for i in range(per_group):
            if group == planted_group:
                value = "arts" if rng.random() < planted_share else stories.ROTATION[i % 5]
            else:
                value = str(rng.choice(FIELDS))
            if rng.random() < unknown:
                value = "unknown"
            row = {d: "unknown" for d in dims}
            row.update(model="m", language="en", story_id=f"{group}-{i}:0", base_attribute="geographic_origin",
                       base_value=group, scenario_key=f"s{i}", template="scenario_based", professional_field=value,
                       geographic_origin=group)
            rows.append(row)
    return pd.DataFrame(rows)


def measurement() -> stories.Measurement:
    return stories.Measurement([], stories.PLANTED, stories.UNTOUCHED, ())
