"""Ikae et al.'s Tables 1-12 in the paper's own layout, from a study's contact outcomes.

- Tables 1-4: one table per language × dimension (German nationality, German religion, Icelandic nationality,
  Icelandic religion); rows model × contact (No, Positive, Negative), columns Unbiased / Biased / None (%).
- Tables 5-8 (by group) and 9-12 (by scenario): pooled over the models and the contact types, as the paper
  does; columns Biased / Neutral / Unbiased (%), rows by biased rate, highest first.

Percentages are over every answer, "none" included, as in the paper. What we add is marked as ours: ``n``
(answers) and, beside the pooled tables, the same table per model. An answer stored once counts once
(:func:`biasatlas.probes.contact.analysis.distinct_answers`).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from biasatlas.probes.contact.analysis import DECISIONS, distinct_answers
from biasatlas.stats.proportions import rate_table

#: the paper's table numbers: (language, dimension) -> (Tables 1-4, by group 5-8, by scenario 9-12)
NUMBERS = {("de", "nationality"): (1, 6, 10), ("de", "religion"): (2, 5, 9), ("is", "nationality"): (3, 7, 12),
           ("is", "religion"): (4, 8, 11)}
LANGUAGE_NAMES = {"de": "German", "is": "Icelandic"}
CONTACT_NAMES = {"none": "No", "positive": "Positive", "negative": "Negative"}
N_OURS = "n (ours)"


def _rates(frame: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Rates per ``by``; a study that asked in two modes keeps them apart (a model's answers never counted twice)."""
    if "mode" in frame.columns and frame["mode"].nunique() > 1 and "model" not in by:
        by = ["mode", *by]
    return rate_table(distinct_answers(frame, by), by, "decision", DECISIONS)


def _model(frame: pd.DataFrame) -> pd.Series:
    """The model, with its mode where a study holds one model in several modes (never two modes pooled)."""
    if "mode" in frame.columns and frame.groupby("model")["mode"].nunique().max() > 1:
        return frame["model"].astype(str) + " (" + frame["mode"].astype(str) + ")"
    return frame["model"].astype(str)


def conditions(outcomes: pd.DataFrame) -> list[tuple[str, str]]:
    """The paper's language × dimension conditions the study holds, in the paper's order."""
    have = set(outcomes[["language", "axis"]].drop_duplicates().itertuples(index=False, name=None))
    return [c for c in NUMBERS if c in have]


def table_by_contact(outcomes: pd.DataFrame, language: str, axis: str) -> pd.DataFrame:
    """Tables 1-4: rows model × contact, columns Unbiased / Biased / None (%), and n (ours)."""
    sub = outcomes[(outcomes["language"] == language) & (outcomes["axis"] == axis)]
    sub = sub.assign(model=_model(sub))
    rates = _rates(sub, ["model", "contact"])
    rates["_order"] = rates["contact"].map({"none": 0, "positive": 1, "negative": 2})
    rates = rates.sort_values(["model", "_order"], kind="stable")
    return pd.DataFrame({
        "Model": rates["model"].to_numpy(),
        "Contact": rates["contact"].map(CONTACT_NAMES).fillna(rates["contact"]).to_numpy(),
        "Unbiased": rates["unbiased_pct"].round(1).to_numpy(),
        "Biased": rates["biased_pct"].round(1).to_numpy(),
        "None": rates["none_pct"].round(1).to_numpy(),
        N_OURS: rates["n"].to_numpy(),
    })


def table_pooled(outcomes: pd.DataFrame, language: str, axis: str, by: str, *,
                 per_model: bool = False) -> pd.DataFrame:
    """Tables 5-8 (``by="group"``) or 9-12 (``by="scenario"``): pooled over models and contact types, columns
    Biased / Neutral / Unbiased (%) and n (ours), highest biased rate first; ``per_model``: one block per model
    (ours, not the paper's)."""
    sub = outcomes[(outcomes["language"] == language) & (outcomes["axis"] == axis)]
    keys = ["model", by] if per_model else [by]
    if per_model:
        sub = sub.assign(model=_model(sub))
    rates = _rates(sub, keys)
    rates = rates.sort_values([*keys[:-1], "biased_pct", by], ascending=[*([True] * (len(keys) - 1)), False, True],
                              kind="stable")
    out = pd.DataFrame({by.capitalize(): rates[by].to_numpy(), "Biased (%)": rates["biased_pct"].round(2).to_numpy(),
                        "Neutral (%)": rates["none_pct"].round(2).to_numpy(),
                        "Unbiased (%)": rates["unbiased_pct"].round(2).to_numpy(), N_OURS: rates["n"].to_numpy()})
    if per_model:
        out.insert(0, "Model", rates["model"].to_numpy())
    elif "mode" in rates.columns:
        out.insert(0, "Mode", rates["mode"].to_numpy())
    return out


def add_to_section(section: Any, outcomes: pd.DataFrame) -> None:
    """Tables 1-12 of Ikae et al. in the paper's layout, for the conditions the study holds (each with its CSV and
    LaTeX copy); beside each pooled table the same table per model, marked as ours."""
    held = conditions(outcomes)
    if not held:
        return
    section.add_text("As in Ikae et al., 2025: the paper's Tables 1-12 in its layout (per language × dimension; Tables "
                     "5-12 pooled over the models and contact types, as the paper does). n and the per-model "
                     "tables are ours.")
    for language, axis in held:
        section.add_table(table_by_contact(outcomes, language, axis), caption(language, axis, "contact"))
    for kind in ("group", "scenario"):
        for language, axis in held:
            section.add_table(table_pooled(outcomes, language, axis, kind), caption(language, axis, kind))
            section.add_table(table_pooled(outcomes, language, axis, kind, per_model=True),
                              f"{caption(language, axis, kind)}: per model (ours, not in the paper)")


def caption(language: str, axis: str, kind: str) -> str:
    """The caption naming the paper's table: ``kind`` contact, group or scenario."""
    first, group, scenario = NUMBERS[(language, axis)]
    number = {"contact": first, "group": group, "scenario": scenario}[kind]
    condition = f"{LANGUAGE_NAMES[language]} {axis.capitalize()}"
    what = {"contact": "Response distribution (%) by contact type for each model",
            "group": f"Biased, neutral and unbiased responses by {'religion' if axis == 'religion' else 'nationality'}"
                     ", aggregated over the models and contact types",
            "scenario": "Bias distribution by scenario, aggregated over the models and contact conditions"}[kind]
    return f"As in Ikae et al., 2025, Table {number}: {what}, {condition} condition (n: ours)"


def heatmap_panels(outcomes_frame: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """(title, answers) of each panel of Raj et al.'s Figure 3 (axis × scenario): per model · mode, and · language
    where the study holds several (the paper's figure is English only: languages are never pooled in a panel)."""
    keys = panel_keys(outcomes_frame)
    return [(" · ".join(map(str, key)), sub) for key, sub in outcomes_frame.groupby(keys, sort=True)]


def panel_keys(outcomes_frame: pd.DataFrame) -> list[str]:
    """What makes a panel of Figure 3: model and mode, and language where the study holds several."""
    return ["model", "mode", *(["language"] if outcomes_frame["language"].nunique() > 1 else [])]
