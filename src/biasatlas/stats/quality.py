"""Quality flags of a test or a headline cell: computed from the data, never written by hand.

Each flag is a short code with a sentence that says why. The rules on the number of units are
derived from the level alpha, not chosen: the smallest number of units at which the exact test of
the same pairs could reach p < alpha at all (see :func:`min_units`). Below it an interval is not a
finding; the overview shows the flag instead of the interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

#: above these shares a cell is flagged (the same 20% as the validity tables' warning)
UNREADABLE_LIMIT = 0.20
REFUSAL_LIMIT = 0.20
#: one option (or one rating) in at least this share of the readable answers: decisions cannot move
ONE_OPTION_LIMIT = 0.90

#: flag codes, in the order they are shown, with what each means
FLAGS: dict[str, str] = {
    "not_tested": "the test could not be computed (the reason follows)",
    "too_few_units": "fewer units than the test needs to reach p < alpha (the rule per test is in the methods)",
    "one_option": "one option (or one rating) in >= 90% of the readable answers: decisions cannot move",
    "unreadable": "more than 20% of the answers could not be read",
    "refusals": "more than 20% of the answers are refusals",
    "cut_at_limit": "more than 20% of the answers stopped at the token limit: read only where the verdict came "
                    "before the cut (raise --max-tokens)",
    "not_fitted": "the model was not fitted (the reason follows, e.g. too little data)",
    "not_converged": "the model fit did not converge",
    "few_answers": "fewer decisions than the test's approximation needs in one cell (across languages: 10 "
                   "per group and language for Cochran's Q)",
    "few_pairs": "Samaritan across languages: fewer paired scenarios in a language than Cochran's Q needs to "
                 "hold its level (30)",
    "no_spread": "Samaritan across languages: a language's scenario differences do not vary (its variance is "
                 "floored at the rounding of whole-number ratings)",
}


@dataclass
class Quality:
    """The flags of one row: codes (in :data:`FLAGS` order) and one sentence per flag."""

    codes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, code: str, note: str) -> None:
        if code not in self.codes:
            self.codes.append(code)
            self.notes.append(note)

    def merge(self, other: Quality) -> Quality:
        for code, note in zip(other.codes, other.notes, strict=True):
            self.add(code, note)
        return self

    @property
    def flags(self) -> str | None:
        """The codes joined by ``; `` (None when the row is clean), for tables."""
        order = list(FLAGS)
        return "; ".join(sorted(self.codes, key=order.index)) or None

    @property
    def text(self) -> str | None:
        """The sentences joined by `` | `` (None when the row is clean)."""
        return " | ".join(self.notes) or None

    @property
    def blocks_interval(self) -> bool:
        """True when the row's interval must not be shown as a finding."""
        return bool({"not_tested", "too_few_units", "not_fitted", "not_converged"} & set(self.codes))


@lru_cache(maxsize=64)
def _sign_test_min(alpha: float, two_sided: bool) -> int:
    """Smallest n at which an exact sign test (binomial, p = 1/2) with all n on one side has p < alpha.

    That p is 0.5^n one-sided and 2 × 0.5^n two-sided (scipy's binomtest gives the same: tests check it).
    """
    n = max(1, math.floor(math.log2((2 if two_sided else 1) / alpha)) + 1)
    while n > 1 and (2 if two_sided else 1) * 0.5 ** (n - 1) < alpha:  # guard the floor against rounding
        n -= 1
    while (2 if two_sided else 1) * 0.5**n >= alpha:
        n += 1
    return n


