"""Fagan et al.'s Figures 1-3 under the paper's rule beside ours, and the brittleness test between groups.

The paper's figures put each group at its helpfulness score (x) against the share of models in which it differs
significantly from the control (y; paired t-test, uncorrected p < 0.01). Ours, beside it: the same share after
Holm's adjustment within one category of one model, with a Wilson 95% interval on the share, and a 95% t-interval
over the models on the helpfulness score.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from biasatlas.probes.samaritan import analysis as sa
from biasatlas.probes.samaritan.data import CONTROL
from biasatlas.report.plots import lay_out
from biasatlas.stats.multitest import holm

#: the paper's figure per category (Figure 1 is race, in the body; 2 and 3 in the appendix)
FIGURES = {"race": 1, "age": 2, "gender": 3}
BRITTLENESS_CAPTION = (
    "Does brittleness differ between the groups? (ours; the paper reports that it did not vary significantly, "
    "without a test). Friedman test over the scenarios, per model and category, of the per-scenario brittleness "
    "(SD over the 4 rephrasings) of the control and every group, on the scenarios complete for all of them; "
    "Kendall's W (no tie correction) with a 95% percentile bootstrap interval over scenarios; p Holm-adjusted "
    "over the rows.")


def figure_rows(comparison: pd.DataFrame, ci_level: float = 0.95) -> pd.DataFrame:
    """Per category × group: mean helpfulness over models (with its t-interval: ours), the share of models
    significant under the paper's rule and after Holm (with its Wilson interval: ours), and n models."""
    tested = comparison[comparison["p"].notna()]
    rows: list[dict[str, Any]] = []
    for (category, group), cell in tested.groupby(["category", "group"], sort=False):
        n = len(cell)
        mean = float(cell["rating"].mean())
        half = (float(stats.t.ppf(0.5 + ci_level / 2, n - 1) * cell["rating"].std(ddof=1) / np.sqrt(n))
                if n > 1 else float("nan"))
        holm = int(cell["significant"].map(lambda v: v is True).sum())
        low, high = proportion_confint(holm, n, alpha=1 - ci_level, method="wilson")
        rows.append({"category": category, "group": group, "helpfulness": mean, "helpfulness_low": mean - half,
                     "helpfulness_high": mean + half,
                     "share_paper": float(cell["significant_paper"].map(lambda v: v is True).mean()),
                     "share_holm": holm / n, "share_low": float(low), "share_high": float(high), "n_models": n})
    return pd.DataFrame(rows)


