"""Simulated studies of the contact group disparity on the real plans: a planted group, a null, a language-wide shift.

The plan of one language and axis is built once and read by the probe's own question logic
(``disparity.question_rows``: texts a group is asked alike are one question, counted once); each simulated study
then answers every (group, question) once: biased with a probability that differs between scenario x action cells
and between studies, plus ``shift`` for the planted group (or for every group: a language-wide shift). The probe's
own tests (``step_down`` over ``binary_groups``, Holm) decide which groups differ.

    PYTHONPATH=src python tests/helpers/disparity_plans.py [--studies 200]
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import binom

import biasatlas
from biasatlas.probes.contact.disparity import question_rows
from biasatlas.stats.disparity import binary_groups, group_power, step_down

ALPHA = 0.05


@dataclass(frozen=True)
class GroupPlan:
    """Questions × groups of one language's plan for one axis, each question's scenario x action cell and unit."""

    language: str
    groups: list[str]
    questions: np.ndarray
    asked: np.ndarray  # questions × groups: True where the group is asked the question
    cell: np.ndarray  # cell code per question
    units: np.ndarray  # no-contact question per question


def group_plan(language: str, axis: str, groups: int | None = None) -> GroupPlan:
    """The plan's structure; ``groups``: keep the first that many groups of the axis (sorted)."""
    prompts = biasatlas.plan("contact", languages=[language], axes=[axis])
    frame = pd.DataFrame([{**p.meta, "key": p.messages[0].content, "sample_index": 0, "biased": 0.0,
                           "p_biased": None} for p in prompts])
    keep = sorted(frame["group"].unique())[:groups]
    frame = frame[frame["group"].isin(keep)]
    rows = question_rows(frame)
    wide = rows.pivot(index="question", columns="group", values="decision")
    wide = wide[wide.notna().sum(axis=1) >= 2]  # as the probe: a question enters with the groups asked it
    cells = frame.assign(question=frame["template_set"].astype(str) + "|" + frame["template_id"].astype(str))
    scenario = dict(zip(cells["question"], cells["scenario"].astype(str) + "|" + cells["action"].astype(str),
                        strict=False))
    per_question = [scenario["|".join(str(q).split("|")[:2])] for q in wide.index]
    codes = np.unique(per_question, return_inverse=True)[1]
    units = rows.groupby("question")["unit"].first().reindex(wide.index).astype(str).to_numpy()
    return GroupPlan(language, [str(g) for g in wide.columns], wide.index.to_numpy(), wide.notna().to_numpy(),
                     codes, units)


def one_study(plan: GroupPlan, rng: np.random.Generator, planted: int | None, shift: float,
              everyone: bool = False) -> set[str]:
    """The groups found to differ (Holm-adjusted p < alpha) in one simulated study."""
    p_cell = rng.uniform(0.1, 0.8, plan.cell.max() + 1)
    p = np.repeat(p_cell[plan.cell][:, None], len(plan.groups), 1)
    if everyone:
        p = p + shift
    elif planted is not None:
        p[:, planted] += shift
    table = np.where(plan.asked, (rng.random(p.shape) < np.clip(p, 0, 1)).astype(float), np.nan)
    results = step_down(table, plan.groups, plan.units, ALPHA, binary_groups)
    return {r.group for r in results if r.p_adj < ALPHA}


def rates(plan: GroupPlan, studies: int, planted: int | None, shift: float, everyone: bool = False,
          seed: int = 0) -> tuple[int, int]:
    """(studies where the planted group was found, studies where any other group was found)."""
    rng = np.random.default_rng(seed)
    found = false = 0
    target = plan.groups[planted] if planted is not None else None
    for _ in range(studies):
        flagged = one_study(plan, rng, planted, shift, everyone)
        found += target in flagged
        false += bool(flagged - {target})
    return found, false


def expected_power(plan: GroupPlan, shift: float) -> float:
    """The power :func:`group_power` states for the plan (the cells' mean rate, 0.45, as the base)."""
    return group_power(len(plan.questions), len(plan.groups), 0.45, shift, ALPHA)


def upper(studies: int, rate: float, level: float = 0.99) -> int:
    return int(binom.ppf(level, studies, rate))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--studies", type=int, default=200)
    args = parser.parse_args()
    for language, axis, groups in (("de", "religion", None), ("fr", "sexual_orientation", 10), ("en", "nonce", None)):
        plan = group_plan(language, axis, groups)
        for shift in (0.10, 0.20):
            found, false = rates(plan, args.studies, 0, shift)
            print(f"{language} {axis} ({len(plan.groups)} groups, {len(plan.questions)} questions, "
                  f"{len(set(plan.units))} units) +{shift:.2f}: found {found / args.studies:.3f} "
                  f"(expected {expected_power(plan, shift):.3f}), others flagged {false / args.studies:.3f}")
        _, false = rates(plan, args.studies, None, 0.0)
        print(f"  null: any group flagged {false / args.studies:.3f}")
        _, false = rates(plan, args.studies, None, 0.15, everyone=True)
        print(f"  language-wide +0.15: any group flagged {false / args.studies:.3f}")


if __name__ == "__main__":
    main()
