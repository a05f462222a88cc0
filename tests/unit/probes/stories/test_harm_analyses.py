"""The paper's harm analyses on a planted study: each recovers what was planted.

Planted: 30 associations, the first 10 harmful. Humans (6 raters) rate associations 0-24 only, two of
them noisily (5 on a harmful one half of the time), and answer realism "no" on harmful ones, "yes" on
benign ones. Three judges rate all 30, three samples each, identically: B gives 5 on harmful ones, C and
A give 4 (never 5); A also generated associations 0-19 and rates 8 of its own harmful ones 2 (the
self-judgment blind spot). The judges answer realism "not sure" always. Association 25 (judges only) is
harmful.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from biasatlas.backends.fake import FakeBackend
from biasatlas.probes.stories import harm, harm_analyses
from biasatlas.records import GenerationSettings
from biasatlas.runner import run_plan
from biasatlas.store import Store

KEYS = [f"age=a{i} -> education=e{i}" for i in range(30)]
HARMFUL = set(KEYS[:10]) | {KEYS[25]}
A, B, C = "gpt-4o-mini", "judge-b", "judge-c"
BLIND = set(KEYS[:8])  # A's own harmful associations it rates benign


def _humans(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for r in range(6):
        for i, key in enumerate(KEYS[:25]):
            value = (5 if i % 2 == r % 2 else 4) if key in HARMFUL else int(rng.choice([1, 2]))
            if r < 2 and rng.random() < 0.5:  # two raters of six disagree on half: the medians hold
                value = 2 if key in HARMFUL else 4
            rows.append({"association": key, "rater": f"human:{r}", "harm": value,
                         "realism": "no" if key in HARMFUL else "yes"})
    return pd.DataFrame(rows)


def _judges() -> pd.DataFrame:
    rows = []
    for key in KEYS:
        bad = key in HARMFUL
        for rater, value in ((A, 2 if key in BLIND else (4 if bad else 1)), (B, 5 if bad else 1), (C, 4 if bad else 1)):
            rows += [{"association": key, "rater": rater, "harm": value, "realism": "not sure"}] * 3
    return pd.DataFrame(rows)


def _per_model() -> list[dict[str, str]]:
    def record(model: str, key: str) -> dict[str, str]:
        a, av, b, bv = harm.parse_key(key)
        return {"model": model, "base_attribute": a, "base_value": av, "compared_attribute": b, "compared_value": bv}

    return ([record(A, k) for k in KEYS[:20]] + [record("local:Qwen/Qwen2.5-7B@abc", k) for k in KEYS[10:30]]
            + [record("mystery", KEYS[0])])


def test_labels_say_who_rated_each_association():
    out = harm_analyses.labels(_judges(), _humans())
    rows = {r["association"]: r for r in out["associations"]}
    assert {k for k, r in rows.items() if r["harmful"]} == HARMFUL
    assert {k for k, r in rows.items() if r["rated_by"] == "judges"} == set(KEYS[25:])
    assert rows[KEYS[0]]["n_ratings"] == 6 and rows[KEYS[0]]["n_raters"] == 6
    assert rows[KEYS[25]]["n_ratings"] == 9 and rows[KEYS[25]]["n_raters"] == 3
    per_judge = {(r["association"], r["rater"]): r for r in out["per_judge"]}
    assert per_judge[(KEYS[0], A)]["harmful"] is False and per_judge[(KEYS[0], B)]["median"] == 5
    assert per_judge[(KEYS[9], A)]["harmful"] is True and per_judge[(KEYS[9], A)]["n_ratings"] == 3


def test_top_score_use_per_judge_against_the_humans():
    human = _humans()
    out = harm_analyses.top_score(_judges(), human)
    fives = int((human["harm"] == 5).sum())
    assert out["humans"]["count"] == fives and out["humans"]["n"] == len(human) and fives > 0
    judges = {j["rater"]: j for j in out["per_judge"]}
    assert judges[C]["count"] == 0 and judges[C]["n"] == 90 and judges[C]["p_adj"] < 0.05
    assert judges[B]["share"] == pytest.approx(11 / 30)  # 5 on every harmful association
    assert judges[C]["ci95"][0] == 0.0 and judges[C]["ci95"][1] > 0
    assert "Fisher" in out["test"]


def test_judges_agree_more_with_each_other_than_humans_do():
    out = harm_analyses.agreement_within(_judges(), _humans())
    assert out["humans"]["raters"] == 6 and out["humans"]["pairs"] == 15 and out["humans"]["n_items"] == 25
    assert out["judges"]["raters"] == 3 and out["judges"]["pairs"] == 3 and out["judges"]["n_items"] == 30
    assert out["judges"]["mean_kappa"] > out["humans"]["mean_kappa"]
    assert out["judges_minus_humans_kappa"] > 0
    # B and C label alike everywhere, A differs from both on its 8 blind associations
    assert out["judges"]["mean_label_agreement"] == pytest.approx((1 + 2 * (22 / 30)) / 3)


def test_self_judgment_gap_of_a_generator_that_judges():
    gap = harm_analyses.self_judgment(_judges(), _per_model())
    assert [g["model"] for g in gap] == [A]  # the others did not judge
    g = gap[0]
    assert g["n"] == 20 and g["self"]["count"] == 2 and g["others"]["count"] == 10
    assert g["self_only"] == 0 and g["others_only"] == 8
    assert g["p"] == pytest.approx(2 * 0.5**8) and g["difference"] == pytest.approx(-0.4)


def test_realism_distribution_and_harm_by_answer():
    out = harm_analyses.realism(_judges(), _humans())
    humans = out["humans"]
    assert humans["distribution"]["no"]["count"] == 60 and humans["distribution"]["yes"]["count"] == 90
    assert humans["distribution"]["not sure"]["count"] == 0
    assert humans["harm_by_answer"]["no"]["median"] >= 4 > humans["harm_by_answer"]["yes"]["median"]
    assert humans["test"]["p"] < 0.001 and humans["test"]["groups"] == 2
    assert out["judges"]["distribution"]["not sure"]["share"] == 1.0 and "test" not in out["judges"]


@pytest.mark.parametrize(("model", "provider"), [
    ("openai:gpt-4o@https://api.openai.com/v1", "OpenAI"),
    ("openai:Qwen/Qwen2.5-7B-Instruct@http://vllm:8000", "Alibaba"),
    ("local:smollm2@abc", "Hugging Face"), ("claude-sonnet-4", "Anthropic"), ("openai:my-model@http://x", None),
    ("fake:judge", None), ("Mistral-Small-3.1", "Mistral"), ("o3-mini", "OpenAI"), ("gemma-3-4b", "Google"),
])
def test_provider_inferred_from_the_model_name(model, provider):
    assert harm_analyses.provider_of(model) == provider
    assert harm_analyses.provider_of(model, {model: "Acme"}) == "Acme"


def test_harmful_and_benign_per_model_grouped_by_provider():
    labels = harm_analyses.label_series(_judges(), _humans())
    groups = {g["provider"]: g for g in harm_analyses.by_provider(_per_model(), labels)}
    assert groups["OpenAI"]["models"] == [{"model": A, "harmful": 10, "benign": 10, "unrated": 0}]
    assert groups["Alibaba"]["harmful"] == 1 and groups["Alibaba"]["benign"] == 19
    assert groups[None]["models"][0]["harmful"] == 1
    assert list(groups) == ["OpenAI", "Alibaba", None]  # most harmful first


def test_summarise_harm_carries_the_analyses(tmp_path):
    store = Store(tmp_path)
    keys = ["income_level=low -> education=basic", "age=senior -> employment_status=retired",
            "gender=non_binary -> professional_field=arts", "urbanicity=rural -> professional_field=agriculture"]
    for name, value in (("j1", "Harm: 5\nRealistic: no"), ("j2", "Harm: 2\nRealistic: yes")):
        backend = FakeBackend(lambda r, v=value: v, name=name)
        run_plan(harm.judge_prompts(keys), backend, store, GenerationSettings(max_tokens=20, temperature=0.7),
                 samples=2, progress=False)
    pd.DataFrame([{"association": k, "rater": f"human:{r}", "harm": 1 + r, "realism": "yes"}
                  for k in keys[:2] for r in range(3)]).to_csv(tmp_path / harm.HUMAN_FILE, index=False)
    per_model = []
    for key in keys:
        a, av, b, bv = harm.parse_key(key)
        per_model.append({"model": "fake:j1", "base_attribute": a, "base_value": av, "compared_attribute": b,
                          "compared_value": bv})
    out = harm.summarise_harm(store, per_model)
    assert {"labels", "top_score", "agreement_within", "realism", "self_judgment", "by_provider"} <= set(out)
    assert out["self_judgment"][0]["self"]["count"] == 4 and out["self_judgment"][0]["others"]["count"] == 0
    assert {r["rated_by"] for r in out["labels"]["associations"]} == {"human", "judges"}
    assert "self_judgment" not in harm.summarise_harm(store)  # no generator records: no gap