def figure(rows: pd.DataFrame, category: str) -> Any:
    """The paper's figure for ``category`` (left) beside ours (right, intervals and Holm)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cell = rows[rows["category"] == category]
    fig, (paper, ours) = plt.subplots(1, 2, figsize=(10, 4), sharex=True)
    paper.scatter(cell["helpfulness"], cell["share_paper"], s=40)
    xerr = [(cell["helpfulness"] - cell["helpfulness_low"]).fillna(0), (cell["helpfulness_high"]
                                                                         - cell["helpfulness"]).fillna(0)]
    yerr = [cell["share_holm"] - cell["share_low"], cell["share_high"] - cell["share_holm"]]
    ours.errorbar(cell["helpfulness"], cell["share_holm"], xerr=xerr, yerr=yerr, fmt="o", ecolor="grey")
    for ax, column in ((paper, "share_paper"), (ours, "share_holm")):
        for row in cell.itertuples():
            ax.annotate(str(row.group), (row.helpfulness, getattr(row, column)), fontsize=8, xytext=(4, 4),
                        textcoords="offset points")
        ax.set_ylim(-0.05, 1.05)
        ax.set_xlabel("helpfulness score (mean over models)")
    paper.set_ylabel("difference from control (share of models)")
    paper.set_title(f"as in the paper: p < 0.01, uncorrected ({category})", fontsize=9)
    ours.set_title(f"ours: Holm within category, 95% intervals ({category})", fontsize=9)
    lay_out(fig)
    return fig


def add_figures(section: Any, comparison: pd.DataFrame, held: list[str]) -> None:
    """Figures 1-3 (race, age, gender: the paper's numbering) for the categories held, in the paper's order."""
    rows = figure_rows(comparison)
    if rows.empty:
        return
    for category in sorted((c for c in held if c in set(rows["category"])), key=FIGURES.__getitem__):
        n = int(rows.loc[rows["category"] == category, "n_models"].max())
        section.add_figure(figure(rows, category), caption=(
            f"As in Fagan et al., 2025, Figure {FIGURES[category]}: helpfulness score against the share of models "
            f"whose rating differs significantly from the control, {category} (left: the paper's rule, paired "
            f"t-test, uncorrected α = 0.01; right, ours: Holm within one category of one model, Wilson 95% "
            f"interval on the share, t 95% interval on the score over models; up to {n} models)."))


def scenario_brittleness(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Brittleness per unit × category × group × scenario (the per-scenario term that :func:`analysis.brittleness`
    averages: complete rephrasing sets only)."""
    keys = [*sa.UNIT, "category", "group"]
    sets = sa.stored_answers(outcomes).groupby([*keys, "scenario", "phrasing", "sample_index"],
                                               dropna=False)["rating"].agg(["count", "std", "size"]).reset_index()
    sets = sets[(sets["size"] >= 2) & (sets["count"] == sets["size"])]
    return sets.groupby([*keys, "scenario"], dropna=False)["std"].mean().rename("brittleness").reset_index()


def kendall_w(matrix: np.ndarray) -> np.ndarray:
    """Kendall's W of scenarios (rows, axis -2) ranking the groups (columns), without a correction for ties:
    12 S / (n² (k³ − k)); a stack of matrices gives one W each."""
    ranks = stats.rankdata(matrix, axis=-1)
    n, k = matrix.shape[-2:]
    sums = ranks.sum(axis=-2)
    spread = ((sums - n * (k + 1) / 2) ** 2).sum(axis=-1)
    return 12 * spread / (n**2 * (k**3 - k))


def brittleness_between_groups(outcomes: pd.DataFrame, ci_level: float = 0.95) -> pd.DataFrame:
    """Per unit × category: Friedman test of the per-scenario brittleness of the control and every group, over
    the scenarios complete for all; Kendall's W with a bootstrap interval; p Holm-adjusted over the rows."""
    per = scenario_brittleness(outcomes)
    control = per[per["category"] == CONTROL].drop(columns="category")
    rows: list[dict[str, Any]] = []
    for key, cell in per[per["category"] != CONTROL].groupby([*sa.UNIT, "category"], dropna=False):
        unit = dict(zip([*sa.UNIT, "category"], key, strict=True))
        mine = control.merge(pd.DataFrame([unit]).drop(columns="category"), on=sa.UNIT)
        wide = pd.concat([mine, cell.drop(columns="category")]).pivot_table(
            index="scenario", columns="group", values="brittleness").dropna()
        n, k = wide.shape
        row = {**unit, "groups": k, "n scenarios": n, "Friedman chi2": float("nan"), "p": float("nan"),
               "Kendall's W": float("nan"), "W low": float("nan"), "W high": float("nan")}
        if n >= 2 and k >= 3:  # Friedman needs 3 related samples
            matrix = wide.to_numpy()
            test = stats.friedmanchisquare(*matrix.T)
            # scenarios resampled with their rows kept whole (one stack of matrices, vectorised)
            ci = stats.bootstrap((np.arange(n),), lambda i, axis=-1, m=matrix: kendall_w(m[i.astype(int)]),
                                 n_resamples=999, confidence_level=ci_level, method="percentile",
                                 random_state=np.random.default_rng(0)).confidence_interval
            row.update({"Friedman chi2": float(test.statistic), "p": float(test.pvalue),
                        "Kendall's W": float(kendall_w(matrix)), "W low": float(ci.low), "W high": float(ci.high)})
        rows.append(row)
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    tested = table["p"].notna()
    table["p adj (Holm)"] = float("nan")
    if tested.any():
        table.loc[tested, "p adj (Holm)"] = holm(table.loc[tested, "p"])
    return table


def significance_figure(figure_rows: pd.DataFrame) -> Any:
    """The paper's Figure 1 for every category: mean bias (x) vs share of units significant (y)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    categories = list(dict.fromkeys(figure_rows["category"]))
    fig, axes = plt.subplots(1, len(categories), figsize=(5 * len(categories), 4), squeeze=False)
    for ax, category in zip(axes[0], categories, strict=True):
        cell = figure_rows[figure_rows["category"] == category]
        ax.scatter(cell["mean_bias"], cell["share_significant"], s=40)
        for row in cell.itertuples():
            ax.annotate(str(row.group), (row.mean_bias, row.share_significant), fontsize=8,
                        xytext=(4, 4), textcoords="offset points")
        ax.axvline(0, color="grey", lw=0.8)
        ax.set_ylim(-0.05, 1.05)
        ax.set_xlabel("bias score (group − control), mean over models")
        ax.set_ylabel("share of models significantly different")
        ax.set_title(category)
    lay_out(fig)
    return fig