@lru_cache(maxsize=64)
def _fisher_min(alpha: float) -> int:
    """Smallest n at which some 2 x 2 table of n units has a one-sided Fisher exact p < alpha.

    Conditioning on the margins, the smallest p of a table is 1 / C(n, r) (every unit on the diagonal,
    row total = column total = r), largest at r = n // 2 (scipy's fisher_exact gives the same: tests check it).
    """
    n = 2
    while 1 / math.comb(n, n // 2) >= alpha:
        n += 1
    return n


#: the exact conditional Cochran's Q (k = 3) has its smallest p when every differing set points to one framing
_COCHRAN_SEARCH = 60


@lru_cache(maxsize=64)
def _cochran_min(alpha: float, k: int) -> int | None:
    """Smallest number of sets that differ across the k = 3 framings at which Cochran's Q's exact conditional p
    (:func:`biasatlas.stats.clustered.cochran_exact`, the test the contact probe runs) can fall below alpha.

    Each differing set takes one of its 3 patterns with probability 1/3, so the most extreme table of m such
    sets has p = 3 × 3^-m (the chi-squared approximation let p 0.0498 through at 3 sets, where the exact p is
    0.111); computed with the test itself, not the closed form."""
    import numpy as np

    from biasatlas.stats.clustered import cochran_exact

    if k != 3:
        return None
    for m in range(1, _COCHRAN_SEARCH + 1):
        if cochran_exact(np.array([[1, 0, 0]] * m)).min_p < alpha:
            return m
    return None


#: what each rule counts, per kind of test
RULES: dict[str, str] = {
    "mcnemar": "discordant pairs: the exact McNemar test is a two-sided sign test on them; with all m on one "
    "side p = 2 × 0.5^m, so it cannot reach p < alpha below this many",
    "paired_t": "pairs: below this many no distribution-free test of the same pairs (the exact two-sided sign "
    "or signed-rank test, minimum p = 2 × 0.5^n) can reach p < alpha, so the t-test's p and interval would "
    "rest on a normality that so few pairs cannot check",
    "wilcoxon": "pairs: the exact two-sided signed-rank test's smallest p is 2 × 0.5^n",
    "tost": "pairs: each one-sided exact sign test of the equivalence (p = 0.5^n when all n differences lie "
    "inside the margin) cannot conclude below this many",
    "fisher": "stories in the 2 x 2 table of the cell (at most the stories analysed): the most extreme table "
    "of n stories (balanced margins, perfect association) has one-sided p = 1 / C(n, n // 2), so below this many "
    "no cell can reach p < alpha",
    "cochran": "prompt sets whose decision differs across the framings: below this many the exact conditional "
    "Cochran's Q (each differing set's pattern equally likely under the null) cannot reach p < alpha: its "
    "smallest p is 3 × 3^-m",
}


def min_units(kind: str, alpha: float, k: int = 3) -> int | None:
    """The smallest number of units (see :data:`RULES`) at which a ``kind`` test can reach p < ``alpha``.

    ``kind``: mcnemar, paired_t, wilcoxon, tost, fisher (one-sided, 2 x 2), cochran (``k`` conditions);
    None for other tests.
    """
    if kind in ("mcnemar", "paired_t", "wilcoxon"):
        return _sign_test_min(alpha, True)
    if kind == "tost":
        return _sign_test_min(alpha, False)
    if kind == "fisher":
        return _fisher_min(alpha)
    if kind == "cochran":
        return _cochran_min(alpha, k) if k <= 3 else None
    return None


def units_flag(kind: str, units: Any, alpha: float, label: str, k: int = 3) -> Quality:
    """``too_few_units`` when ``units`` (what :data:`RULES` counts for ``kind``) is below :func:`min_units`."""
    quality = Quality()
    need = min_units(kind, alpha, k)
    if need is None or units is None or (isinstance(units, float) and math.isnan(units)):
        return quality
    if int(units) < need:
        quality.add("too_few_units", f"too few units for {label}: {int(units)} {RULES[kind].split(':')[0]}, "
                    f"it needs >= {need} to reach p < {alpha:g}")
    return quality


def attainable_flag(min_p: Any, alpha: float, label: str) -> Quality:
    """``too_few_units`` when an exact test's smallest attainable p (``min_p``, from its null distribution on
    these units) is not below ``alpha``: whatever the answers, it could not find an effect."""
    quality = Quality()
    if min_p is None or (isinstance(min_p, float) and math.isnan(min_p)):
        return quality
    if float(min_p) >= alpha:
        quality.add("too_few_units", f"too few units for {label}: its smallest attainable p on these "
                    f"questions is {float(min_p):.3g}, not below {alpha:g}")
    return quality


def not_tested(reason: str) -> Quality:
    """``not_tested`` with its reason (e.g. "no pair differs: t undefined")."""
    quality = Quality()
    quality.add("not_tested", f"not tested: {reason}")
    return quality


def answer_flags(answers: int, unreadable: int, refusals: int, top_share: float | None = None,
                 top_label: str = "one option", what: str = "decisions", *, cut: int = 0) -> Quality:
    """The flags of a cell's answers: unreadable > 20%, refusals > 20%, one option >= 90% of the readable,
    cut at the token limit > 20% (``cut``: answers whose finish_reason is "length").

    ``top_share``: the share of the readable answers that give the most frequent option (or rating).
    """
    quality = Quality()
    if answers:
        if unreadable / answers > UNREADABLE_LIMIT:
            quality.add("unreadable", f"{100 * unreadable / answers:.0f}% of {answers} answers unreadable")
        if refusals / answers > REFUSAL_LIMIT:
            quality.add("refusals", f"{100 * refusals / answers:.0f}% of {answers} answers are refusals")
        if cut / answers > UNREADABLE_LIMIT:
            quality.add("cut_at_limit", f"{100 * cut / answers:.0f}% of {answers} answers stopped at the token limit")
    if top_share is not None and not math.isnan(top_share) and top_share >= ONE_OPTION_LIMIT:
        quality.add("one_option", f"answered {top_label} {100 * top_share:.0f}% of the time: {what} "
                    "cannot move")
    return quality
