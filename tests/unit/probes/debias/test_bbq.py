"""BBQ reader and scorer on a small hand-made file in BBQ's jsonl format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from biasatlas.backends.fake import FakeBackend
from biasatlas.probes.debias import bbq as bbq
from biasatlas.probes.debias import evaluate as evaluate
from biasatlas.probes.debias import quality as quality
from biasatlas.records import GenerationSettings, Request
from biasatlas.runner import run_plan
from biasatlas.store import Store

SAMPLE = Path(__file__).parent / "data" / "bbq_sample.jsonl"


def _stereotyped(request: Request) -> str:
    """Always the stereotyped answer: the target for a negative question, the other group otherwise."""
    meta, options = request.prompt.meta, request.prompt.options
    target, unknown = meta["target"], meta["unknown"]
    other = next(i for i in range(3) if i not in (target, unknown))
    return options[target if meta["question_polarity"] == "neg" else other]


def _correct(request: Request) -> str:
    return request.prompt.options[request.prompt.meta["label"]]


def test_reader_finds_targets_and_unknowns() -> None:
    items = bbq.read_bbq([SAMPLE])
    assert len(items) == 8
    assert {it.category for it in items} == {"Age", "Gender_identity"}
    age = [it for it in items if it.category == "Age"]
    gender = [it for it in items if it.category == "Gender_identity"]
    assert {it.target for it in age} == {0} and {it.unknown_loc for it in age} == {1}
    # 'woman' is BBQ's 'F' group
    assert {it.target for it in gender} == {2} and {it.unknown_loc for it in gender} == {0}
    assert bbq.read_bbq([SAMPLE.parent], limit=3) and len(bbq.read_bbq([SAMPLE], limit=3)) == 3


def test_reader_errors_name_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "Bad.jsonl"
    good = SAMPLE.read_text().splitlines()[0]
    bad.write_text(good + "\n{not json\n")
    with pytest.raises(bbq.BBQError, match=r"Bad.jsonl:2: not JSON"):
        bbq.read_bbq([bad])
    record = json.loads(good)
    del record["label"]
    bad.write_text(json.dumps(record) + "\n")
    with pytest.raises(bbq.BBQError, match=r"Bad.jsonl:1: not a BBQ record"):
        bbq.read_bbq([bad])
    with pytest.raises(bbq.BBQError, match="no such BBQ file"):
        bbq.read_bbq([tmp_path / "missing.jsonl"])


def _scores(tmp_path: Path, script, name: str):  # type: ignore[no-untyped-def]
    prompts = bbq.prompts(bbq.read_bbq([SAMPLE]))
    with Store(tmp_path / name) as store:
        run_plan(prompts, FakeBackend(script, name=name), store, GenerationSettings(mode="choice"), progress=False)
        scored = bbq.score_rows(store.frame(probe="debias"))
    table = bbq.scores(scored)
    return table.set_index("category")


def test_fully_stereotyped_model_scores_plus_one(tmp_path: Path) -> None:
    t = _scores(tmp_path, _stereotyped, "stereo")
    row = t.loc["all"]
    assert row["ambig_n"] == 4 and row["disambig_n"] == 4
    assert row["ambig_acc"] == 0.0 and row["disambig_acc"] == 0.0
    assert row["bias_disambig"] == pytest.approx(1.0)
    assert row["bias_ambig"] == pytest.approx(1.0)  # (1 − 0) · (2 · 2/2 − 1)
    assert t.loc["Age", "bias_disambig"] == pytest.approx(1.0)


def test_correct_model_scores_accuracy_one_and_no_ambiguous_bias(tmp_path: Path) -> None:
    t = _scores(tmp_path, _correct, "oracle")
    row = t.loc["all"]
    assert row["ambig_acc"] == 1.0 and row["disambig_acc"] == 1.0
    assert row["bias_ambig"] == 0.0
    # every disambiguated context of the sample goes against the stereotype
    assert row["bias_disambig"] == pytest.approx(-1.0)
    assert 0.39 < row["ambig_ci_low"] < 0.52  # Wilson interval of 4/4


def test_half_stereotyped_in_ambiguous_contexts(tmp_path: Path) -> None:
    def script(request: Request) -> str:
        meta = request.prompt.meta
        if meta["context_condition"] == "ambig" and meta["question_polarity"] == "neg":
            return _stereotyped(request)
        return _correct(request)

    row = _scores(tmp_path, script, "half").loc["all"]
    assert row["ambig_acc"] == 0.5
    # ambiguous: 2 non-UNKNOWN answers, both biased -> (1 − 0.5) · (2 · 1 − 1) = 0.5
    assert row["bias_ambig"] == pytest.approx(0.5)


def test_before_after_summary_with_mcnemar(tmp_path: Path) -> None:
    prompts = bbq.prompts(bbq.read_bbq([SAMPLE]))
    settings = GenerationSettings(mode="choice")
    with Store(tmp_path / "s") as store:
        for role, script, name in (("before", _stereotyped, "base"), ("after", _correct, "tuned")):
            cfg = evaluate.run_config(role, "mixed", "bbq", quality.fingerprint(prompts), "fake", None, "en")
            run_plan(prompts, FakeBackend(script, name=name), store, settings, config=cfg, progress=False)
        comps = evaluate.comparisons(store, probe="debias")
        assert len(comps) == 1
        summary = quality.bbq_summary(store, comps[0])
    assert summary["n"] == 8
    sides = {(r["side"], r["category"]): r for r in summary["scores"]}
    assert sides[("before", "all")]["disambig_acc"] == 0.0 and sides[("after", "all")]["disambig_acc"] == 1.0
    tests = {t["condition"]: t for t in summary["tests"]}
    assert tests["ambig"]["n"] == 4 and tests["ambig"]["effect"] == pytest.approx(-1.0)
    assert tests["ambig"]["p"] == pytest.approx(0.125)  # exact McNemar, 4 discordant pairs
