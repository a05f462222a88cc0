"""Figures with one panel per model wrap into rows: 14, 50 or 200 models draw (plotly refused 14 in one row)."""

from __future__ import annotations

import pandas as pd
import pytest

from biasatlas.report.plots import PANEL_COLUMNS, heatmap_figure, interval_figure, panel_grid


@pytest.mark.parametrize("models", [1, 2, 5, 14, 50, 200])
def test_an_interval_figure_draws_for_any_number_of_models(models: int) -> None:
    frame = pd.DataFrame({"model": [f"m{i:03d}" for i in range(models) for _ in range(2)],
                          "group": ["a", "b"] * models, "est": 1.0, "lo": 0.5, "hi": 1.5})
    fig = interval_figure(frame, category="group", estimate="est", low="lo", high="hi", x_title="x", y_title="y",
                          panel="model", kind="point")
    assert len(fig.data) == models
    rows, cols, _ = panel_grid(models)
    assert cols <= PANEL_COLUMNS and rows * cols >= models


def test_a_heatmap_figure_draws_for_fifty_panels() -> None:
    grid = pd.DataFrame([[0.1, 0.2]], index=["r"], columns=["a", "b"])
    fig = heatmap_figure([(f"m{i}", grid, None) for i in range(50)], x_title="x", y_title="y", z_title="z",
                         zmin=0, zmax=1)
    assert len(fig.data) == 50
