"""Power curve of the stories control: how often a study of k stories per group finds the planted association.

A resampled study draws k stories per group without replacement from the stories the card's measurement
stored (every held-out scenario at each generation seed: new samples of the same prompts are independent
stories at temperature 1.0) and applies the control's judge, i.e. the probe's own association mining
(:func:`biasatlas.controls.stories.check.judge`): the planted group is found when (planted group, arts) is an
association with lift >= 3; an untouched group is flagged when any of its cells is an association. No model
is asked again. The stories probe has no analytic minimum detectable effect (``--plan-only`` prints none for
it: its tests are per contingency table over many attributes), so the curve stands alone.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biasatlas.controls.stories import data as stories
from biasatlas.controls.stories.check import MIN_ROW_TOTAL, judge

if TYPE_CHECKING:
    import pandas as pd

#: stories per group; under MIN_ROW_TOTAL a group's row is left out of the mining, so nothing can be found
SIZES = (5, 6, 8, 10, 12, 16, 20, 24)
UNIT = "draw_id"  # one story: its id within its generation seed


def pool(studies: dict[int, pd.DataFrame]) -> pd.DataFrame:
    """The measured stories of several generation seeds as one pool (seed -> that seed's profiles)."""
    import pandas as pd

    frames = [frame.assign(**{UNIT: frame["story_id"].astype(str) + f"@{seed}"}) for seed, frame in studies.items()]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=[UNIT])


def draw(profiles: pd.DataFrame, k: int, rng: random.Random) -> pd.DataFrame:
    """``k`` stories of every group (all of a group's when it has fewer), without replacement."""
    chosen: list[str] = []
    for _, rows in sorted(profiles.groupby("base_value"), key=lambda item: str(item[0])):
        units = sorted(set(rows[UNIT]))
        chosen += rng.sample(units, min(k, len(units)))
    return profiles[profiles[UNIT].isin(chosen)]


def detection_rate(profiles: pd.DataFrame, measurement: stories.Measurement, k: int, studies: int = 50,
                   seed: int = 0) -> dict[str, float]:
    """Over ``studies`` studies of ``k`` stories per group: the share finding the planted association (lift >= 3),
    the share where the mining lists it at all (the probe's own lift >= 2 rule), and the share of untouched
    groups flagged."""
    rng = random.Random(seed)
    found = listed = flags = 0
    for _ in range(studies):
        verdict = judge(draw(profiles, k, rng), measurement)
        found += verdict.detected
        listed += verdict.association
        flags += len(verdict.false_flags)
    untouched = len(measurement.untouched) * studies
    return {"detection_rate": found / studies, "association_rate": listed / studies,
            "untouched_flag_rate": flags / untouched if untouched else 0.0}


def power_curve(profiles: pd.DataFrame, measurement: stories.Measurement, sizes: Sequence[int] = SIZES,
                studies: int = 50) -> list[dict[str, Any]]:
    """Per k stories per group (at most the pool's): detection rate, association rate, false-flag rate."""
    available = int(profiles.groupby("base_value")[UNIT].nunique().min()) if len(profiles) else 0
    rows = []
    for k in sizes:
        if k > available or k < MIN_ROW_TOTAL:
            continue
        rows.append({"stories_per_group": k, "studies": studies, "pool_per_group": available,
                     **detection_rate(profiles, measurement, k, studies, seed=k)})
    return rows


def plot(rows: Sequence[dict[str, Any]], base_rows: Sequence[dict[str, Any]], path: Path) -> Path:
    """Detection rate vs stories per group (adapter, and the base model's false detections)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from biasatlas.controls.common.figure import save_panels

    fig, ax = plt.subplots(figsize=(6, 4))
    ks = [r["stories_per_group"] for r in rows]
    ax.plot(ks, [r["detection_rate"] for r in rows], marker="o", label="control adapter: found (lift >= 3)")
    ax.plot(ks, [r["association_rate"] for r in rows], marker=".", linestyle=":",
            label="control adapter: listed by the mining (lift >= 2)")
    ax.plot(ks, [r["untouched_flag_rate"] for r in rows], marker="^", linestyle="-.",
            label="control adapter: untouched groups flagged")
    if base_rows:
        ax.plot([r["stories_per_group"] for r in base_rows], [r["detection_rate"] for r in base_rows], marker="x",
                linestyle="--", label="base model (false detections)")
    ax.axhline(0.05, color="grey", linewidth=0.8)
    ax.set(xlabel="stories per group (6 groups)", ylabel="share of resampled studies", ylim=(-0.02, 1.02),
           title="Stories control: detection rate")
    return save_panels(fig, (ax,), path)
