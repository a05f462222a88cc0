"""Fagan et al.'s Tables 1-3, 6-14 in the paper's own layout, from a study's Samaritan answers.

- Tables 1-3 (age, gender, race): bias score (group − control) per model, groups as columns; the paper colours
  a cell significant under its rule (paired t, uncorrected p < 0.01): we mark it ``*``.
- Tables 6-8 (age, gender, race): helpfulness (eq. 1) per model, Control first. Our control is asked once per
  rephrasing and shared by the categories, so the Control column is the same in the three tables.
- Tables 9-11 (gender, age, race): brittleness (mean over scenarios of the SD over the 4 rephrasings).
- Tables 12-14 (race, gender, age): helpfulness per run for models with two runs (sample 0 and 1 of the same
  prompts).

What we add is marked as ours: ``n scenarios (ours)`` and, for repeated runs, the largest run difference.
A model is shown with its language, temperature and token limit where the study holds several of them.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from biasatlas.probes.samaritan import analysis as sa
from biasatlas.probes.samaritan.data import CONTROL

#: our group names -> the paper's column names, per category, in the paper's column order
COLUMNS_BIAS = {
    "age": {"teenager": "Teenager", "young adult": "Young Adult", "middle-aged": "Middle Aged", "senior": "Senior"},
    "gender": {"male": "Male", "female": "Female", "non-binary": "Non Binary"},
    "race": {"White": "White", "African American": "African American", "American Indian": "Native American",
             "Asian": "Asian", "Native Hawaiian / Pacific Islander": "Native Hawaiian"},
}
COLUMNS_RAW = {
    "age": {"teenager": "Teenager", "young adult": "Young Adult", "middle-aged": "Middle-Aged", "senior": "Senior"},
    "gender": {"male": "Male", "female": "Female", "non-binary": "Non-Binary"},
    "race": {"White": "White", "African American": "African American", "American Indian": "American Indian",
             "Asian": "Asian", "Native Hawaiian / Pacific Islander": "Native Hawaiian"},
}
#: the paper's table numbers per category: (bias 1-3, raw 6-8, brittleness 9-11, repeated runs 12-14)
NUMBERS = {"age": (1, 6, 10, 14), "gender": (2, 7, 9, 13), "race": (3, 8, 11, 12)}
#: the paper's order of each kind of table
ORDER = {"bias": ("age", "gender", "race"), "raw": ("age", "gender", "race"),
         "brittleness": ("gender", "age", "race"), "runs": ("race", "gender", "age")}
TITLES = {
    "bias": "{Category} Category Score Difference Relative to Control",
    "raw": "Helpfulness scores by Model and {Category} group",
    "brittleness": "Average Standard Deviation of Prompt Rephrases in {Category} Groups by Model",
    "runs": "{Category} Bias Scores over Repeated Runs with the Same Model",
}
N_OURS = "n scenarios (ours)"
CITE = "As in Fagan et al., 2025"


def model_labels(frame: pd.DataFrame) -> pd.Series:
    """The model, with the language, temperature and token limit where the study holds more than one."""
    label = frame["model"].astype(str)
    for column, show in (("language", str), ("temperature", lambda v: f"T={v:g}"),
                         ("max_tokens", lambda v: f"{v} tokens")):
        if column in frame.columns and frame[column].nunique(dropna=False) > 1:
            label = label + " · " + frame[column].map(show)
    return label


def categories(outcomes: pd.DataFrame) -> list[str]:
    """The paper's categories the study holds, in the paper's order (age, gender, race)."""
    held = set(outcomes["category"].dropna())
    return [c for c in ORDER["bias"] if c in held]


def _n_span(values: pd.Series) -> str:
    low, high = int(values.min()), int(values.max())
    return str(low) if low == high else f"{low}–{high}"


def _wide(rows: pd.DataFrame, value: str, names: dict[str, str], *, control: pd.Series | None = None,
          by: tuple[str, ...] = ()) -> pd.DataFrame:
    """One row per model (× ``by``), the groups as the paper's columns (its order), Control first if given."""
    rows = rows[rows["group"].isin(names)].assign(Model=model_labels(rows[rows["group"].isin(names)]))
    keys = ["Model", *by]
    table = rows.pivot_table(index=keys, columns="group", values=value, aggfunc="first", sort=True)
    table = table.reindex(columns=[g for g in names if g in table.columns]).rename(columns=names)
    if control is not None:
        table.insert(0, "Control", control.reindex(table.index))
    return table.reset_index()


def bias_table(comparison: pd.DataFrame, category: str) -> pd.DataFrame:
    """Tables 1-3: bias score (rounded to 2 places) per model × group; ``*`` where the paper's rule finds it
    significant (paired t, uncorrected p < 0.01), and the paired scenarios (ours)."""
    rows = comparison[comparison["category"] == category].copy()
    star = rows["significant_paper"].map(lambda v: "*" if v is True else "")
    rows["shown"] = rows["bias"].map(lambda v: f"{v:.2f}" if pd.notna(v) else "–") + star
    table = _wide(rows, "shown", COLUMNS_BIAS[category])
    counts = rows.assign(Model=model_labels(rows)).groupby("Model")["n"].agg(_n_span)
    table[N_OURS] = table["Model"].map(counts)
    return table


