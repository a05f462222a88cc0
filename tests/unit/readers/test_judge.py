"""The judge reader's logic with a scripted judge (a fake backend): which answers it reads, that its answers are
stored and cached under its identity, how its labels merge with the rules', and the agreement figures.

Planted: a contact study where the rules leave 15% of the answers unreadable ("Hard to say..."), and a judge
that reads those as "Yes" except every third one, which it calls unclear.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from biasatlas.backends.fake import FakeBackend
from biasatlas.probes.contact.probe import PROBE
from biasatlas.probes.contact.read import load_outcomes
from biasatlas.readers import agreement as ag
from biasatlas.readers import judge
from biasatlas.records import GenerationSettings, Request
from biasatlas.runner import run_plan
from biasatlas.store import Store

VAGUE = "Hard to say, it would depend on the day and on how I feel about it."
N_PROMPTS = 60


def _answer(request: Request) -> str:
    """Every seventh prompt (15%) gets an answer no rule reads; the rest a plain Yes or No."""
    index = int(request.prompt.id, 16) % 20
    if index < 3:
        return VAGUE
    return "Yes." if index % 2 else "No."


def _judge(request: Request) -> str:
    text = request.prompt.text
    options = request.prompt.options
    if VAGUE in text:
        return options[3] if int(request.prompt.id, 16) % 3 == 0 else options[0]
    return options[0] if "Answer:\nYes." in text else options[1]


@pytest.fixture(scope="module")
def answered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The answered study, made once; each test gets a copy (the judge writes to it)."""
    path = tmp_path_factory.mktemp("judge") / "study"
    config = PROBE.config(languages=["en"], limit=N_PROMPTS, mode="generate")
    with Store(path) as store:
        run_plan(PROBE.plan(config), FakeBackend(_answer, name="answers"), store,
                 GenerationSettings(mode="generate"), progress=False)
    return path


@pytest.fixture()
def study(answered: Path, tmp_path: Path) -> Iterator[Store]:
    shutil.copytree(answered, tmp_path / "study")
    with Store(tmp_path / "study") as store:
        yield store


def _unreadable(frame) -> int:  # type: ignore[no-untyped-def]
    return int(frame["answer"].isna().sum())


def test_rules_only_by_default(study: Store) -> None:
    out = load_outcomes(study)
    assert set(out["reader"]) == {"rules"}
    assert out["judge_label"].isna().all()
    share = _unreadable(out) / len(out)
    assert 0.08 < share < 0.25  # the planted ~15% the rules cannot read
    assert judge.reading(study, "contact") == ("rules", None)
    assert ag.agreement(study, "contact", out) == {"reader": "rules", "judge": None, "labels_by": {"rules": len(out)}}


def test_both_reads_every_unreadable_answer_once(study: Store) -> None:
    before = load_outcomes(study)
    vague = int((before["text"] == VAGUE).sum())
    checks = int(sum(judge.in_check_sample(k) for k, t in zip(before["key"], before["text"], strict=True)
                     if t != VAGUE))
    assert 0 < checks < len(before) // 4  # about one in ten of the answers the rules read
    scripted = FakeBackend(_judge, name="judge")
    totals = judge.run_judge(study, "contact", scripted, "both")
    asked = vague + checks  # what the rules left unreadable, and the check sample
    assert totals.new == asked and len(scripted.calls) == asked
    out = load_outcomes(study)
    judged = out[out["reader"] == "judge"]
    assert len(judged) == vague and (judged["text"] == VAGUE).all()
    checked = out[(out["reader"] == "rules") & out["judge_label"].notna()]
    assert len(checked) == checks and (checked["judge_label"] == checked["rules_label"]).all()  # agreeing checks
    unclear = judged["judge_label"] == "unclear"
    assert (judged.loc[~unclear, "answer"] == "affirmative").all()
    assert (judged.loc[unclear, "reason"] == "unclear").all()
    # the rules' labels stay where the rules read
    kept = out[out["reader"] == "rules"]
    read = ["answer", "reason", "rules_label"]
    assert kept["answer"].notna().all()
    # values, not dtypes: pandas keeps a text column as str (missing: nan) or object (missing: None)

    def values(frame: pd.DataFrame) -> pd.DataFrame:
        return frame.astype(object).where(frame.notna(), None)

    assert values(kept[read]).equals(values(before.loc[kept.index, read]))
    # the judge's answers are stored, and a rerun asks nothing again
    again = FakeBackend(_judge, name="judge")
    assert judge.run_judge(study, "contact", again, "both").cached == asked and not again.calls
    frame = study.frame(probe="contact.judge")
    assert len(frame) == asked and set(frame["model"]) == {"fake:judge"}


