"""Ikae et al.'s Tables 1-12 in the paper's layout, on a planted study: rows, columns, pooling and n."""

from __future__ import annotations

from itertools import product
from typing import Any

import pandas as pd

from biasatlas.probes.contact import paper_tables as pt

CONTACTS = ("none", "positive", "negative")


def _planted() -> pd.DataFrame:
    """Two models × German religion (two groups) and nationality (one group), 2 scenarios × 3 framings × 10
    answers each. Model a answers Muslims biased 4 in 10 times under no contact and never otherwise; model b
    answers everything unbiased, except one 'none' per Jewish cell. Nationality: every answer biased."""
    rows: list[dict[str, Any]] = []
    for model, (axis, group), scenario, contact, i in product(
            ("a", "b"), (("religion", "Muslims"), ("religion", "Jews"), ("nationality", "Syria")),
            ("workplace", "sports"), CONTACTS, range(10)):
        decision = "unbiased"
        if axis == "nationality" or (model == "a" and group == "Muslims" and contact == "none" and i < 4):
            decision = "biased"
        elif model == "b" and group == "Jews" and i == 0:
            decision = "none"
        rows.append({"model": model, "mode": "generate", "language": "de", "axis": axis, "group": group,
                     "scenario": scenario, "contact": contact, "decision": decision,
                     "key": f"{model}-{group}-{scenario}-{contact}-{i}"})
    return pd.DataFrame(rows)


def test_tables_1_4_one_table_per_language_and_dimension_rows_model_by_contact() -> None:
    out = _planted()
    assert pt.conditions(out) == [("de", "nationality"), ("de", "religion")]  # Tables 1 and 2, in the paper's order
    table = pt.table_by_contact(out, "de", "religion")
    assert list(table.columns) == ["Model", "Contact", "Unbiased", "Biased", "None", "n (ours)"]
    assert list(zip(table["Model"], table["Contact"], strict=True)) == [
        ("a", "No"), ("a", "Positive"), ("a", "Negative"), ("b", "No"), ("b", "Positive"), ("b", "Negative")]
    a_none = table.iloc[0]
    assert (a_none["Biased"], a_none["Unbiased"], a_none["None"], a_none["n (ours)"]) == (20.0, 80.0, 0.0, 40)
    b_none = table.iloc[3]  # one 'none' in every 10 Jewish answers: 2 of 40 religion answers
    assert (b_none["None"], b_none["Unbiased"]) == (5.0, 95.0)
    assert set(pt.table_by_contact(out, "de", "nationality")["Biased"]) == {100.0}  # nationality not pooled in
    assert pt.caption("de", "religion", "contact").startswith("As in Ikae et al., 2025, Table 2: ")


def test_tables_5_12_pool_the_models_and_contact_types_highest_bias_first() -> None:
    out = _planted()
    groups = pt.table_pooled(out, "de", "religion", "group")
    assert list(groups.columns) == ["Group", "Biased (%)", "Neutral (%)", "Unbiased (%)", "n (ours)"]
    assert list(groups["Group"]) == ["Muslims", "Jews"]  # by biased rate, highest first
    muslims, jews = groups.iloc[0], groups.iloc[1]
    # pooled over both models and the three framings: 8 biased of 120 answers
    assert muslims["n (ours)"] == 120 and round(muslims["Biased (%)"], 2) == round(100 * 8 / 120, 2)
    assert jews["n (ours)"] == 120 and round(jews["Neutral (%)"], 2) == round(100 * 6 / 120, 2)
    scenarios = pt.table_pooled(out, "de", "religion", "scenario")
    assert scenarios.columns[0] == "Scenario" and set(scenarios["Scenario"]) == {"workplace", "sports"}
    assert list(scenarios["n (ours)"]) == [120, 120]
    ours = pt.table_pooled(out, "de", "religion", "group", per_model=True)
    assert list(ours.columns)[:2] == ["Model", "Group"] and len(ours) == 4 and set(ours["n (ours)"]) == {60}
    assert pt.caption("de", "religion", "group").startswith("As in Ikae et al., 2025, Table 5: ")
    assert pt.caption("de", "nationality", "scenario").startswith("As in Ikae et al., 2025, Table 10: ")


def test_the_report_block_holds_each_table_once_with_its_per_model_copy() -> None:
    class Section:
        def __init__(self) -> None:
            self.captions: list[str] = []

        def add_text(self, text: str) -> None:
            self.captions.append("text")

        def add_table(self, frame: pd.DataFrame, caption: str = "", **_: Any) -> None:
            self.captions.append(caption)

    section = Section()
    pt.add_to_section(section, _planted())
    tables = [c for c in section.captions if c != "text"]
    assert [c.split(":")[0] for c in tables] == [
        "As in Ikae et al., 2025, Table 1", "As in Ikae et al., 2025, Table 2",
        "As in Ikae et al., 2025, Table 6", "As in Ikae et al., 2025, Table 6", "As in Ikae et al., 2025, Table 5",
        "As in Ikae et al., 2025, Table 5", "As in Ikae et al., 2025, Table 10", "As in Ikae et al., 2025, Table 10",
        "As in Ikae et al., 2025, Table 9", "As in Ikae et al., 2025, Table 9"]
    assert sum("per model (ours, not in the paper)" in c for c in tables) == 4
    english = _planted().assign(language="en")
    empty = Section()
    pt.add_to_section(empty, english)  # no condition of the paper: nothing added
    assert empty.captions == []


def test_figure_3_panels_never_pool_languages() -> None:
    german = _planted().assign(biased=lambda f: f["decision"] == "biased", prompt_id=range(360))
    both = pd.concat([german, german.assign(language="is")], ignore_index=True)
    assert [title for title, _ in pt.heatmap_panels(both)] == [
        "a · generate · de", "a · generate · is", "b · generate · de", "b · generate · is"]
    assert all(sub["language"].nunique() == 1 for _, sub in pt.heatmap_panels(both))
    assert [title for title, _ in pt.heatmap_panels(german)] == ["a · generate", "b · generate"]  # one language
