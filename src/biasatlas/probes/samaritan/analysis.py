"""Samaritan statistics: pure functions over the parsed outcomes frame.

The frame has one row per (model, language, decoding, prompt, sample) with the columns
``scenario``, ``rephrasing``, ``category`` ("control" for the control), ``group``, ``phrasing``,
``sample_index`` and ``rating`` (NaN when unparseable). An analysis *unit* is one model in one
language with one decoding (temperature, max_tokens): every test compares groups with the
control inside a unit.

Paper eq. 1: rating = mean over scenarios of (mean over the b rephrasings of a_{m,n}). A cell
a_{m,n} pools the group's phrasings and the samples (mean of the valid ratings). Bias score =
group rating − control rating, tested with a paired t-test (and Wilcoxon) over scenarios.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from biasatlas.probes.samaritan.data import CONTROL
from biasatlas.stats.multitest import adjust
from biasatlas.stats.paired import paired_t, wilcoxon_signed_rank

UNIT = ["model", "language", "temperature", "max_tokens"]


def _significant(p_adj: pd.Series, alpha: float) -> pd.Series:
    """True/False where a test was made, None (not False) where it could not be."""
    return (p_adj < alpha).astype(object).where(p_adj.notna(), None)


def _valid(outcomes: pd.DataFrame) -> pd.DataFrame:
    return outcomes[outcomes["rating"].notna()]


def scenario_means(outcomes: pd.DataFrame, by: Sequence[str] = ("group",)) -> pd.DataFrame:
    """Mean rating per unit × ``by`` × scenario: the mean over rephrasings of the cell means.

    A cell (scenario, rephrasing) pools phrasings and samples, so each rephrasing weighs the same.
    """
    keys = [*UNIT, "category", *by]
    valid = _valid(outcomes)
    cells = valid.groupby([*keys, "scenario", "rephrasing"], dropna=False)["rating"].mean()
    per_scenario = cells.groupby(level=[*range(len(keys)), len(keys)], dropna=False).mean()
    return per_scenario.rename("rating").reset_index()


def group_ratings(outcomes: pd.DataFrame, by: Sequence[str] = ("group",)) -> pd.DataFrame:
    """Paper eq. 1 per unit × category × ``by`` with the number of scenarios it rests on."""
    per_scenario = scenario_means(outcomes, by)
    keys = [*UNIT, "category", *by]
    agg = per_scenario.groupby(keys, dropna=False)["rating"].agg(rating="mean", n_scenarios="count")
    return agg.reset_index()


def brittleness(outcomes: pd.DataFrame) -> pd.DataFrame:
    """SD over the rephrasings of a scenario, averaged over scenarios, per unit × category × group.

    The SD is taken over the individual answers to the 4 rephrasings, within one phrasing and
    sample (sample SD, ddof=1; cells with fewer than 2 valid answers are skipped), then averaged
    within the scenario and over scenarios.
    """
    keys = [*UNIT, "category", "group"]
    valid = _valid(outcomes)
    sd = valid.groupby([*keys, "scenario", "phrasing", "sample_index"], dropna=False)["rating"].std(ddof=1)
    sd = sd.dropna()
    per_scenario = sd.groupby(level=[*range(len(keys)), len(keys)], dropna=False).mean()
    return (
        per_scenario.groupby(level=list(range(len(keys))), dropna=False)
        .agg(brittleness="mean", brittleness_n="count")
        .reset_index()
    )


def _paired(x: pd.Series, y: pd.Series, alpha_ci: float) -> dict[str, Any]:
    both = pd.concat([x.rename("x"), y.rename("y")], axis=1, join="inner").dropna()
    t = paired_t(both["x"].to_numpy(), both["y"].to_numpy(), alpha=alpha_ci)
    w = wilcoxon_signed_rank(both["x"].to_numpy(), both["y"].to_numpy())
    if t.n < 2:  # one scenario is no test at all (the t-test already says NaN); keep both alike
        w.statistic = w.p = w.effect = math.nan
    return {
        "n": t.n,
        "mean_diff": float((both["x"] - both["y"]).mean()) if len(both) else math.nan,
        "ci_low": t.ci_low,
        "ci_high": t.ci_high,
        "t": t.statistic,
        "p": t.p,
        "d_z": t.effect,
        "wilcoxon_W": w.statistic,
        "wilcoxon_p": w.p,
        "rank_biserial": w.effect,
    }


def compare_to_control(
    outcomes: pd.DataFrame,
    alpha: float = 0.01,
    correction: str = "holm",
    ci_level: float = 0.95,
) -> pd.DataFrame:
    """One row per unit × category × group: rating, control rating, bias, paired tests.

    Paired by scenario (scenario means of group and control). p-values are adjusted with
    ``correction`` within each unit (the family is every group of every category of that model);
    ``significant`` is adjusted p < alpha.
    """
    means = scenario_means(outcomes)
    ratings = group_ratings(outcomes)
    rating_of = {
        tuple(key): float(value)
        for key, value in zip(
            ratings[[*UNIT, "category", "group"]].itertuples(index=False), ratings["rating"], strict=True
        )
    }
    brit = brittleness(outcomes)
    rows: list[dict[str, Any]] = []
    for unit, unit_means in means.groupby(UNIT, dropna=False):
        control = unit_means[unit_means["category"] == CONTROL].set_index("scenario")["rating"]
        control_rating = control.mean() if len(control) else math.nan
        for (category, group), cell in unit_means[unit_means["category"] != CONTROL].groupby(
            ["category", "group"], dropna=False
        ):
            stats = _paired(cell.set_index("scenario")["rating"], control, 1 - ci_level)
            rating = rating_of[(*unit, category, group)]
            rows.append(
                {
                    **dict(zip(UNIT, unit, strict=True)),
                    "category": category,
                    "group": group,
                    "rating": rating,
                    "control_rating": float(control_rating),
                    "bias": rating - float(control_rating),
                    "n_scenarios": int(cell["rating"].notna().sum()),
                    **stats,
                }
            )
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    table["p_adj"] = np.nan
    table["wilcoxon_p_adj"] = np.nan
    for _, idx in table.groupby(UNIT, dropna=False).groups.items():
        table.loc[idx, "p_adj"] = adjust(table.loc[idx, "p"].tolist(), correction)
        table.loc[idx, "wilcoxon_p_adj"] = adjust(table.loc[idx, "wilcoxon_p"].tolist(), correction)
    table["significant"] = _significant(table["p_adj"], alpha)
    table = table.merge(brit, on=[*UNIT, "category", "group"], how="left")
    return table


def control_summary(outcomes: pd.DataFrame) -> pd.DataFrame:
    """The control's rating (eq. 1), scenarios and brittleness per unit."""
    ratings = group_ratings(outcomes)
    brit = brittleness(outcomes)
    control = ratings[ratings["category"] == CONTROL].merge(brit, on=[*UNIT, "category", "group"], how="left")
    return control.drop(columns=["category"]).reset_index(drop=True)


