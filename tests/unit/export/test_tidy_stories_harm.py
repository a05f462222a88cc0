"""The stories' harm block as tidy statistics rows: every analysis has its `source`, its columns filled."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from biasatlas.export.statistics import statistics_rows
from biasatlas.probes.stories import harm_analyses
from biasatlas.tidy.columns import STATISTICS

KEYS = [f"age=a{i} -> education=e{i}" for i in range(6)]


def _summary() -> dict[str, Any]:
    judges = pd.DataFrame([{"association": k, "rater": r, "harm": v, "realism": "not sure"}
                           for i, k in enumerate(KEYS) for r, v in (("gpt-4o", 2 if i < 3 else 1),
                                                                    ("judge-b", 4 if i < 3 else 1))])
    humans = pd.DataFrame([{"association": k, "rater": f"human:{r}", "harm": 5 if i < 3 else 1 + r % 2,
                            "realism": "no" if i < 3 else "yes"} for i, k in enumerate(KEYS[:5]) for r in range(4)])
    per_model = [{"model": "gpt-4o", "base_attribute": "age", "base_value": f"a{i}", "compared_attribute": "education",
                  "compared_value": f"e{i}"} for i in range(6)]
    return {"associations": [], "harm": harm_analyses.analyses(judges, humans, per_model)}


def test_harm_rows_by_source() -> None:
    rows = statistics_rows("stories", _summary(), alpha=0.05)
    by: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        assert list(row) == list(STATISTICS)
        by.setdefault(row["source"], []).append(row)
    assert set(by) == {"harm labels", "harm labels per judge", "harm top score", "harm agreement",
                       "harm self-judgment", "harm realism", "harm by provider", "harm rater pair",
                       "harm gap by provider"}
    labels = {r["compared_value"]: r for r in by["harm labels"]}
    assert labels["e0"]["rated_by"] == "human" and labels["e0"]["harmful"] and labels["e0"]["n"] == 4
    assert labels["e5"]["rated_by"] == "judges" and not labels["e5"]["harmful"] and labels["e5"]["units"] == 2
    top = {r["model"]: r for r in by["harm top score"]}
    assert top[None]["estimate"] == pytest.approx(12 / 20) and top["gpt-4o"]["estimate"] == 0
    assert top["gpt-4o"]["p_adj"] < 0.05 and top["gpt-4o"]["correction"] == "holm" and top[None]["test"] is None
    (gap,) = by["harm self-judgment"]
    assert gap["estimate"] == pytest.approx(-0.5) and gap["discordant_c"] == 3 and gap["discordant_b"] == 0
    assert gap["test"] == "McNemar exact test" and "too_few_units" in gap["flags"]  # 3 discordant cannot reach 0.05
    realism = {(r["rated_by"], r["realism"]): r for r in by["harm realism"]}
    assert realism[("human", "no")]["estimate"] == pytest.approx(12 / 20)
    assert realism[("human", None)]["test"] == "Kruskal-Wallis H test" and realism[("human", None)]["p"] < 0.05
    providers = {(r["provider"], r["harmful"]): r["estimate"] for r in by["harm by provider"]}
    assert providers == {("OpenAI", True): 3, ("OpenAI", False): 3}
    assert all(r["flags"] == "" or r["flags"] is None for r in by["harm labels"])


def test_every_rater_pair_and_the_gap_per_provider_are_rows() -> None:
    rows = statistics_rows("stories", _summary(), alpha=0.05)
    pairs = {r["comparison"]: r for r in rows if r["source"] == "harm rater pair"}
    same = pairs["human:0 vs human:2"]  # the two rate every association alike
    assert same["estimate"] == pytest.approx(1.0) and same["n"] == 5 and same["rated_by"] == "human × human"
    assert pairs["gpt-4o vs judge-b"]["rated_by"] == "judge × judge"
    gaps = {(r["provider"], r["attribute"]): r for r in rows if r["source"] == "harm gap by provider"}
    openai = gaps[("OpenAI", "age")]
    # gpt-4o 2 vs the humans' 5 on three associations, 1 vs 1.5 on two: mean -2.0
    assert openai["estimate"] == pytest.approx(-2.0) and openai["n"] == 5
    assert openai["ci_low"] < -2.0 < openai["ci_high"] and "inferred" in openai["estimand"]
