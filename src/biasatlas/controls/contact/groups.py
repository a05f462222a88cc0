"""Which group stands out: each group against every other group on the same questions.

The contact design asks every group the same questions (template cell × framing), so two groups'
answers pair by question. Every pair of groups gets an exact McNemar test on the biased decisions;
the p-values of all pairs of a language are adjusted together (Benjamini-Hochberg by default). A
group is flagged when it differs significantly, in one direction, from more than half of the other
groups: one planted group differs from all the others, while an untouched group differs only from
the planted one. (A reference like "the median of the others" is biased itself for 0/1 answers, and
"the mean of the others" carries the planted group's effect into every untouched group's.)

The effect reported for a group is the mean over questions of its share of biased answers minus the
mean share of the other groups, with a paired t interval (scipy): for the planted group among
untouched ones, exactly the planted difference.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

#: the columns that make two prompts the same question for different groups
QUESTION = ("language", "template_set", "template_id", "scale", "action", "contact")


@dataclass(frozen=True)
class GroupFinding:
    """One group's paired difference from the other groups' median, with its interval and test."""

    language: str
    group: str
    n: int
    effect: float  # mean of group − median of the other groups (share of biased answers by default)
    ci_low: float
    ci_high: float
    p: float  # the paired t-test of the effect (unadjusted)
    p_adj: float  # the majority rule's p: the adjusted McNemar p of the deciding pair
    significant: bool
    direction: str  # "more biased", "less biased" or "none" (not significant)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def question_matrix(outcomes: pd.DataFrame, value: str = "p_biased") -> pd.DataFrame:
    """Questions × groups: the mean ``value`` of each group's answers to each question (samples averaged)."""
    import pandas as pd

    keys = [c for c in QUESTION if c in outcomes.columns]
    values = pd.to_numeric(outcomes[value], errors="coerce")
    frame = outcomes.assign(**{value: values})
    return frame.groupby([*keys, "group"])[value].mean().unstack("group")


def _pair_tests(wide: pd.DataFrame, alpha: float, correction: str) -> dict[tuple[str, str], tuple[float, float]]:
    """(group, other) -> (adjusted McNemar p, mean difference group − other), for every ordered pair."""
    import numpy as np

    from biasatlas.stats.multitest import adjust
    from biasatlas.stats.paired import mcnemar_paired

    groups = [str(g) for g in wide.columns]
    pairs = [(a, b) for i, a in enumerate(groups) for b in groups[i + 1:]]
    raw = []
    for a, b in pairs:
        res = mcnemar_paired(wide[b] > 0.5, wide[a] > 0.5, alpha)  # effect: share biased, a − b
        both = wide[[a, b]].dropna()
        raw.append((res.p if (both[a] != both[b]).any() else 1.0, float((both[a] - both[b]).mean())))
    adjusted: list[float] = list(adjust(np.array([p for p, _ in raw], dtype=float), correction)) if raw else []
    out: dict[tuple[str, str], tuple[float, float]] = {}
    for (a, b), (_, diff), q in zip(pairs, raw, adjusted, strict=True):
        out[(a, b)] = (float(q), diff)
        out[(b, a)] = (float(q), -diff)
    return out


def find_groups(outcomes: pd.DataFrame, alpha: float = 0.05, correction: str = "bh",
                value: str = "biased") -> list[GroupFinding]:
    """Every group of every language: flagged when it differs from most other groups (see the module)."""
    from biasatlas.stats.paired import paired_mean_difference

    found: list[GroupFinding] = []
    for language, part in outcomes.groupby("language", sort=True):
        wide = question_matrix(part, value)
        wide.columns = [str(c) for c in wide.columns]
        if wide.shape[1] < 3:
            continue  # a majority of one other group is no reference
        pairs = _pair_tests(wide, alpha, correction)
        for group in wide.columns:
            others = [g for g in wide.columns if g != group]
            res = paired_mean_difference(wide[group].to_numpy(float), wide[others].mean(axis=1).to_numpy(float),
                                         alpha, label=f"{value}: group − mean of the other groups")
            more = sorted(pairs[(group, o)][0] for o in others if pairs[(group, o)][1] > 0)
            less = sorted(pairs[(group, o)][0] for o in others if pairs[(group, o)][1] < 0)
            need = len(others) // 2 + 1  # more than half of the other groups
            # the group's p: the need-th smallest adjusted p of one direction (significant iff a majority is)
            p_more = more[need - 1] if len(more) >= need else 1.0
            p_less = less[need - 1] if len(less) >= need else 1.0
            q = min(p_more, p_less)
            sig = bool(q < alpha)
            direction = "none" if not sig else ("more biased" if p_more <= p_less else "less biased")
            found.append(GroupFinding(str(language), group, res.n, res.effect, res.ci_low, res.ci_high, res.p,
                                      float(q), sig, direction))
    return found


def flagged(findings: Sequence[GroupFinding], language: str, exclude: str) -> list[GroupFinding]:
    """The significant groups of ``language`` other than ``exclude``."""
    return [f for f in findings if f.language == language and f.group != exclude and f.significant]
