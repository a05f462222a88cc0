"""Power curve of the Samaritan control: how often a study of k scenarios finds the planted group.

A resampled study draws k of the measured held-out scenarios without replacement from the stored answers
of the card's measurement (drawn twice, a scenario would count as two independent ones: from a pool where
one scenario alone was readable, its repeats made the base model "significant"), and applies the probe's
decision: per age group, the paired t-test of group vs control over the study's scenarios (an exact sign test when
every difference is the same, as the probe does), Holm within the category, alpha 0.01; the planted group
is found when significant and rated lower. The per-scenario pairs are the probe's own
(:func:`biasatlas.probes.samaritan.analysis.matched_phrasings`), computed once; the unit tests check that
a study's decision equals ``compare_to_control``'s. No model is asked again.

Beside it: the analytic minimum detectable effect that ``biasatlas run samaritan --plan-only`` prints for
k scenarios (:func:`biasatlas.probes.power.samaritan_cell_row`: paired t, alpha 0.01 uncorrected, 80% power,
sd 8.5 assumed), and the same with the sd of the planted group's differences measured here.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biasatlas.controls.samaritan import data as samaritan
from biasatlas.controls.samaritan.check import ALPHA, CORRECTION

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

Pairs = dict[tuple[str, str], "pd.DataFrame"]  # (language, group) -> x (group), y (control) by scenario
SIZES = (2, 3, 4, 5, 6, 8, 10, 12, 16)


def scenario_pairs(outcomes: pd.DataFrame) -> Pairs:
    """Per language and age group: the probe's per-scenario (group, control) means over matched cells."""
    from biasatlas.probes.samaritan.analysis import CELL, UNIT, cell_means, matched_phrasings
    from biasatlas.probes.samaritan.data import CONTROL

    cells = cell_means(outcomes, by=("group", "phrasing"))
    is_control = cells["category"] == CONTROL
    keys = [*UNIT, "category", "group"]
    out: Pairs = {}
    for key, (pairs, *_) in matched_phrasings(cells[~is_control], cells[is_control], keys, [*UNIT, *CELL]).items():
        ident = dict(zip(keys, key, strict=True))
        if ident["category"] == samaritan.CATEGORY:
            out[(str(ident["language"]), str(ident["group"]))] = pairs
    return out