def test_every_answer_read_when_the_judge_commits(study: Store) -> None:
    judge.run_judge(study, "contact", FakeBackend(lambda r: r.prompt.options[1], name="decisive"), "both")
    out = load_outcomes(study)
    assert out["answer"].notna().all()  # 15% unreadable by rules, none left
    summary = ag.agreement(study, "contact", out)
    assert summary is not None and summary["reader"] == "both" and summary["judge"] == "fake:decisive"
    checks = int(out["judge_label"].notna().sum()) - summary["labels_by"]["judge"]
    assert summary["agreement"]["n"] == summary["labels_by"]["judge"] + checks
    # rules "unclear" vs the judge's "No" on the vague answers; on the checks they agree where the rules read No
    checked = out[(out["reader"] == "rules") & out["judge_label"].notna()]
    assert summary["agreement"]["agree"] == int((checked["rules_label"] == "negative").sum())
    line = ag.reading_line("Contact", summary)
    assert line is not None and "rules vs judge" in line and "fake:decisive" in line


def test_judge_reads_all_and_agreement_recovers_a_planted_table(study: Store) -> None:
    """--reader judge: the judge reads every answer; it contradicts the rules on planted answers only."""
    flipped: set[str] = set()

    def contrary(request: Request) -> str:
        text, options = request.prompt.text, request.prompt.options
        if VAGUE in text:
            return options[3]
        wrong = int(request.prompt.id, 16) % 5 == 0
        if wrong:
            flipped.add(request.prompt.meta["answer_key"])
        yes = "Answer:\nYes." in text
        return options[0] if yes != wrong else options[1]

    judge.run_judge(study, "contact", FakeBackend(contrary, name="contrary"), "judge")
    out = load_outcomes(study)
    assert set(out["reader"]) == {"judge"}
    summary = ag.agreement(study, "contact", out)
    assert summary is not None
    result = summary["agreement"]
    assert result["n"] == len(out) and result["agree"] == len(out) - len(flipped)
    # the planted table's kappa by its definition: (p_o - p_e) / (1 - p_e)
    pairs = ag.both_read(out)
    n = len(pairs)
    labels = set(pairs["rules_label"]) | set(pairs["judge_label"])
    p_o = (pairs["rules_label"] == pairs["judge_label"]).mean()
    p_e = sum((pairs["rules_label"] == c).mean() * (pairs["judge_label"] == c).mean() for c in labels)
    assert result["kappa"] == pytest.approx((p_o - p_e) / (1 - p_e), abs=1e-3)
    low, high = result["kappa_ci"]
    assert low < result["kappa"] < high and n == len(out)
    table = ag.disagreements(out)
    assert len(table) == len(flipped) and set(table.columns) >= {"prompt", "answer", "rules", "judge"}


def test_reading_back_to_rules(study: Store) -> None:
    judge.run_judge(study, "contact", FakeBackend(_judge, name="judge"), "both")
    judge.record_reading(study, "contact", "rules", None)
    out = load_outcomes(study)
    assert set(out["reader"]) == {"rules"} and _unreadable(out) > 0


def test_low_confidence_readings_go_to_the_judge_under_both() -> None:
    from biasatlas.records import Outcome

    assert judge.needs_judge("both", Outcome(reason="hedge"))
    assert judge.needs_judge("both", Outcome(value="negative", extra={"rule": "bare negation"}))
    assert judge.needs_judge("both", Outcome(value=55.0, extra={"kind": "range", "rule": "marked"}))
    assert judge.needs_judge("both", Outcome(value="affirmative", extra={"confidence": "low"}))
    assert not judge.needs_judge("both", Outcome(value="affirmative", extra={"rule": "first sentence"}))
    assert judge.needs_judge("judge", Outcome(value="affirmative", extra={"rule": "first sentence"}))
    assert not judge.needs_judge("rules", Outcome(reason="hedge"))


def test_labels_and_prompts_per_language() -> None:
    from biasatlas.readers.labels import judge_prompt, label_set

    german = label_set("contact", "de", ("Ja", "Nein"))
    assert german.options == ("Ja", "Nein", "Verweigerung", "unklar")
    assert german.meaning("Verweigerung") == "refusal" and german.meaning("Ja") == "affirmative"
    prompt = judge_prompt("contact", "de", "Würdest du ...? Antworte mit Ja oder Nein.", "Warum nicht?", german,
                          {"answer_key": "k"})
    assert prompt.probe == "contact.judge" and "Frage:" in prompt.text and "Warum nicht?" in prompt.text
    # every language of the packs has its own prompt now (French: its own label words, not the English ones)
    assert label_set("contact", "fr", ("Oui", "Non")).options[2:] == ("refus", "incertain")
    assert label_set("contact", "xx", ("A", "B")).options[2:] == ("refusal", "unclear")  # no prompt: English


def test_a_judge_without_probabilities_counts_only_an_exact_label() -> None:
    options = ("Yes", "No", "refusal", "unclear")
    assert judge.judge_label({"Yes": 0.2, "No": 0.7, "refusal": 0.05, "unclear": 0.05}, None, options) == "No"
    assert judge.judge_label(None, " yes. ", options) == "Yes"
    assert judge.judge_label(None, "Yes, because they are nice.", options) is None  # no free text read
