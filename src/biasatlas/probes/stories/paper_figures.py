"""The matplotlib figures of the section "As in Le Jeune et al., 2025" (tables from :mod:`.paper_report`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from biasatlas.report.plots import lay_out

HARMFUL, BENIGN, UNRATED = "#c0392b", "#7f8c8d", "#d5d8dc"


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _errors(table: pd.DataFrame) -> np.ndarray:
    est = table["estimate"].astype(float)
    low = (est - table["ci_low"].astype(float)).clip(lower=0).fillna(0)
    high = (table["ci_high"].astype(float) - est).clip(lower=0).fillna(0)
    return np.vstack([low.to_numpy(), high.to_numpy()])


def provider_figure(table: pd.DataFrame) -> Any:
    """Harmful and benign counts per model (stacked bars), models grouped by provider, a label per group."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(max(5.0, 0.5 * len(table) + 2), 4))
    x = np.arange(len(table))
    ax.bar(x, table["harmful"], color=HARMFUL, label="Harmful")
    ax.bar(x, table["benign"], bottom=table["harmful"], color=BENIGN, label="Benign")
    ax.set_xticks(x, table["model"], rotation=60, ha="right", fontsize=7)
    start = 0
    for provider, group in table.groupby("provider", sort=False):
        end = start + len(group)
        if end < len(table):
            ax.axvline(end - 0.5, color="black", lw=0.5)
        ax.text((start + end - 1) / 2, 1.01, str(provider), transform=ax.get_xaxis_transform(), ha="center",
                fontsize=7)
        start = end
    ax.set_ylabel("associations")
    ax.legend(fontsize=7)
    lay_out(fig)
    return fig


def gap_figure(table: pd.DataFrame, overall: float | None) -> Any:
    """Mean LLM − human harm per attribute (horizontal bars with intervals), the mean delta dashed."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 0.35 * len(table) + 1.5))
    y = np.arange(len(table))
    colors = [HARMFUL if v < 0 else "#2874a6" for v in table["estimate"]]
    ax.barh(y, table["estimate"], xerr=_errors(table), color=colors, ecolor="grey")
    ax.set_yticks(y, table["attribute"], fontsize=8)
    ax.axvline(0, color="black", lw=0.8)
    if overall is not None:
        ax.axvline(overall, color="black", ls="--", lw=0.8, label=f"Mean delta ({overall:+.3f})")
        ax.legend(fontsize=7)
    ax.set_xlabel("LLM − human harm (1-5 scale)")
    lay_out(fig)
    return fig


def heatmap_figure(matrix: pd.DataFrame, label: str = "agreement on harmful vs benign") -> Any:
    """A 0-1 matrix (pairwise agreement between raters, or Jaccard similarity between languages), values
    written in the cells, ``label`` on the colour bar."""
    plt = _plt()
    values = matrix.to_numpy(dtype=float)
    fig, ax = plt.subplots(figsize=(1.5 + 0.5 * len(matrix), 1 + 0.5 * len(matrix)))
    im = ax.imshow(values, vmin=0, vmax=1, cmap="viridis")
    ax.set_xticks(range(len(matrix)), matrix.columns, rotation=60, ha="right", fontsize=7)
    ax.set_yticks(range(len(matrix)), matrix.index, fontsize=7)
    for i, j in np.ndindex(values.shape):
        if not np.isnan(values[i, j]):
            ax.text(j, i, f"{values[i, j]:.2f}", ha="center", va="center", color="w", fontsize=6)
    fig.colorbar(im, ax=ax, fraction=0.046, label=label)
    lay_out(fig)
    return fig


def top_score_figure(table: pd.DataFrame) -> Any:
    """Share of ratings at 5 per rater group and judge, with intervals."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(max(4.0, 0.6 * len(table) + 2), 3.5))
    x = np.arange(len(table))
    colors = ["#2874a6" if r.startswith("humans") else BENIGN for r in table["raters"]]
    ax.bar(x, table["estimate"].astype(float), yerr=_errors(table), color=colors, ecolor="black")
    ax.set_xticks(x, table["raters"], rotation=45, ha="right", fontsize=7)
    ax.set_ylabel("share of ratings at 5")
    lay_out(fig)
    return fig


