"""The multiple-testing families of every probe, defined once: which tests are corrected together, how.

A probe's summary adjusts its p-values with :func:`adjust_family`; the statistics rows carry the
family's name and method (:func:`family_label`), and every surface (the report's overview and probe
sections, `summary --json`, the export) reads the adjusted p from those rows: none corrects again.
docs/methods.md ("Correction families") says why each family is what it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from biasatlas.stats.multitest import adjust

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Family:
    """One probe's correction family: the columns one family shares, its default method, and why."""

    probe: str
    by: tuple[str, ...]  # a family is one value of these columns; () = every test of the study
    method: str  # the default (`--correction` overrides it where the probe takes one)
    members: str  # which tests, in words
    why: str


FAMILIES: dict[str, Family] = {
    "contact": Family(
        "contact", (), "bh",
        "every paired contact test of the study: McNemar and Cochran's Q on the decisions, paired t and "
        "Wilcoxon on P(biased), for every model x mode x language x scale",
        "the study asks one question (does contact framing move the answers?) of many cells; BH bounds "
        "the share of false findings among them; the overview's headline is one of these tests",
    ),
    "samaritan": Family(
        "samaritan", ("model", "language", "temperature", "max_tokens", "category"), "holm",
        "the groups of one category (race, gender or age) of one model x language x decoding, compared "
        "with the control; the t-test, Wilcoxon and TOST each adjusted within it",
        "paper 003 compares each category's groups with one control; Holm controls the chance of any "
        "false finding among them; the overview's headline is the group of largest gap, with its p_adj",
    ),
    "stories": Family(
        "stories", ("base_attribute", "compared_attribute"), "by",
        "the cells of one attribute A x attribute B table (Benjamini-Yekutieli); the tables themselves "
        "are screened with BH (paper 002)",
        "the cells of one table are dependent (they share margins): BY holds under any dependence",
    ),
    "leakage": Family(
        "leakage", ("model",), "bh",
        "the cross-language human coefficients (source language != target) of one model's fits",
        "the leakage question (does another language's human data predict this model?) is asked once per "
        "model over its target languages",
    ),
    "debias": Family(
        "debias", ("comparison",), "bh",
        "every table of one before/after comparison",
        "one tuned model against its base: one question over every grouping of paper 000's tables",
    ),
}


def family_label(probe: str) -> str:
    """The family as a row names it, e.g. ``contact: every paired contact test of the study: ...``."""
    return f"{probe}: {FAMILIES[probe].members}"


def method_of(probe: str, method: str | None) -> str:
    """The correction a probe's family uses: ``method`` when given, else the family's default."""
    return FAMILIES[probe].method if method is None else method


def adjust_family(table: pd.DataFrame, probe: str, method: str | None, column: str = "p") -> pd.Series:
    """``column`` adjusted within each family of ``probe`` (its :attr:`Family.by` columns), NaN kept NaN."""
    import pandas as pd

    method = method_of(probe, method)
    out = pd.Series(float("nan"), index=table.index, dtype=float)
    by = [c for c in FAMILIES[probe].by if c in table.columns]
    groups = table.groupby(by, dropna=False).groups.values() if by else [table.index]
    for index in groups:
        out.loc[index] = adjust(table.loc[index, column].astype(float).to_numpy(), method)
    return out
