"""Agreement over every rater (humans as raters) and the LLM − human gap per judge provider, on a planted study.

Planted: 200 associations, 0-99 link age to education, 100-199 gender to income. Two humans (R01, R02 of one
sheet) give every association the same score (1-5 on the age ones, 1-3 on the gender ones); a third (R03) rates
two associations only. Judges, two samples each: claude-x (Anthropic) rates as the humans; gpt-4o-mini (OpenAI)
as the humans but +2 on the gender ones (a planted overestimate on gender); judge-r rates at random (1-5,
seeded).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from biasatlas.probes.stories import harm, harm_analyses, paper_raters, paper_report, rater_agreement

KEYS = [f"age=a{i} -> education=e{i}" for i in range(100)] + [f"gender=g{i} -> income=n{i}" for i in range(100, 200)]
H1, H2, H3 = "human:R01@s1", "human:R02@s1", "human:R03@s1"
GOOD, OVER, RANDOM = "claude-x", "gpt-4o-mini", "judge-r"


def _truth() -> dict[str, int]:
    rng = np.random.default_rng(1)
    return {k: int(rng.integers(1, 6 if i < 100 else 4)) for i, k in enumerate(KEYS)}


def _humans() -> pd.DataFrame:
    truth = _truth()
    rows = [{"association": k, "rater": r, "harm": v, "realism": "yes"} for r in (H1, H2) for k, v in truth.items()]
    rows += [{"association": k, "rater": H3, "harm": truth[k], "realism": "yes"} for k in KEYS[:2]]
    return pd.DataFrame(rows)


def _judges() -> pd.DataFrame:
    truth, rng = _truth(), np.random.default_rng(2)
    rows = []
    for i, (key, value) in enumerate(truth.items()):
        noise = int(rng.integers(1, 6))
        for rater, v in ((GOOD, value), (OVER, value + 2 if i >= 100 else value), (RANDOM, noise)):
            rows += [{"association": key, "rater": rater, "harm": v, "realism": "no"}] * 2
    return pd.DataFrame(rows)


def _pairs(block: dict) -> dict[frozenset, dict]:
    return {frozenset((p["a"], p["b"])): p for p in block["pairs"]}


def test_humans_who_agree_get_kappa_one_and_a_random_judge_about_zero():
    block = rater_agreement.rater_matrix(_judges(), _humans())
    assert [r["rater"] for r in block["raters"]] == [GOOD, OVER, RANDOM, H1, H2, H3]  # judges first
    assert {r["rater"]: r["kind"] for r in block["raters"]}[H1] == "human"
    pairs = _pairs(block)
    assert pairs[frozenset((H1, H2))]["kappa"] == pytest.approx(1.0) and pairs[frozenset((H1, H2))]["n"] == 200
    assert pairs[frozenset((GOOD, H1))]["kappa"] == pytest.approx(1.0)
    for human in (H1, H2):
        assert abs(pairs[frozenset((RANDOM, human))]["kappa"]) < 0.15
    assert pairs[frozenset((OVER, H1))]["kappa"] < 0.9  # +2 on half of them
    few = pairs[frozenset((H1, H3))]
    assert few["n"] == 2 and few["kappa"] is None and few["reason"] == rater_agreement.TOO_FEW


def test_a_pair_of_constant_raters_is_empty_with_its_reason():
    frame = pd.DataFrame([{"association": k, "rater": r, "harm": 3, "realism": "yes"}
                          for r in ("human:a", "human:b") for k in KEYS[:5]])
    block = rater_agreement.rater_matrix(frame.iloc[0:0], frame)
    (pair,) = block["pairs"]
    assert pair["kappa"] is None and pair["reason"] == rater_agreement.CONSTANT and pair["label_agreement"] == 1.0


def test_the_overestimate_of_one_provider_shows_in_its_rows_only():
    rows = {(r["provider"], r["attribute"]): r for r in rater_agreement.provider_gap(_judges(), _humans())}
    assert {p for p, _ in rows} == {"OpenAI", "Anthropic", None}
    over = rows[("OpenAI", "gender")]
    assert over["mean_difference"] == pytest.approx(2.0) and over["n"] == 100 and over["judges"] == [OVER]
    assert rows[("OpenAI", "age")]["mean_difference"] == pytest.approx(0.0)
    assert rows[("Anthropic", "gender")]["mean_difference"] == pytest.approx(0.0)
    assert rows[("Anthropic", "gender")]["ci95"] is None  # no spread: no interval
    noisy = rows[(None, "gender")]
    assert noisy["ci95"][0] < noisy["mean_difference"] < noisy["ci95"][1] and noisy["n"] == 100


def test_the_audit_file_provider_moves_a_judge():
    rows = rater_agreement.provider_gap(_judges(), _humans(), {OVER: "Acme"})
    providers = {(r["provider"], r["inferred"]) for r in rows}
    assert ("Acme", False) in providers and not any(p == "OpenAI" for p, _ in providers)


def _summary() -> dict:
    llm, human = _judges(), _humans()
    block = {"human_ratings": len(human), "alignment": harm.alignment(llm, human),
             **harm_analyses.analyses(llm, human)}
    return {"harm": block}


def test_the_section_tables_of_raters_and_of_the_gap_per_provider():
    summary = _summary()
    assert {"rater_agreement", "gap_by_provider"} <= set(summary["harm"])
    matrix, shown, humans = paper_raters.rater_kappa_matrix(summary)
    assert (shown, humans) == (3, 3) and list(matrix.index) == [GOOD, OVER, RANDOM, H1, H2, H3]
    assert matrix.loc[H1, H2] == pytest.approx(1.0) and np.isnan(matrix.loc[H1, H3])
    table = paper_raters.provider_gap_table(summary).set_index(["attribute", "provider"])
    assert table.loc[("gender", "OpenAI (inferred)"), "estimate"] == pytest.approx(2.0)
    assert table.loc[("income", "OpenAI (inferred)"), "estimate"] == pytest.approx(2.0)  # the same associations
    assert table.loc[("gender", "Anthropic (inferred)"), "estimate"] == pytest.approx(0.0)
    pairs = paper_raters.rater_pair_table(summary)
    assert set(pairs.loc[pairs["why empty"] != "", "rater B"]) == {H3}
    text = "\n".join(paper_report.section(summary).blocks)
    assert "humans as individual raters" in text and "per attribute for each judge provider" in text
    assert "does not hold" not in text and "labelled &#x27;humans&#x27;" in text


class _Out:
    def __init__(self) -> None:
        self.texts: list[str] = []

    def add_text(self, text: str) -> None:
        self.texts.append(text)

    def add_figure(self, figure, caption: str = "") -> None:
        self.texts.append(caption)

    def add_table(self, frame, caption: str = "") -> None:
        self.texts.append(caption)


def test_beyond_forty_raters_the_heatmap_keeps_the_judges_and_the_most_active_humans():
    rows = [{"association": k, "rater": f"human:R{r:02d}", "harm": 1 + (i + r) % 5, "realism": "yes"}
            for r in range(45) for i, k in enumerate(KEYS[: 10 + r])]
    human = pd.DataFrame(rows)
    summary = {"harm": {"rater_agreement": rater_agreement.rater_matrix(_judges(), human)}}
    matrix, shown, humans = paper_raters.rater_kappa_matrix(summary)
    assert len(matrix) == paper_raters.MAX_RATERS and (shown, humans) == (37, 45)
    assert "human:R44" in matrix.index and "human:R00" not in matrix.index  # the most associations first
    out = _Out()
    paper_raters.add_rater_heatmap(out, summary, "cite")
    assert "37 of 45 human raters" in out.texts[0]
