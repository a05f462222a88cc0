"""Raj et al.'s Figures 4-7 as one figure each over every setting the study holds: biased % before (light) and
after (dark) tuning, one panel per contact framing, Wilson 95% intervals (ours).

- Figure 4: every setting on one axis (each setting's biased % over all of its evaluated prompts, per contact);
- Figures 5, 6, 7: settings 4 (by scenario), 5 (by key principle) and 6 (by bias dimension), the cells of the
  setting's evaluation part on one axis, each base model of the setting beside the others.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from biasatlas.probes.contact.data import CONTACTS
from biasatlas.report.plots import lay_out

#: the paper's names of the contact framings, in its order
CONTACT_NAMES = {"none": "No Contact", "positive": "Positive Contact", "negative": "Negative Contact"}
#: Figures 5-7: figure number -> (the setting, the grouping of the evaluate tables, what the axis shows)
SETTING_FIGURES = {5: ("cross-scenario", "by_scenario", "scenario"), 6: ("cross-principle", "by_principle",
                                                                          "key principle"),
                   7: ("cross-dimension", "by_axis", "bias dimension")}


def panels(cells: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """``cells`` (each with ``contact`` and the before/after columns) in one panel per contact framing, the
    paper's order; a framing the study did not ask is left out."""
    known = [c for c in CONTACTS if any(cell.get("contact") == c for cell in cells)]
    other = sorted({str(cell.get("contact")) for cell in cells} - set(CONTACTS))
    return [(CONTACT_NAMES.get(c, c), [cell for cell in cells if str(cell.get("contact")) == c])
            for c in (*known, *other)]


def panel_figure(shown: list[tuple[str, list[dict[str, Any]]]], by: list[str], title: str) -> Any:
    """One matplotlib panel per contact framing, bars before and after per cell (as the section's charts)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    width = max(4.0, 0.5 * max(len(cells) for _, cells in shown) + 1.5)
    fig, axes = plt.subplots(1, len(shown), figsize=(width * len(shown), 4.2), squeeze=False, sharey=True)
    for ax, (name, cells) in zip(axes[0], shown, strict=True):
        _bars(ax, cells, by, name)
    fig.suptitle(title, fontsize=11)
    lay_out(fig)
    return fig


def _side(cells: list[dict[str, Any]], key: str) -> np.ndarray:
    return np.array([np.nan if c.get(key) is None else c[key] for c in cells], dtype=float)


def _bars(ax: Any, cells: list[dict[str, Any]], by: list[str], title: str) -> None:
    """Bars of biased % before (light) and after (dark) per cell with their Wilson intervals (as the section's
    per-setting charts draw them)."""
    x = np.arange(len(cells))
    for offset, side, color in ((-0.2, "before", "#bbbbbb"), (0.2, "after", "#2c6fbb")):
        pct, low, high = (_side(cells, f"{side}_{k}") for k in ("pct", "ci_low", "ci_high"))
        err = np.vstack([np.clip(pct - low, 0, None), np.clip(high - pct, 0, None)])
        ax.bar(x + offset, pct, 0.4, yerr=err, capsize=2, color=color, label=side)
    ax.set_xticks(x)
    ax.set_xticklabels([" / ".join(str(c.get(k)) for k in by) for c in cells], rotation=45, ha="right", fontsize=8)
    ax.set_ylabel("% biased")
    ax.set_ylim(0, 100)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)


def plot(shown: list[tuple[str, list[dict[str, Any]]]], by: list[str]) -> Any:
    """The interactive copy: bars before and after per cell, one panel per contact framing, hover with n and p."""
    from biasatlas.report.plots import interval_figure
    from biasatlas.report.publish import column_label

    rows = [{"panel": name, "side": side, **{k: cell.get(k) for k in by}, "pct": cell.get(f"{side}_pct"),
             "low": cell.get(f"{side}_ci_low"), "high": cell.get(f"{side}_ci_high"),
             "n": cell.get("n_pairs", cell.get(f"{side}_n")), "p": cell.get("p_adj", cell.get("p"))}
            for name, cells in shown for cell in cells for side in ("before", "after")]
    frame = pd.DataFrame(rows)
    # the panels in the paper's order of the framings (the figure sorts its panels; names would sort alphabetically)
    frame["panel"] = pd.Categorical(frame["panel"], categories=[name for name, _ in shown], ordered=True)
    return interval_figure(frame, category=by, group="side", panel="panel", estimate="pct", low="low",
                           high="high", n="n", p="p", p_label="adjusted p (McNemar)", unit="%", y_range=(0, 100),
                           colors={"before": "#bbbbbb", "after": "#2c6fbb"},
                           x_title=" · ".join(column_label(k) for k in by), y_title="Biased answers (%, Wilson 95% CI)")


def add_figure(section: Any, cells: list[dict[str, Any]], by: list[str], title: str, caption: str) -> None:
    """The figure (drawn when the files are written) and its interactive copy in the page."""
    shown = panels(cells)
    if not shown:
        return
    section.add_figure(lambda: panel_figure(shown, by, title), caption, plot=plot(shown, by))