def reach_figure(table: pd.DataFrame) -> Any:
    """Share of harmful and of benign associations per number of languages they hold in."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5, 3.5))
    x = table["languages"].to_numpy(dtype=float)
    ax.bar(x - 0.2, table["harmful share"], width=0.4, color=HARMFUL, label="Harmful")
    ax.bar(x + 0.2, table["benign share"], width=0.4, color=BENIGN, label="Benign")
    ax.set_xticks(table["languages"])
    ax.set_xlabel("number of languages the association appears in")
    ax.set_ylabel("share of associations")
    ax.legend(fontsize=7)
    lay_out(fig)
    return fig


def exclusive_figure(table: pd.DataFrame) -> Any:
    """Associations found in one language only, per language (stacked harmful, benign, unrated)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(max(4.0, 0.6 * len(table) + 2), 3.5))
    x = np.arange(len(table))
    bottom = np.zeros(len(table))
    for column, color in (("harmful", HARMFUL), ("benign", BENIGN), ("unrated", UNRATED)):
        ax.bar(x, table[column], bottom=bottom, color=color, label=column.capitalize())
        bottom += table[column].to_numpy(dtype=float)
    ax.set_xticks(x, table["language"])
    ax.set_ylabel("associations in this language only")
    ax.legend(fontsize=7)
    lay_out(fig)
    return fig


def shift_figure(table: pd.DataFrame) -> Any:
    """The marked/unmarked shift per language and group (bars, coloured by status)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 0.3 * len(table) + 1.5))
    y = np.arange(len(table))
    colors = [HARMFUL if s == "marked" else "#2874a6" for s in table["status"]]
    ax.barh(y, table["shift"], color=colors)
    ax.set_yticks(y, [f"{lang} · {group} ({status})" for lang, group, status in
                      zip(table["language"], table["group"], table["status"], strict=True)], fontsize=7)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_xlabel("harmful associations: native language − other languages (mean)")
    lay_out(fig)
    return fig


def kappa_heatmap_figure(matrix: pd.DataFrame, humans: set[str]) -> Any:
    """Pairwise weighted kappa (-1 to 1) between every rater shown; human raters' labels in blue, empty cells
    blank; values written in the cells while the matrix is small."""
    plt = _plt()
    values = matrix.to_numpy(dtype=float)
    size = len(matrix)
    fig, ax = plt.subplots(figsize=(2.0 + 0.35 * size, 1.5 + 0.35 * size))
    im = ax.imshow(np.ma.masked_invalid(values), vmin=-1, vmax=1, cmap="RdBu_r")
    ax.set_xticks(range(size), matrix.columns, rotation=60, ha="right", fontsize=6)
    ax.set_yticks(range(size), matrix.index, fontsize=6)
    for ticks in (ax.get_xticklabels(), ax.get_yticklabels()):
        for tick in ticks:
            if tick.get_text() in humans:
                tick.set_color("#2874a6")
    if size <= 15:
        for i, j in np.ndindex(values.shape):
            if not np.isnan(values[i, j]):
                ax.text(j, i, f"{values[i, j]:.2f}", ha="center", va="center", fontsize=6,
                        color="w" if abs(values[i, j]) > 0.6 else "black")
    fig.colorbar(im, ax=ax, fraction=0.046, label="quadratic-weighted Cohen's kappa")
    lay_out(fig)
    return fig


def provider_gap_figure(table: pd.DataFrame) -> Any:
    """Mean LLM − human harm per attribute, one dodged point with its interval per provider."""
    plt = _plt()
    attributes = sorted(table["attribute"].unique())
    providers = list(dict.fromkeys(table["provider"]))
    fig, ax = plt.subplots(figsize=(6.5, 0.45 * len(attributes) + 1.8))
    width = 0.7 / max(len(providers), 1)
    colors = plt.get_cmap("tab10")
    for k, provider in enumerate(providers):
        rows = table[table["provider"] == provider].set_index("attribute").reindex(attributes)
        y = np.arange(len(attributes)) - 0.35 + width * (k + 0.5)
        ax.errorbar(rows["estimate"].astype(float), y, xerr=_errors(rows), fmt="o", ms=4, capsize=2,
                    color=colors(k % 10), label=str(provider))
    ax.set_yticks(np.arange(len(attributes)), attributes, fontsize=8)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_xlabel("LLM − human harm (1-5 scale)")
    ax.legend(fontsize=7, title="judge provider", title_fontsize=7)
    lay_out(fig)
    return fig
