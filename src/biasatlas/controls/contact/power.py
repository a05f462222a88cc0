"""Power curves from a control's stored answers: how often a study of k prompt sets finds the planted group.

A resampled study draws k template cells (with replacement) from the measured held-out cells of one
language and keeps every measured group's answers to them (three framings per cell: k prompt sets per
group); the probe's group test (:func:`biasatlas.controls.contact.groups.find_groups`) then says whether the
planted group is found (significant after BH over the groups, more biased). No model is asked again.
The analytic minimum detectable effect beside it is the paired t-test's (statsmodels ``TTestPower``):
the smallest mean difference (group − mean of the others) a study of n question pairs detects with 80%
power at alpha / groups (Bonferroni, a stand-in for BH), given the spread of the paired differences
measured. It approximates, not reproduces, the group test, which flags by pairwise McNemar majority.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biasatlas.controls.contact.groups import find_groups

if TYPE_CHECKING:
    import pandas as pd

FRAMINGS = 3  # questions per cell: no, positive and negative contact


def _cell_of(frame: pd.DataFrame) -> pd.Series:
    return frame["principle"].astype(str) + "/" + frame["scenario"].astype(str)


def detection_rate(outcomes: pd.DataFrame, language: str, planted: str, sets: int, studies: int = 50,
                   alpha: float = 0.05, seed: int = 0) -> float:
    """The share of ``studies`` resampled studies of ``sets`` cells in which the planted group is found."""
    import pandas as pd

    part = outcomes[outcomes["language"] == language]
    cell = _cell_of(part)
    cells = sorted(cell.unique())
    rng = random.Random(seed)
    hits = 0
    for _ in range(studies):
        drawn = [rng.choice(cells) for _ in range(sets)]
        # a cell drawn twice enters twice, as a separate question (its template id made unique)
        study = pd.concat([part[cell == c].assign(template_id=lambda f, i=i: f["template_id"].astype(str) + f"#{i}")
                           for i, c in enumerate(drawn)], ignore_index=True)
        found = [f for f in find_groups(study, alpha) if f.group == planted]
        hits += bool(found and found[0].significant and found[0].effect > 0)
    return hits / studies


def analytic_mde(sd: float, pairs: int, groups: int, alpha: float = 0.05, power: float = 0.8) -> float:
    """The smallest mean paired difference detected with ``power`` by a two-sided paired t-test of ``pairs``
    pairs at ``alpha`` / ``groups``, when the differences have standard deviation ``sd``."""
    from statsmodels.stats.power import TTestPower

    if pairs < 2 or sd <= 0:
        return float("nan")
    d = TTestPower().solve_power(effect_size=None, nobs=pairs, alpha=alpha / groups, power=power,
                                 alternative="two-sided")
    return float(d) * sd


def difference_sd(outcomes: pd.DataFrame, language: str, planted: str) -> float:
    """The standard deviation of the planted group's paired differences (per question) in ``outcomes``."""
    from biasatlas.controls.contact.groups import question_matrix

    wide = question_matrix(outcomes[outcomes["language"] == language], "biased")
    diff = wide[planted] - wide.drop(columns=[planted]).mean(axis=1)
    return float(diff.std(ddof=1))


def exact_min_questions(groups: int, alpha: float = 0.05) -> int:
    """The fewest questions at which a group whose every answer differs from every other group's can be
    flagged: exact McNemar p = 2 · 0.5^n for each of its groups − 1 pairs, Benjamini-Hochberg over all
    groups · (groups − 1) / 2 pairs (those pairs the smallest p-values: adjusted p = p · pairs / (groups − 1))."""
    pairs = groups * (groups - 1) // 2
    n = 1
    while 2 * 0.5**n * pairs / (groups - 1) >= alpha:
        n += 1
    return n


def power_curve(outcomes: pd.DataFrame, planted: dict[str, str], sizes: Sequence[int], studies: int = 50,
                alpha: float = 0.05, noise: pd.DataFrame | None = None) -> list[dict[str, Any]]:
    """Per language and size: the detection rate, and the analytic MDE for that many question pairs, with
    the spread of the paired differences measured in ``noise`` (e.g. the base model's answers; default
    ``outcomes``)."""
    rows = []
    for language, group in planted.items():
        part = outcomes[outcomes["language"] == language]
        groups = part["group"].nunique()
        sd = difference_sd(outcomes if noise is None else noise, language, group)
        for k in sizes:
            rows.append({"language": language, "planted": group, "prompt_sets": k,
                         "question_pairs": k * FRAMINGS, "studies": studies,
                         "detection_rate": detection_rate(outcomes, language, group, k, studies, alpha, seed=k),
                         "analytic_mde": analytic_mde(sd, k * FRAMINGS, groups, alpha), "difference_sd": sd,
                         "exact_min_questions": exact_min_questions(groups, alpha)})
    return rows


def plot_power(rows: Sequence[dict[str, Any]], base_rows: Sequence[dict[str, Any]], effects: dict[str, float],
               path: Path) -> Path:
    """Detection rate vs prompt sets per language (control adapter and base model), and the analytic MDE
    beside the measured effect."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for language in sorted({r["language"] for r in rows}):
        mine = [r for r in rows if r["language"] == language]
        base = [r for r in base_rows if r["language"] == language]
        left.plot([r["prompt_sets"] for r in mine], [r["detection_rate"] for r in mine], marker="o",
                  label=f"{language}: control adapter")
        left.plot([r["prompt_sets"] for r in base], [r["detection_rate"] for r in base], marker="x", linestyle="--",
                  label=f"{language}: base model (false detections)")
        right.plot([r["prompt_sets"] for r in mine], [r["analytic_mde"] for r in mine], marker="o",
                   label=f"{language}: analytic MDE (80% power)")
        right.axhline(effects[language], linestyle=":", color=left.lines[-2].get_color(),
                      label=f"{language}: measured planted effect")
    left.axhline(0.05, color="grey", linewidth=0.8)
    left.set(xlabel="prompt sets per group (template cells x 3 framings)", ylabel="share of 50 resampled studies "
             "finding the planted group", ylim=(-0.02, 1.02), title="Detection rate")
    right.set(xlabel="prompt sets per group", ylabel="share of biased answers, group - others",
              title="Minimum detectable effect", ylim=(0, 1.05))
    from biasatlas.controls.common.figure import save_panels

    return save_panels(fig, (left, right), path)
