"""The section "As in Le Jeune et al., 2025" on a planted study: each table has the paper's layout and
recovers what was planted.

Planted (as in test_harm_analyses): 30 associations, the first 10 harmful (and 25, rated by judges only).
Associations 0-19 link age to education, 20-29 gender to income. Six human raters rate 0-24, giving 4 on
harmful ones (one rater gives 5 on a third of them) and 1-2 on benign ones. Three judges rate all 30, three
samples each: B gives 5 on harmful ones (more 5s than the humans), C and A give 4; A also generated 0-19 and
rates 8 of its own harmful ones 2; all three give 4 on the human-rated gender ones (20-24), which humans rate
1-2: the judges overestimate harm on gender. Generators: gpt-4o-mini (OpenAI) 0-19, a Qwen model (Alibaba)
10-29, claude-x (Anthropic) 20-24. Per language: association 0 (harmful) holds in French only, 12 and 13
(benign) in English only, 1 (harmful) in English and French, one unrated association in German only.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from biasatlas.probes.stories import harm, harm_analyses, paper_report
from biasatlas.report.html import write_report

KEYS = [f"age=a{i} -> education=e{i}" for i in range(20)] + [f"gender=g{i} -> income=n{i}" for i in range(20, 30)]
HARMFUL = set(KEYS[:10]) | {KEYS[25]}
A, B, C = "gpt-4o-mini", "judge-b", "judge-c"
QWEN, CLAUDE = "local:Qwen/Qwen2.5-7B@abc", "claude-x"
BLIND = set(KEYS[:8])
UNRATED = "religion=r1 -> urbanicity=u1"


def _humans() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    for r in range(6):
        for i, key in enumerate(KEYS[:25]):
            value = (5 if r == 0 and i % 3 == 0 else 4) if key in HARMFUL else int(rng.choice([1, 2]))
            rows.append({"association": key, "rater": f"human:{r}", "harm": value,
                         "realism": "no" if key in HARMFUL else "yes"})
    return pd.DataFrame(rows)


def _judges() -> pd.DataFrame:
    rows = []
    for i, key in enumerate(KEYS):
        bad = key in HARMFUL
        gender = 20 <= i < 25  # benign for the humans
        high = 4 if bad or gender else 1
        for rater, value in ((A, 2 if key in BLIND else high), (B, 5 if bad else high), (C, high)):
            rows += [{"association": key, "rater": rater, "harm": value, "realism": "not sure"}] * 3
    return pd.DataFrame(rows)


def _record(model: str | None, key: str, languages: list[str] | None = None) -> dict[str, object]:
    a, av, b, bv = harm.parse_key(key)
    out: dict[str, object] = {"base_attribute": a, "base_value": av, "compared_attribute": b, "compared_value": bv}
    if model is not None:
        out["model"] = model
    if languages is not None:
        out["languages"] = languages
    return out


def _per_model() -> list[dict[str, object]]:
    return ([_record(A, k) for k in KEYS[:20]] + [_record(QWEN, k) for k in KEYS[10:30]]
            + [_record(CLAUDE, k) for k in KEYS[20:25]])


def _per_language() -> list[dict[str, object]]:
    return [_record(None, KEYS[0], ["fr"]), _record(None, KEYS[1], ["en", "fr"]), _record(None, KEYS[12], ["en"]),
            _record(None, KEYS[13], ["en"]), _record(None, UNRATED, ["de"])]


def _summary(with_humans: bool = True) -> dict[str, object]:
    llm = _judges()
    human = _humans() if with_humans else pd.DataFrame(columns=["association", "rater", "harm", "realism"])
    block: dict[str, object] = {"human_ratings": len(human), "alignment": harm.alignment(llm, human),
                                **harm_analyses.analyses(llm, human, _per_model())}
    records = _per_language()
    labels = harm.harm_labels(human if with_humans else llm)
    groups = {"fr": {"unmarked": [], "marked": ["age=a0"]}}
    spec = harm.language_specificity(pd.DataFrame(records), labels, groups)
    return {"per_model": _per_model(), "harm": block,
            "per_language": {"associations": records, "specificity": spec}}


def test_harmful_and_benign_per_model_grouped_by_provider():
    table = paper_report.provider_table(_summary())
    assert list(table.columns) == ["provider", "provider from", "model", "harmful", "benign", "unrated (ours)",
                                   "estimate", "ci_low", "ci_high", "n"]
    assert list(table["provider"]) == ["OpenAI", "Alibaba", "Anthropic"]  # most harmful provider first
    assert set(table["provider from"]) == {"inferred from the name"}  # no audit file named one


def test_a_provider_the_audit_file_names_is_said_so():
    summary = _summary()
    summary["harm"]["by_provider"][0] = {**summary["harm"]["by_provider"][0], "inferred": False}
    table = paper_report.provider_table(summary)
    first = summary["harm"]["by_provider"][0]["provider"]
    assert set(table.loc[table["provider"] == first, "provider from"]) == {"audit file"}
    rows = table.set_index("model")
    assert (rows.loc[A, "harmful"], rows.loc[A, "benign"]) == (10, 10)
    assert (rows.loc[QWEN, "harmful"], rows.loc[QWEN, "benign"]) == (1, 19)  # the judges-only harmful one, 25
    assert rows.loc[CLAUDE, "harmful"] == 0 and rows.loc[CLAUDE, "n"] == 5
    assert rows.loc[A, "estimate"] == pytest.approx(0.5) and rows.loc[A, "ci_low"] < 0.5 < rows.loc[A, "ci_high"]


def test_llm_minus_human_gap_per_attribute():
    table = paper_report.gap_table(_summary())
    assert list(table.columns) == ["attribute", "estimate", "ci_low", "ci_high", "n"]
    rows = table.set_index("attribute")
    assert set(rows.index) == {"age", "education", "gender", "income"}
    assert rows.loc["gender", "estimate"] > 1 and rows.loc["gender", "ci_low"] > 0  # planted overestimate
    assert rows.loc["age", "estimate"] < rows.loc["gender", "estimate"]
    assert rows.loc["gender", "n"] == 5  # humans rate 20-24 of the gender ones
    assert list(table["estimate"]) == sorted(table["estimate"])  # most underestimated first


def test_llm_judges_use_the_top_score_more_than_the_planted_humans():
    table = paper_report.top_score_table(_summary())
    assert list(table.columns) == ["raters", "estimate", "ci_low", "ci_high", "n", "ratio to humans",
                                   "p (Holm, ours)"]
    rows = table.set_index("raters")
    humans = _humans()
    assert rows.loc["humans (pooled)", "estimate"] == pytest.approx((humans["harm"] == 5).mean())
    assert rows.loc[B, "estimate"] == pytest.approx(11 / 30) and rows.loc[B, "ratio to humans"] > 1
    assert rows.loc[B, "p (Holm, ours)"] < 0.05 and rows.loc[C, "estimate"] == 0
    assert rows.loc["LLM judges (pooled)", "n"] == 270
    assert rows.loc["LLM judges (pooled)", "estimate"] > rows.loc["humans (pooled)", "estimate"]


def test_agreement_tables_and_heatmap():
    summary = _summary()
    matrix = paper_report.agreement_matrix(summary)
    assert list(matrix.index) == list(matrix.columns) and {A, B, C, "humans"} <= set(matrix.index)
    assert matrix.loc[B, C] == 1.0 and matrix.loc[A, B] == pytest.approx(22 / 30, abs=1e-4)
    table = paper_report.agreement_table(summary).set_index("raters")
    assert table.loc["among LLM judges", "rater pairs"] == 3
    assert table.loc["among human raters (each a rater)", "rater pairs"] == 15
    assert table.loc["among human raters (each a rater)", "estimate"] == pytest.approx(1.0)  # planted: alike
    assert 0 < table.loc["humans (panel) vs LLM judges (pooled)", "estimate"] <= 1


def test_realism_and_self_judgment():
    summary = _summary()
    realism = paper_report.realism_table(summary).set_index(["raters", "realism"])
    assert realism.loc[("humans", "no"), "n"] == 150 and realism.loc[("humans", "no"), "estimate"] == 0.4
    assert realism.loc[("humans", "no"), "median harm"] >= 4 > realism.loc[("humans", "yes"), "median harm"]
    assert realism.loc[("LLM judges", "not sure"), "estimate"] == 1.0
    gap = paper_report.self_judgment_table(summary)
    assert list(gap["model"]) == [A] and gap.loc[0, "provider"] == "OpenAI"
    assert gap.loc[0, "own associations rated harmful by itself"] == 2 and gap.loc[0, "n"] == 20
    assert gap.loc[0, "harmful by the other judges (ours)"] == pytest.approx(0.5)


def test_language_exclusive_counts_per_language():
    labels = {KEYS[0]: True, KEYS[1]: True, KEYS[12]: False, KEYS[13]: False}
    table = paper_report.language_exclusive(_per_language(), labels)
    assert list(table.columns) == ["language", "harmful", "benign", "unrated", "total"]
    rows = table.set_index("language")
    assert rows.loc["fr"].to_dict() == {"harmful": 1, "benign": 0, "unrated": 0, "total": 1}
    assert rows.loc["en"].to_dict() == {"harmful": 0, "benign": 2, "unrated": 0, "total": 2}
    assert rows.loc["de", "unrated"] == 1
    assert list(table["language"]) == ["en", "de", "fr"]  # most first, then by name
    # an association shared by two languages is exclusive to neither; a repeated record counts once
    assert paper_report.language_exclusive([_record(None, KEYS[1], ["en", "fr"])], labels).empty
    twice = paper_report.language_exclusive([_record(None, KEYS[0], ["fr"])] * 2, labels)
    assert twice["total"].tolist() == [1]


def test_reach_and_marked_shift():
    summary = _summary()
    reach = paper_report.reach_table(summary).set_index("languages")
    assert reach.loc[1, "harmful associations"] == 1 and reach.loc[2, "harmful associations"] == 1
    assert reach.loc[1, "benign associations"] == 2 and reach.loc[1, "benign share"] == 1.0
    shift = paper_report.shift_table(summary)
    assert list(shift.columns) == ["language", "group", "status", "harmful (native language)",
                                   "harmful (other languages, mean)", "shift"]
    row = shift.set_index("group").loc["age=a0"]
    assert row["harmful (native language)"] == 1 and row["shift"] == pytest.approx(1.0)


def _texts(section) -> str:
    return "\n".join(section.blocks)


def test_section_renders_with_human_ratings(tmp_path):
    section = paper_report.section(_summary())
    assert section.title == "Stories: as in Le Jeune et al., 2025"
    text = _texts(section)
    assert text.count("<figure>") == 10  # providers, gap (pooled, per provider), heatmaps (panel, raters), top
    # score, reach, Jaccard, exclusive, shift
    assert ": needs" not in text
    assert "Le Jeune et al., 2025" in text
    assert not re.search(r"#\d|\.py\b|src/|issue", text)  # no issue numbers, no file paths
    path = write_report(tmp_path, [section], publish=False)
    assert "As in Le Jeune et al., 2025" in path.read_text()


def test_section_says_what_is_needed_without_human_ratings(tmp_path):
    section = paper_report.section(_summary(with_humans=False))
    text = _texts(section)
    assert "LLM − human harm gap per attribute: needs human ratings" in text
    assert "Use of the top score (5) by LLM judges vs humans: needs human ratings" in text
    assert "Agreement among human raters: needs" in text
    assert "no human ratings" in text
    assert "Harmful and benign associations per model" in text  # judges' labels still give it
    write_report(tmp_path, [section], publish=False)


def test_section_without_harm_or_languages_is_lines_only():
    section = paper_report.section({"per_model": _per_model()})
    text = _texts(section)
    assert "<figure>" not in text and "<table" not in text
    assert "need harm ratings" in text and "need stories in more than one language" in text
    assert "need story profiles that carry their scenario" in text  # the scenario explorer
    assert "no human ratings" not in text and text.count("<p>") == 4


def test_summary_from_a_store_feeds_the_section(tmp_path):
    """The report's hook: the summary parts built from the mined associations and the stored ratings."""
    from types import SimpleNamespace

    from biasatlas.backends.fake import FakeBackend
    from biasatlas.records import GenerationSettings
    from biasatlas.runner import run_plan
    from biasatlas.store import Store

    store = Store(tmp_path)
    keys = ["income_level=low -> education=basic", "age=senior -> employment_status=retired",
            "gender=non_binary -> professional_field=arts", "urbanicity=rural -> professional_field=agriculture"]
    for name, value in (("gpt-4o", "Harm: 5\nRealistic: no"), ("judge-2", "Harm: 1\nRealistic: yes")):
        run_plan(harm.judge_prompts(keys), FakeBackend(lambda r, v=value: v, name=name), store,
                 GenerationSettings(max_tokens=20, temperature=0.7), samples=2, progress=False)
    glob = SimpleNamespace(per_slice=pd.DataFrame([_record("fake:gpt-4o", k) for k in keys]),
                           associations=pd.DataFrame([{**_record(None, k), "models": ["fake:gpt-4o"]} for k in keys]))
    per = SimpleNamespace(associations=pd.DataFrame([_record(None, keys[0], ["fr"]),
                                                     _record(None, keys[1], ["en", "fr"])]))
    summary = paper_report.summary_from(store, glob, per)
    assert {"per_model", "per_language", "harm"} <= set(summary)
    table = paper_report.language_exclusive(summary["per_language"]["associations"],
                                            paper_report.harm_labels(summary))
    assert table.to_dict("records") == [{"language": "fr", "harmful": 0, "benign": 1, "unrated": 0, "total": 1},
                                        {"language": "en", "harmful": 0, "benign": 0, "unrated": 0, "total": 0}]
    gap = paper_report.self_judgment_table(summary)
    assert gap.loc[0, "own associations rated harmful by itself"] == 4 and gap.loc[0, "provider"] == "OpenAI"
    assert "<figure>" in "".join(paper_report.section(summary).blocks)
    rated = paper_report.global_table(summary).set_index("association")
    assert len(rated) == 4 and set(rated["rated by"]) == {"LLM judges"}  # the two judges' median: 5 and 1
    assert paper_report.jaccard_table(summary).loc["en", "fr"] == pytest.approx(1 / 2)


