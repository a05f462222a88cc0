"""An answer counts once in the reading audit, however often the labels file repeats it; an answer labelled two
ways is a conflict, listed and left out; the file's answer_key must be the answer's key (issue 42)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from biasatlas.backends.fake import FakeBackend
from biasatlas.probes.contact.probe import PROBE
from biasatlas.readers.scoring import score
from biasatlas.reading_audit import AuditError, check_labels, sample
from biasatlas.records import GenerationSettings, Request
from biasatlas.runner import run_plan
from biasatlas.store import Store

N = 16


def _answer(request: Request) -> str:
    index = int(request.prompt.id, 16) % 10
    return "I won't answer that." if index == 0 else "Hmm." if index == 1 else "Yes." if index % 2 else "No."


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Store:
    store = Store(tmp_path_factory.mktemp("once") / "study")
    config = PROBE.config(languages=["en", "de"], limit=40, mode="generate")
    run_plan(PROBE.plan(config), FakeBackend(_answer), store, GenerationSettings(mode="generate"), progress=False)
    return store


@pytest.fixture(scope="module")
def drawn(study: Store) -> pd.DataFrame:
    frame = sample(study, N, seed=2).astype({"sample_index": int})
    return frame.assign(sample_id=frame["sample_id"].astype(str))


def _choices(allowed: str) -> list[str]:
    return [c.strip() for c in allowed.split(" | ")]


def _labelled(drawn: pd.DataFrame, picks: list[int]) -> pd.DataFrame:
    """The sample with each row labelled by one of its allowed labels (picked by index)."""
    labels = [_choices(a)[p % len(_choices(a))] for a, p in zip(drawn["allowed_labels"], picks, strict=True)]
    return drawn.assign(human_label=labels)


def _scores(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k != "labels_file"}


def test_one_answer_under_twenty_sample_ids_counts_once(study: Store, drawn: pd.DataFrame) -> None:
    one = drawn.iloc[[0]].assign(human_label=drawn["reader_label"].iloc[0])
    twenty = pd.concat([one] * 20, ignore_index=True).assign(sample_id=[str(i) for i in range(1, 21)])
    result = score(check_labels(study, twenty))
    assert result["overall"]["n"] == 1 and result["overall"]["correct"] == 1
    assert result["labels_file"] == {"rows": 20, "answers": 1, "repeated_rows": 19, "conflicts": []}


def test_conflicting_labels_are_listed_and_left_out(study: Store, drawn: pd.DataFrame) -> None:
    base = _labelled(drawn, [0] * N)
    first = base.iloc[[0]]
    other = next(c for c in _choices(first["allowed_labels"].iloc[0]) if c != first["human_label"].iloc[0])
    clash = pd.concat([base, first.assign(sample_id="99", human_label=other)], ignore_index=True)
    result = score(check_labels(study, clash))
    without = score(check_labels(study, base.iloc[1:]))
    assert _scores(result) == _scores(without)  # neither counted right nor wrong
    (conflict,) = result["labels_file"]["conflicts"]
    assert conflict["answer_key"] == first["answer_key"].iloc[0] and conflict["sample_ids"] == ["1", "99"]
    assert sorted(conflict["labels"]) == sorted({first["human_label"].iloc[0], other})


def test_answer_key_must_be_the_answers_key(study: Store, drawn: pd.DataFrame) -> None:
    labels = _labelled(drawn, [0] * N)
    labels.loc[2, "answer_key"] = labels.loc[3, "answer_key"]
    with pytest.raises(AuditError, match=r"line 4 \(sample_id 3\): answer_key .* is not the key of that answer"):
        check_labels(study, labels)
    # without the column, the study's key of the answer each row names is used
    kept = score(check_labels(study, _labelled(drawn, [0] * N).drop(columns=["answer_key"])))
    assert kept["overall"]["n"] == N


def test_a_sample_id_naming_two_answers_is_a_problem(study: Store, drawn: pd.DataFrame) -> None:
    labels = _labelled(drawn, [0] * N)
    labels.loc[5, "sample_id"] = labels.loc[4, "sample_id"]
    with pytest.raises(AuditError, match="names two different answers"):
        check_labels(study, labels)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(picks=st.lists(st.integers(0, 3), min_size=N, max_size=N),
       copies=st.lists(st.tuples(st.integers(0, N - 1), st.booleans()), max_size=30),
       order=st.randoms(use_true_random=False))
def test_repeating_rows_never_changes_the_scores(study: Store, drawn: pd.DataFrame, picks: list[int],
                                                 copies: list[tuple[int, bool]], order: Any) -> None:
    """Property: copies of rows (as they are, or under a new sample id), in any order, leave every figure as it
    was; only the file's own counts say they were there."""
    base = _labelled(drawn, picks)
    extra = [base.iloc[[i]].assign(sample_id=str(1000 + n)) if renumber else base.iloc[[i]]
             for n, (i, renumber) in enumerate(copies)]
    repeated = pd.concat([base, *extra], ignore_index=True)
    rows = list(range(len(repeated)))
    order.shuffle(rows)
    result = score(check_labels(study, repeated.iloc[rows].reset_index(drop=True)))
    assert _scores(result) == _scores(score(check_labels(study, base)))
    assert result["labels_file"] == {"rows": N + len(copies), "answers": N, "repeated_rows": len(copies),
                                     "conflicts": []}
