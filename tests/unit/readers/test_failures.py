"""Reading failures tested by group on the probes' real plans: a planted difference is found, the null holds.

The simulated studies (``tests/helpers/reading_failure_plans.py``) ask a real plan; each question gets its own
failure probability, alike for every group (a shared text is one answer). The null checks assert that 200
null studies reject at most 8% of the time (alpha 0.05; the binomial 99% upper end would be 9.5%): the omnibus
test and Holm's "some group differs" alike. Measured (seeds as here): contact fr 6 and 3 of 200, Samaritan
race 14 and 8 of 200 (at 400 studies 18 and 15).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from reading_failure_plans import plan_outcomes, plant

from biasatlas.readers.failures import answers, failure_kind, failure_rates, failure_tables, kinds_of
from biasatlas.stats.reading_failures import group_failure_test

ALPHA = 0.05
STUDIES = 200
HIGH = int(0.08 * STUDIES)  # 16; a test at its level exceeds it with probability binom.sf(16, 200, 0.05) = 2%


@pytest.fixture(scope="module")
def contact_fr() -> pd.DataFrame:
    # French: one no-contact text serves several principles' prompt sets (shared answers, counted once)
    return plan_outcomes("contact", "fr", axes=["religion"])


@pytest.fixture(scope="module")
def samaritan_en() -> pd.DataFrame:
    return plan_outcomes("samaritan", "en")


@pytest.mark.parametrize(("value", "reason", "kind"), [
    ("affirmative", None, None), (None, "refusal", "refusal"), (None, "hedge", "unclear"),
    (None, "both options", "unclear"), (None, "unclear", "unclear"), (None, "no answer", "unreadable"),
    (float("nan"), "no number", "unreadable"), (float("nan"), "refusal", "refusal"), (42.0, None, None),
])
def test_failure_kinds(value: object, reason: object, kind: str | None) -> None:
    assert failure_kind(value, reason) == kind
    # the vectorised reading of a whole column says the same
    assert kinds_of(pd.Series([value], dtype=object), pd.Series([reason], dtype=object)).tolist() == [kind]


def test_a_shared_answer_counts_once(contact_fr: pd.DataFrame) -> None:
    found = answers(contact_fr, "contact")
    assert len(found) == contact_fr["key"].nunique() < len(contact_fr)
    # every group is asked the same questions: the stratification pairs them
    per_group = found.groupby("group")["question"].apply(frozenset)
    assert per_group.nunique() == 1


def test_a_group_refused_three_times_as_often_is_found(contact_fr: pd.DataFrame) -> None:
    rng = np.random.default_rng(38)
    study = plant(contact_fr, "contact", rng, mean=0.03, planted={"musulman": 3.0})
    block = failure_tables(study, "contact")
    refusal = next(t for t in block["tests"] if t["kind"] == "refusal")
    assert refusal["differs"] and refusal["groups_differing"] == 1
    rows = [g for g in block["groups"] if g["kind"] == "refusal"]
    found = min(rows, key=lambda g: g["p_adj"])
    assert found["group"] == "musulman" and found["differs"] and found["p_adj"] < ALPHA
    assert found["ci_low"] > found["rest_pct"]  # its rate's interval lies above the others' rate
    assert 1.5 < found["ratio"] < 6
    assert not any(g["differs"] for g in rows if g["group"] != "musulman")
    # the rates beside each comparison, for the flag of an effect
    rates = failure_rates(block, ["musulman", "juif"], model="m", language="fr", mode="generate", axis="religion")
    assert len(rates) == 2 and rates[0] != rates[1]


def test_a_samaritan_group_refused_more_often_is_found(samaritan_en: pd.DataFrame) -> None:
    rng = np.random.default_rng(7)
    study = plant(samaritan_en, "samaritan", rng, mean=0.05, planted={"non-binary": 3.0})
    block = failure_tables(study, "samaritan")
    religion = next(t for t in block["tests"] if t["kind"] == "refusal" and t["category"] == "gender")
    assert religion["differs"]
    rows = [g for g in block["groups"] if g["kind"] == "refusal" and g["category"] == "gender"]
    assert min(rows, key=lambda g: g["p_adj"])["group"] == "non-binary"
    assert not [t for t in block["tests"] if t["category"] == "control"]  # one group: no test
    assert any(r["group"] == "control" for r in block["rates"])  # its rate is there for the comparisons with it


def _null_rejections(frame: pd.DataFrame, probe: str, mean: float, seed: int,
                     cell: str | None = None) -> tuple[int, int]:
    """(omnibus rejections, Holm 'some group differs' rejections) over STUDIES null studies."""
    base = answers(frame, probe)
    if cell is not None:
        base = base[base["category"] == cell].reset_index(drop=True)
    question = base["question"].to_numpy()
    unique, index = np.unique(question, return_inverse=True)
    rng = np.random.default_rng(seed)
    omnibus = holm = 0
    for _ in range(STUDIES):
        rates = rng.beta(1.0, (1 - mean) / mean, len(unique))
        failed = rng.random(len(base)) < rates[index]
        result = group_failure_test(failed, base["group"], question, permutations=500, seed=int(rng.integers(1 << 30)))
        omnibus += result.p is not None and result.p < ALPHA
        holm += result.differs
    return omnibus, holm


def test_no_difference_rejects_at_alpha_on_the_contact_plan(contact_fr: pd.DataFrame) -> None:
    omnibus, holm = _null_rejections(contact_fr, "contact", 0.03, seed=1)
    assert omnibus <= HIGH and holm <= HIGH, (omnibus, holm, HIGH)


def test_no_difference_rejects_at_alpha_on_the_samaritan_plan(samaritan_en: pd.DataFrame) -> None:
    omnibus, holm = _null_rejections(samaritan_en, "samaritan", 0.05, seed=2, cell="race")
    assert omnibus <= HIGH and holm <= HIGH, (omnibus, holm, HIGH)