def _global() -> list[dict[str, object]]:
    """Global associations: KEYS[0] (harmful, human-rated) held by three models, KEYS[12] (benign) by one,
    KEYS[25] (harmful by the judges only) by two, and one no rater rated."""
    return [{**_record(None, KEYS[12]), "models": [A]}, {**_record(None, KEYS[0]), "models": [A, B, C]},
            {**_record(None, KEYS[25]), "models": [A, QWEN]}, {**_record(None, UNRATED), "models": [A]}]


def test_the_global_association_table_in_the_papers_layout():
    table = paper_report.global_table({**_summary(), "associations": _global()})
    assert list(table.columns) == ["association", "base attribute", "compared attribute", "models",
                                   "model names", "harm", "rated by"]
    assert list(table["models"]) == [3, 2, 1, 1]  # most models first
    rows = table.set_index("association")
    assert rows.loc["age: a0 → education: e0", ["harm", "rated by"]].tolist() == ["harmful", "humans"]
    assert rows.loc["gender: g25 → income: n25", ["harm", "rated by"]].tolist() == ["harmful", "LLM judges"]
    assert rows.loc["age: a12 → education: e12", "harm"] == "benign"
    assert rows.loc["religion: r1 → urbanicity: u1", ["harm", "rated by"]].tolist() == ["unrated", ""]
    assert rows.loc["age: a0 → education: e0", "model names"] == f"{A}, {B}, {C}"


def test_the_per_language_table_and_the_jaccard_heatmap():
    summary = _summary()
    table = paper_report.per_language_table(summary)
    assert list(table.columns) == ["association", "base attribute", "compared attribute", "languages",
                                   "language names", "harm", "rated by"]
    assert table.iloc[0]["association"] == "age: a1 → education: e1" and table.iloc[0]["languages"] == 2
    jaccard = paper_report.jaccard_table(summary)  # planted: en {1, 12, 13}, fr {0, 1}, de {unrated}
    assert list(jaccard.index) == list(jaccard.columns) == ["de", "en", "fr"]
    assert jaccard.loc["en", "fr"] == pytest.approx(1 / 4) and jaccard.loc["de", "en"] == 0
    assert jaccard.loc["fr", "fr"] == 1
    given = {**summary, "per_language": {**summary["per_language"], "jaccard": jaccard.to_dict()}}
    assert paper_report.jaccard_table(given).equals(jaccard)  # the summary's own matrix where it has one
    section = paper_report.section({**summary, "associations": _global()})
    text = _texts(section)
    assert "Jaccard similarity of the association sets between languages" in text
    assert text.count("<figure>") == 10
    assert "all significant associations of the global aggregation" in text
    assert "all significant associations of the per-language aggregation" in text