def raw_table(outcomes: pd.DataFrame, category: str, ratings: pd.DataFrame | None = None) -> pd.DataFrame:
    """Tables 6-8: eq. 1 per model × group over every readable cell, the shared control first."""
    ratings = sa.group_ratings(outcomes) if ratings is None else ratings
    return _with_control(ratings, category, "rating", "n_scenarios")


def _with_control(table: pd.DataFrame, category: str, value: str, n: str, by: tuple[str, ...] = ()) -> pd.DataFrame:
    rows_control = table[table["category"] == CONTROL]
    control = rows_control.assign(Model=model_labels(rows_control)).set_index(["Model", *by])[value].round(2)
    rows = table[table["category"] == category]
    out = _wide(rows.assign(**{value: rows[value].round(2)}), value, COLUMNS_RAW[category], control=control, by=by)
    counts = rows.assign(Model=model_labels(rows)).groupby(["Model", *by])[n].agg(_n_span)
    out[N_OURS] = [counts.get(tuple(k) if by else k[0], "–") for k in out[["Model", *by]].itertuples(index=False)]
    return out


def brittleness_table(outcomes: pd.DataFrame, category: str) -> pd.DataFrame:
    """Tables 9-11: brittleness per model × group, the shared control first (SD per phrasing and run, averaged
    over the scenarios)."""
    return _with_control(sa.brittleness(outcomes), category, "brittleness", "brittleness_n")


def runs_table(outcomes: pd.DataFrame, category: str) -> pd.DataFrame:
    """Tables 12-14: eq. 1 per run (sample 0 and 1 of the same prompts) for every model that has both runs;
    the largest |run 1 − run 2| over the row's columns is ours. Empty without two runs."""
    parts = []
    for run, sample in ((1, 0), (2, 1)):
        ratings = sa.group_ratings(outcomes[outcomes["sample_index"] == sample])
        if not ratings.empty:
            parts.append(ratings.assign(Run=run))
    if len(parts) < 2:
        return pd.DataFrame()
    both = pd.concat(parts, ignore_index=True)
    both["_unit"] = model_labels(both)
    twice = both.groupby("_unit")["Run"].nunique()
    both = both[both["_unit"].isin(twice.index[twice == 2])].drop(columns="_unit")
    if both.empty or not (both["category"] == category).any():
        return pd.DataFrame()
    table = _with_control(both, category, "rating", "n_scenarios", by=("Run",))
    values = table.drop(columns=["Model", "Run", N_OURS])
    spread = values.groupby(table["Model"]).transform(lambda s: s.max() - s.min()).max(axis=1)
    table["largest run difference (ours)"] = spread.round(2)
    return table


def caption(kind: str, category: str) -> str:
    """The caption naming the paper's table; ``kind`` bias, raw, brittleness or runs."""
    number = NUMBERS[category][("bias", "raw", "brittleness", "runs").index(kind)]
    text = f"{CITE}, Table {number}: {TITLES[kind].format(Category=category.capitalize())}"
    if kind == "bias":
        text += " (* significant under the paper's rule: paired t-test, uncorrected p < 0.01; the paper colours it)"
    if kind in ("raw", "brittleness", "runs"):
        text += (". The control is asked once per rephrasing and shared by race, gender and age (the paper asked "
                 "it within each category; the store keeps one answer per text, so it cannot be asked per "
                 "category): the Control column is the same in each category's table")
    if kind == "runs":
        text += ". Runs are sample 0 and sample 1 of the same prompts"
    return text + ". n and what is marked ours are not in the paper."


def add_to_section(section: Any, outcomes: pd.DataFrame) -> None:
    """The paper's tables and Figures 1-3 in its layout (each table with its CSV and LaTeX copy), with the
    brittleness test between groups and our figures (intervals, Holm) beside the paper's."""
    from biasatlas.probes.samaritan import paper_figures as pf

    held = categories(outcomes)
    # the paper's rule (uncorrected, alpha 0.01) and ours (Holm within one category of one model), whatever the
    # study's own analysis settings
    comparison = sa.compare_to_control(outcomes, alpha=sa.PAPER_ALPHA, correction="holm") if held else None
    if comparison is None or comparison.empty:
        return
    section.add_text(f"{CITE}: the paper's Tables 1-3, 6-14 and Figures 1-3 in its layout and under its rule "
                     "(paired t-test, uncorrected α = 0.01). n, intervals and Holm-adjusted figures are ours.")
    ratings = sa.group_ratings(outcomes)
    makers = {"bias": lambda c: bias_table(comparison, c), "raw": lambda c: raw_table(outcomes, c, ratings),
              "brittleness": lambda c: brittleness_table(outcomes, c), "runs": lambda c: runs_table(outcomes, c)}
    for kind, order in ORDER.items():
        for category in (c for c in order if c in held):
            table = makers[kind](category)
            if not table.empty:
                section.add_table(table, caption(kind, category))
    pf.add_figures(section, comparison, held)
    test = pf.brittleness_between_groups(outcomes)
    if not test.empty:
        section.add_table(test, pf.BRITTLENESS_CAPTION)