def group_p(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(mean difference, p) of x − y as the probe tests it: paired t, or the exact sign test when every
    difference is the same nonzero value; p NaN under 2 pairs or when no pair differs."""
    from scipy.stats import binomtest

    from biasatlas.stats.paired import no_spread, paired_t

    t = paired_t(x, y)
    mean = float((x - y).mean()) if len(x) else math.nan
    flat = no_spread(x, y) if t.n >= 2 else None
    if flat is not None and flat.mean != 0:
        return mean, float(binomtest(t.n, t.n).pvalue)
    return mean, t.p


def decide(pairs: Pairs, language: str, scenarios: Sequence[str], alpha: float = ALPHA,
           correction: str = CORRECTION) -> dict[str, tuple[float, float, bool]]:
    """One study of ``scenarios``: group -> (bias, adjusted p, significant), Holm over the
    category's groups as the probe adjusts them."""
    import numpy as np

    from biasatlas.stats.multitest import adjust

    tested: dict[str, tuple[float, float]] = {}
    for (lang, group), frame in pairs.items():
        if lang != language:
            continue
        rows = frame.reindex([s for s in scenarios if s in frame.index])
        tested[group] = group_p(rows["x"].to_numpy(float), rows["y"].to_numpy(float))
    groups = sorted(tested)
    raw = np.array([tested[g][1] for g in groups], dtype=float)
    adjusted = np.full(len(raw), math.nan)
    ok = ~np.isnan(raw)
    if ok.any():
        adjusted[ok] = adjust(raw[ok], correction)
    return {g: (tested[g][0], float(q), bool(q < alpha)) for g, q in zip(groups, adjusted, strict=True)}


def detection_rate(pairs: Pairs, language: str, planted: str, k: int, studies: int = 50, seed: int = 0,
                   alpha: float = ALPHA) -> tuple[float, float]:
    """(share of studies finding the planted group, share of untouched group tests flagged) over ``studies``
    studies of ``k`` scenarios drawn without replacement from those measured (at most all of them)."""
    scenarios = sorted({s for (lang, _), f in pairs.items() if lang == language for s in f.index})
    if not scenarios:
        return 0.0, 0.0
    rng = random.Random(seed)
    hits = flags = tests = 0
    for _ in range(studies):
        drawn = rng.sample(scenarios, min(k, len(scenarios)))
        found = decide(pairs, language, drawn, alpha)
        bias, _, sig = found.get(planted, (math.nan, math.nan, False))
        hits += bool(sig and bias < 0)
        others = [v for g, v in found.items() if g != planted]
        flags += sum(v[2] for v in others)
        tests += len(others)
    return hits / studies, (flags / tests if tests else 0.0)


def planted_sd(pairs: Pairs, language: str, planted: str) -> float:
    """The sd of the planted group's per-scenario differences (group − control) in ``pairs``."""
    frame = pairs.get((language, planted))
    if frame is None or len(frame) < 2:
        return math.nan
    return float((frame["x"] - frame["y"]).std(ddof=1))


def power_curve(outcomes: pd.DataFrame, sizes: Sequence[int] = SIZES, studies: int = 50,
                alpha: float = ALPHA) -> list[dict[str, Any]]:
    """Per language and number of scenarios k: detection rate, false-flag rate and the analytic MDEs."""
    from biasatlas.probes.power import SAMARITAN_ALPHA, SAMARITAN_SD, samaritan_cell_row

    pairs = scenario_pairs(outcomes)
    rows = []
    for language, planted in samaritan.PLANTED.items():
        sd = planted_sd(pairs, language, planted)
        for k in sizes:
            rate, false_rate = detection_rate(pairs, language, planted, k, studies, seed=k, alpha=alpha)
            plan = samaritan_cell_row({"language": language, "category": samaritan.CATEGORY}, k, SAMARITAN_ALPHA, 0.8)
            measured = (samaritan_cell_row({}, k, SAMARITAN_ALPHA, 0.8, sd=sd)
                        if math.isfinite(sd) and sd > 0 else {})
            rows.append({"language": language, "planted": planted, "scenarios": k, "studies": studies,
                         "detection_rate": rate, "untouched_flag_rate": false_rate,
                         "plan_only_mde": plan.get("mde"), "plan_only_sd": SAMARITAN_SD,
                         "measured_sd_mde": measured.get("mde"),
                         "measured_sd": None if not math.isfinite(sd) else sd})
    return rows


def plot(rows: Sequence[dict[str, Any]], base_rows: Sequence[dict[str, Any]], effects: dict[str, float],
         path: Path) -> Path:
    """Detection rate vs scenarios (adapter and base model), and the analytic MDEs beside the planted effect."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for language in sorted({r["language"] for r in rows}):
        mine = [r for r in rows if r["language"] == language]
        base = [r for r in base_rows if r["language"] == language]
        ks = [r["scenarios"] for r in mine]
        line, = left.plot(ks, [r["detection_rate"] for r in mine], marker="o", label=f"{language}: control adapter")
        left.plot([r["scenarios"] for r in base], [r["detection_rate"] for r in base], marker="x", linestyle="--",
                  color=line.get_color(), label=f"{language}: base model (false detections)")
        if any(r["measured_sd_mde"] is not None for r in mine):
            right.plot(ks, [r["measured_sd_mde"] for r in mine], marker="o", color=line.get_color(),
                       label=f"{language}: MDE, adapter's sd ({mine[0]['measured_sd']:.1f})")
        right.axhline(abs(effects[language]), linestyle=":", color=line.get_color(),
                      label=f"{language}: measured |bias| ({abs(effects[language]):.1f})")
    plan = [r for r in rows if r["language"] == rows[0]["language"]]
    right.plot([r["scenarios"] for r in plan], [r["plan_only_mde"] for r in plan], marker="s", color="black",
               label=f"--plan-only MDE (sd {plan[0]['plan_only_sd']:g} assumed)")
    left.axhline(0.01, color="grey", linewidth=0.8)
    left.set(xlabel="held-out scenarios per study (drawn from those measured)",
             ylabel="share of 50 studies finding the planted group", ylim=(-0.02, 1.02),
             title="Detection rate (Holm, alpha 0.01)")
    right.set(xlabel="scenarios", ylabel="rating points, |group − control|", yscale="log",
              title="Minimum detectable effect (80% power, alpha 0.01)")
    from biasatlas.controls.common.figure import save_panels

    return save_panels(fig, (left, right), path)