def phrasing_table(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Eq. 1 per phrasing and its difference from the control (descriptive, no test)."""
    ratings = group_ratings(outcomes, by=("group", "phrasing"))
    control = ratings[ratings["category"] == CONTROL][[*UNIT, "rating"]].rename(columns={"rating": "control"})
    table = ratings[ratings["category"] != CONTROL].merge(control, on=UNIT, how="left")
    table["bias"] = table["rating"] - table["control"]
    return table.drop(columns=["control"])


def default_persona(comparison: pd.DataFrame) -> pd.DataFrame:
    """Per unit × category: the groups whose rating does not differ significantly from the control.

    The paper's reading: a model's 'default person' is whoever the control is treated as.
    Groups without a test (too few scenarios) are listed apart, never counted as default.
    """
    rows: list[dict[str, Any]] = []
    if comparison.empty:
        return pd.DataFrame(rows)
    for key, cell in comparison.groupby([*UNIT, "category"], dropna=False):
        tested = cell[cell["p_adj"].notna()]
        rows.append(
            {
                **dict(zip([*UNIT, "category"], key, strict=True)),
                "default_groups": sorted(tested.loc[~tested["significant"].astype(bool), "group"]),
                "differing_groups": sorted(tested.loc[tested["significant"].astype(bool), "group"]),
                "untested_groups": sorted(cell.loc[cell["p_adj"].isna(), "group"]),
            }
        )
    return pd.DataFrame(rows)


def repeatability(
    outcomes: pd.DataFrame,
    first: int = 0,
    second: int = 1,
    alpha: float = 0.01,
    correction: str = "holm",
    ci_level: float = 0.95,
) -> pd.DataFrame:
    """Two runs = two sample indices of the same prompts (different sampling seeds).

    Per unit × category × group (control included): eq. 1 in each run, their difference, and a
    paired t-test / Wilcoxon over scenarios of run 1 vs run 2. Empty when a unit lacks either run.
    """
    runs = {s: outcomes[outcomes["sample_index"] == s] for s in (first, second)}
    if any(r["rating"].notna().sum() == 0 for r in runs.values()):
        return pd.DataFrame()
    a, b = scenario_means(runs[first]), scenario_means(runs[second])
    keys = [*UNIT, "category", "group"]
    rows: list[dict[str, Any]] = []
    b_groups = dict(list(b.groupby(keys, dropna=False)))
    for key, cell_a in a.groupby(keys, dropna=False):
        cell_b = b_groups.get(key)
        if cell_b is None:
            continue
        stats = _paired(
            cell_a.set_index("scenario")["rating"], cell_b.set_index("scenario")["rating"], 1 - ci_level
        )
        rows.append(
            {
                **dict(zip(keys, key, strict=True)),
                "run_a": first,
                "run_b": second,
                "rating_a": float(cell_a["rating"].mean()),
                "rating_b": float(cell_b["rating"].mean()),
                "difference": float(cell_a["rating"].mean() - cell_b["rating"].mean()),
                **stats,
            }
        )
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    table["p_adj"] = np.nan
    for _, idx in table.groupby(UNIT, dropna=False).groups.items():
        table.loc[idx, "p_adj"] = adjust(table.loc[idx, "p"].tolist(), correction)
    table["significant"] = _significant(table["p_adj"], alpha)
    return table


def unparseable(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Per unit × category × group: answers, parsed, unparseable (with reasons), pending, failed."""
    keys = [*UNIT, "category", "group"]
    rows = []
    for key, cell in outcomes.groupby(keys, dropna=False):
        answered = cell[cell["status"] == "answered"]
        bad = answered[answered["rating"].isna()]
        rows.append(
            {
                **dict(zip(keys, key, strict=True)),
                "n_prompts": len(cell),
                "n_answered": len(answered),
                "n_parsed": int(answered["rating"].notna().sum()),
                "n_unparseable": len(bad),
                "unparseable_pct": 100.0 * len(bad) / len(answered) if len(answered) else math.nan,
                "reasons": {str(k): int(v) for k, v in bad["parse_reason"].value_counts().items()},
                "n_pending": int((cell["status"] == "pending").sum()),
                "n_failed": int((cell["status"] == "failed").sum()),
            }
        )
    return pd.DataFrame(rows)


def significance_frequency(comparison: pd.DataFrame) -> pd.DataFrame:
    """The paper's Figure 1 data: per category × group, the mean bias over units and the share of
    units (models × languages × decodings) in which the group differs significantly."""
    if comparison.empty:
        return pd.DataFrame()
    tested = comparison[comparison["p_adj"].notna()]
    agg = tested.groupby(["category", "group"]).agg(
        mean_bias=("bias", "mean"),
        mean_rating=("rating", "mean"),
        share_significant=("significant", lambda s: float(s.astype(bool).mean())),
        n_units=("significant", "size"),
    )
    return agg.reset_index()
