"""The contact probe's static figures (matplotlib; SVG and PDF in ``report_files/``), in layouts that stay
readable, and quick to draw, for many models: bars wrap into rows, many heatmap panels become one matrix."""

from __future__ import annotations

from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from biasatlas.probes.contact.paper_tables import panel_keys

COLORS = {"none": "#999999", "positive": "#3a923a", "negative": "#c0392b"}
FRAMINGS = ("none", "positive", "negative")
KEYS = ["model", "mode", "language", "scale"]
#: groups of bars in one row of a figure; more wrap to further rows (one row of 600 groups was 960 inches wide)
GROUPS_PER_ROW = 24
#: heatmap panels drawn as panels; beyond, one matrix with a row per panel (600 panels took minutes to save)
MAX_PANELS = 12
#: matrix rows up to which each cell is labelled with its value (beyond, the colour alone: labels would overlap)
LABELLED_ROWS = 60


def _rows(table: pd.DataFrame) -> list[list[tuple[Any, dict[str, Any]]]]:
    """The groups (model, mode, language, scale) in order, each {framing: its row}, cut into figure rows."""
    groups = [(key, {str(r["contact"]): r for _, r in g.iterrows()})
              for key, g in table.groupby(KEYS, sort=True)]
    return [groups[i:i + GROUPS_PER_ROW] for i in range(0, len(groups), GROUPS_PER_ROW)] or [[]]


class _Labels:
    """Tick labels of the bar groups: only the keys that vary across the table (model names short), the others
    said once under the axis ("mode choice · scale certainty"): four lines of text under each of 600 groups
    were unreadable and most of the figure's drawing."""

    def __init__(self, table: pd.DataFrame) -> None:
        from biasatlas.report.table_data import short_models

        present = [k for k in KEYS if k in table.columns]
        varying = [k for k in present if table[k].astype(str).nunique() > 1]
        self.shown = [present.index(k) for k in (varying or present)]
        self.note = " · ".join(f"{k} {table[k].iloc[0]}" for k in present if k not in varying and varying)
        self.names = short_models([str(v) for v in table["model"].unique()]) if "model" in table else {}

    def apply(self, ax: Any, chunk: list[tuple[Any, dict[str, Any]]]) -> None:
        from biasatlas.report.table_data import display_text

        ax.set_xticks(range(len(chunk)))
        ax.set_xticklabels(["\n".join(display_text(str(key[i]), self.names) for i in self.shown)
                            for key, _ in chunk], fontsize=7)
        if self.note:
            ax.set_xlabel(display_text(self.note, self.names), fontsize=8)


def bar_by_contact(table: pd.DataFrame) -> Any:
    """Biased % by contact framing with Wilson intervals, one group of bars per model/mode/language/scale
    (at most ``GROUPS_PER_ROW`` a row)."""
    rows = _rows(table)
    labels = _Labels(table)
    width = 0.25
    fig, axes = plt.subplots(len(rows), 1, figsize=(max(5, 1.6 * max(len(c) for c in rows)), 3.6 * len(rows)),
                             squeeze=False)
    for ri, (ax, chunk) in enumerate(zip(axes[:, 0], rows, strict=True)):
        for ci, contact in enumerate(FRAMINGS):
            drawn = [(gi, cells[contact]) for gi, (_, cells) in enumerate(chunk) if contact in cells]
            if not drawn:
                continue
            # clipped at 0: at 0% or 100% float rounding can put the bound a hair inside the point
            low = [max(r["biased_pct"] - r["biased_ci_low"], 0.0) for _, r in drawn]
            high = [max(r["biased_ci_high"] - r["biased_pct"], 0.0) for _, r in drawn]
            ax.bar([gi + (ci - 1) * width for gi, _ in drawn], [r["biased_pct"] for _, r in drawn], width,
                   color=COLORS[contact], yerr=[low, high], capsize=3, label=contact if ri == 0 else None)
        labels.apply(ax, chunk)
        ax.set_ylabel("% biased (Wilson 95% CI)")
        ax.set_ylim(0, 100)
    axes[0, 0].legend(title="contact", fontsize=8)
    return fig


def probability_by_contact(table: pd.DataFrame) -> Any:
    """Mean P(biased option) per framing with its t 95% interval, one group per model/mode/language/scale.

    Shows a contact effect on the probabilities where no decision changes (choice mode).
    """
    rows = _rows(table)
    labels = _Labels(table)
    fig, axes = plt.subplots(len(rows), 1, figsize=(max(5, 1.6 * max(len(c) for c in rows)), 3.6 * len(rows)),
                             squeeze=False)
    for ri, (ax, chunk) in enumerate(zip(axes[:, 0], rows, strict=True)):
        for ci, contact in enumerate(FRAMINGS):
            drawn = [(gi + (ci - 1) * 0.25, cells[contact]) for gi, (_, cells) in enumerate(chunk)
                     if contact in cells]
            with_ci = [(x, r) for x, r in drawn if not pd.isna(r["ci_low"])]
            without = [(x, r) for x, r in drawn if pd.isna(r["ci_low"])]
            label = contact if ri == 0 else None
            if with_ci:
                err = [[max(r["mean"] - r["ci_low"], 0.0) for _, r in with_ci],
                       [max(r["ci_high"] - r["mean"], 0.0) for _, r in with_ci]]
                ax.errorbar([x for x, _ in with_ci], [r["mean"] for _, r in with_ci], yerr=err, fmt="o",
                            color=COLORS[contact], capsize=3, label=label)
                label = None
            if without:
                ax.errorbar([x for x, _ in without], [r["mean"] for _, r in without], fmt="o",
                            color=COLORS[contact], capsize=3, label=label)
        labels.apply(ax, chunk)
        ax.set_xlim(-0.6, len(chunk) - 0.4)
        ax.set_ylabel("mean P(biased option) (t 95% CI)")
    axes[0, 0].legend(title="contact", fontsize=8)
    return fig


