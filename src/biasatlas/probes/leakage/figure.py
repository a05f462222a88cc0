"""The leakage flows figure: human source language → model target language, one panel per model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from biasatlas.probes.leakage.data import LANGUAGES
from biasatlas.report.plots import lay_out


def flows_figure(flow_table: pd.DataFrame, variants: Sequence[str]) -> Any:
    """Source (human) → target (model) language diagram per variant; line width ∝ coefficient."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    count = max(len(variants), 1)
    fig, axes = plt.subplots(1, count, figsize=(4.2 * count, 3.6), squeeze=False)
    ys = {lang: len(LANGUAGES) - 1 - i for i, lang in enumerate(LANGUAGES)}
    top = float(flow_table["estimate"].max()) if not flow_table.empty else 1.0
    for ax, variant in zip(axes[0], variants or ["(no fits)"], strict=False):
        for lang, y in ys.items():
            ax.text(0, y, f"human {lang.upper()}", ha="right", va="center", fontsize=9)
            ax.text(1, y, f"model {lang.upper()}", ha="left", va="center", fontsize=9)
        sub = flow_table[flow_table["variant"] == variant] if not flow_table.empty else flow_table
        for row in sub.to_dict(orient="records"):
            y0, y1 = ys[str(row["source"])], ys[str(row["target"])]
            estimate = float(row["estimate"])
            ax.plot([0.02, 0.98], [y0, y1], color="tab:red", alpha=0.7, linewidth=1 + 5 * estimate / (top or 1.0))
            ax.text(0.5, (y0 + y1) / 2, f"{estimate:.3g}", ha="center", va="bottom", fontsize=8)
        if sub.empty:
            ax.text(0.5, 1.5, "no significant flow", ha="center", va="center", fontsize=9, color="grey")
        ax.set_xlim(-0.5, 1.5)
        ax.set_ylim(-0.6, len(LANGUAGES) - 0.4)
        ax.axis("off")
        ax.set_title(variant, fontsize=8)
    lay_out(fig)
    return fig


def flows_plot(flow_table: pd.DataFrame, variants: Sequence[str], corrected: bool = True) -> Any:
    """The flows interactive: each significant flow's coefficient [95% CI] per model variant, hover n and p
    (``corrected``: BH-adjusted, our design; else uncorrected, the paper design's)."""
    from biasatlas.report.plots import interval_figure

    x_title = "Leakage coefficient (regression slope on the source humans' association, 95% CI)"
    if flow_table.empty:
        import plotly.graph_objects as go

        fig = go.Figure()
        fig.add_annotation(text="no significant flow" + (f" ({len(variants)} model variants)" if variants else ""),
                           showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
        fig.update_layout(template="plotly_white", height=240, xaxis_title=x_title,
                          yaxis_title="Human source → model target")
        return fig
    shown = flow_table.assign(flow=[f"human {s.upper()} → model {t.upper()}"
                                    for s, t in zip(flow_table["source"], flow_table["target"], strict=True)])
    return interval_figure(shown, category="flow", panel="variant", estimate="estimate", low="ci_low",
                           high="ci_high", n="n_obs", p="p_adj",
                           p_label="adjusted p (BH)" if corrected else "p (uncorrected)", horizontal=True,
                           x_title=x_title, y_title="Human source → model target")
