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


@pytest.mark.parametrize("models", [1, 5, 50])
def test_a_horizontal_interval_figure_has_its_zero_line_in_every_panel(models: int) -> None:
    """The dotted zero line of an effect plot is one shape per panel (plotly's add_vline looks at every axis of
    the figure for each line: 20 s of a 50-model report)."""
    frame = pd.DataFrame({"model": [f"m{i:03d}" for i in range(models) for _ in range(2)],
                          "group": ["a", "b"] * models, "est": 0.1, "lo": -0.1, "hi": 0.3})
    fig = interval_figure(frame, category="group", estimate="est", low="lo", high="hi", x_title="effect",
                          y_title="group", panel="model", horizontal=True)
    lines = [s for s in fig.layout.shapes if s.type == "line" and s.x0 == 0 and s.x1 == 0]
    assert sorted(s.xref for s in lines) == sorted(["x" if i == 0 else f"x{i + 1}" for i in range(models)])
    assert all(s.yref.endswith(" domain") and s.y0 == 0 and s.y1 == 1 for s in lines)