def heatmap_grids(outcomes_frame: pd.DataFrame) -> list[tuple[str, pd.DataFrame, pd.DataFrame]]:
    """(title, % biased by axis × scenario, n per cell) of each panel (paper_tables.heatmap_panels); more than
    ``MAX_PANELS`` become one: a row per panel, a column per axis · scenario."""
    grids = []
    # one groupby for every panel (a pivot_table per panel is most of the report's time at many models); each
    # panel as its pivot_table would give it: cells without a scored answer left out, axes and scenarios sorted
    keys = panel_keys(outcomes_frame)
    by = outcomes_frame.groupby([*keys, "axis", "scenario"], sort=True)
    means = (by["biased"].mean() * 100).dropna()
    answered = by["prompt_id"].count()
    for key in outcomes_frame.groupby(keys, sort=True).size().index:
        where = key if isinstance(key, tuple) else (key,)
        try:
            grid = pd.Series(means.loc[where]).unstack("scenario").sort_index().sort_index(axis=1)
        except KeyError:  # no scored answer in the panel
            grid = pd.DataFrame(index=pd.Index([], name="axis"), columns=pd.Index([], name="scenario"))
        try:
            count = pd.Series(answered.loc[where]).unstack("scenario")
        except KeyError:
            count = pd.DataFrame()
        grids.append((" · ".join(map(str, where)), grid, count.reindex(index=grid.index, columns=grid.columns)))
    if len(grids) <= MAX_PANELS:
        return grids
    values = pd.DataFrame({title: grid.stack() for title, grid, _ in grids}).T
    counts = pd.DataFrame({title: n.stack() for title, _, n in grids}).T.reindex(index=values.index,
                                                                                 columns=values.columns)
    labels = [" · ".join(map(str, key)) for key in values.columns]  # (axis, scenario)
    return [("", values.set_axis(labels, axis=1), counts.set_axis(labels, axis=1))]


def heatmap_axis_scenario(outcomes_frame: pd.DataFrame, grids: list[Any] | None = None) -> Any:
    """Biased % by axis × scenario (paper 001 Figure 3), all framings pooled, n in each cell.

    One panel per model (and mode), and per language where the study holds several (the paper's figure is
    English only: languages are never pooled into one panel), side by side (three to a row) on one colour scale;
    beyond ``MAX_PANELS`` panels one matrix (a row per panel, a column per axis · scenario).
    """
    grids = heatmap_grids(outcomes_frame) if grids is None else grids
    if len(grids) == 1 and not grids[0][0]:
        return _matrix(grids[0][1])
    per_row = min(3, len(grids))
    n_rows = -(-len(grids) // per_row)
    width = max(1.3 * max(3, g.shape[1]) + 2 for _, g, _ in grids)
    height = max(0.45 * max(3, g.shape[0]) + 1.5 for _, g, _ in grids)
    fig, axes = plt.subplots(n_rows, per_row, figsize=(width * per_row, height * n_rows), squeeze=False)
    im = None
    for ax, (title, grid, counts) in zip(axes.flat, grids, strict=False):
        if grid.empty:  # no answer of this model could be scored: an empty image only makes matplotlib warn
            ax.axis("off")
            ax.text(0.5, 0.5, "no scored answers", ha="center", va="center", transform=ax.transAxes)
            ax.set_title(f"% biased by axis × scenario · {title}", fontsize=9)
            continue
        im = ax.imshow(grid.to_numpy(dtype=float), cmap="Reds", vmin=0, vmax=100, aspect="auto")
        ax.set_xticks(range(grid.shape[1]), grid.columns, rotation=30, ha="right")
        ax.set_yticks(range(grid.shape[0]), grid.index)
        values, ns = grid.to_numpy(dtype=float), counts.to_numpy(dtype=float)
        for i in range(values.shape[0]):
            for j in range(values.shape[1]):
                if not np.isnan(values[i, j]):
                    ax.text(j, i, f"{values[i, j]:.0f}\nn={int(ns[i, j])}", ha="center", va="center", fontsize=6)
        ax.set_title(f"% biased by axis × scenario · {title}", fontsize=9)
    for ax in list(axes.flat)[len(grids):]:
        ax.axis("off")
    if im is not None:
        fig.colorbar(im, ax=list(axes.flat), label="% biased")
    return fig


def _matrix(grid: pd.DataFrame) -> Any:
    """One heatmap, a row per panel (model · mode · language): a figure of fixed width whatever the models."""
    values = grid.to_numpy(dtype=float)
    fig, ax = plt.subplots(figsize=(0.6 * grid.shape[1] + 4, 0.22 * grid.shape[0] + 2))
    im = ax.imshow(values, cmap="Reds", vmin=0, vmax=100, aspect="auto", interpolation="nearest")
    ax.set_xticks(range(grid.shape[1]), grid.columns, rotation=30, ha="right", fontsize=7)
    ax.set_yticks(range(grid.shape[0]), grid.index, fontsize=6)
    if grid.shape[0] <= LABELLED_ROWS:
        for i, j in zip(*np.nonzero(~np.isnan(values)), strict=True):
            ax.text(j, i, f"{values[i, j]:.0f}", ha="center", va="center", fontsize=5)
    ax.set_title("% biased by axis × scenario, a row per model · mode · language (n per cell: the report's "
                 "interactive heatmap)", fontsize=9)
    fig.colorbar(im, ax=ax, label="% biased")
    return fig
