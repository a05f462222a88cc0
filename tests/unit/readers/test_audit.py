"""The audit sample: an equal share per stratum, small strata whole, seeded; the labels' checks."""

from __future__ import annotations

import pytest

from biasatlas.backends.fake import FakeBackend
from biasatlas.probes.contact.probe import PROBE
from biasatlas.reading_audit import allocate, read_answers, sample, validity_lines
from biasatlas.records import GenerationSettings, Request
from biasatlas.runner import run_plan
from biasatlas.store import Store


def test_allocate_shares_equally_and_passes_on_what_small_strata_cannot_take() -> None:
    assert allocate({"a": 100, "b": 100, "c": 100}, 30) == {"a": 10, "b": 10, "c": 10}
    assert allocate({"a": 100, "b": 3, "c": 100}, 30) == {"a": 14, "b": 3, "c": 13}
    assert allocate({"a": 2, "b": 3}, 30) == {"a": 2, "b": 3}  # fewer answers than asked for: all of them
    assert sum(allocate({"a": 7, "b": 50, "c": 1, "d": 9}, 40).values()) == 40


def _answer(request: Request) -> str:
    index = int(request.prompt.id, 16) % 10
    return "I won't answer that." if index == 0 else "Hmm." if index == 1 else "Yes." if index % 2 else "No."


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Store:
    store = Store(tmp_path_factory.mktemp("audit") / "study")
    config = PROBE.config(languages=["en", "de"], limit=60, mode="generate")
    run_plan(PROBE.plan(config), FakeBackend(_answer), store, GenerationSettings(mode="generate"), progress=False)
    return store


def test_sample_is_stratified_and_seeded(study: Store) -> None:
    drawn = sample(study, 24, seed=3)
    assert len(drawn) == 24 and (drawn["human_label"] == "").all()
    # both languages, and the unreadable and refusal answers drawn beside the options
    assert set(drawn["language"]) == {"en", "de"}
    assert {"unreadable", "refusal"} <= set(drawn["reader_label"])
    everything = read_answers(study)
    sizes = everything.groupby(["probe", "language", "stratum"]).size().to_dict()
    strata = everything.set_index(["prompt_id", "model", "sample_index"])["stratum"]
    drawn_strata = [strata[(p, m, int(i))] for p, m, i in zip(drawn["prompt_id"], drawn["model"],
                                                              drawn["sample_index"], strict=True)]
    counts = drawn.assign(stratum=drawn_strata).groupby(["probe", "language", "stratum"]).size().to_dict()
    assert counts == {k: v for k, v in allocate(sizes, 24).items() if v}  # equal shares, small strata whole
    assert drawn.equals(sample(study, 24, seed=3)) and not drawn.equals(sample(study, 24, seed=4))


def test_no_check_is_said_per_language(study: Store) -> None:
    from biasatlas.probes.contact.read import load_outcomes

    lines = validity_lines(study, "contact", load_outcomes(study))
    assert lines == ["contact, de: no human check of the reading was made",
                     "contact, en: no human check of the reading was made"]


def test_a_large_labels_file_is_checked_column_wise(study: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """20,000 rows (the sample copied under new ids): each distinct label text is read once, and the whole check
    takes well under the ~34 s a row-by-row lookup (~1.7 ms a row) took."""
    import time

    import pandas as pd

    from biasatlas import reading_audit as audit

    drawn = sample(study, 40, seed=1)
    drawn = drawn.assign(human_label=drawn["reader_label"], sample_index=drawn["sample_index"].astype(int))
    rows = pd.concat([drawn] * 500, ignore_index=True).assign(sample_id=[str(i) for i in range(1, 20_001)])
    read = []
    real = audit._human

    def counted(*args: str) -> str | None:
        read.append(args)
        return real(*args)

    monkeypatch.setattr(audit, "_human", counted)
    started = time.perf_counter()
    checked = audit.check_labels(study, rows)
    took = time.perf_counter() - started
    assert len(read) == len(set(read)) <= len(drawn)  # per distinct (probe, label, allowed labels), not per row
    assert len(checked) == 20_000 and checked["answer_key"].nunique() == len(drawn)
    assert (checked["human_label"] == checked["reader_label"]).all()
    assert took < 10, f"{took:.1f} s for 20,000 rows"


def test_the_first_problems_are_named_by_line_in_file_order(study: Store) -> None:
    from biasatlas.reading_audit import AuditError, check_labels

    drawn = sample(study, 8, seed=1).astype({"sample_index": int})
    rows = drawn.assign(human_label=drawn["reader_label"], sample_id=drawn["sample_id"].astype(str))
    rows.loc[1, "human_label"] = " "
    rows.loc[3, "prompt_id"] = "nope"
    rows.loc[4, "human_label"] = "Perhaps"
    first_id = str(rows["sample_id"].iloc[0])
    rows.loc[5, "sample_id"] = first_id
    rows.loc[6, "answer_key"] = "k" * 40
    with pytest.raises(AuditError) as caught:
        check_labels(study, rows)
    text = str(caught.value)
    assert text.startswith("5 problem(s) in the labels file: line 3 (sample_id 2): human_label is empty; "
                           "line 5 (sample_id 4): no such answer in the study")
    assert "line 6 (sample_id 5): human_label 'Perhaps' is not one of: " in text
    assert f"line 7 (sample_id {first_id}): sample_id {first_id} names two" in text
    assert f"line 8 (sample_id 7): answer_key {'k' * 40} is not the key of that answer in the study (" in text
    assert "more" not in text
