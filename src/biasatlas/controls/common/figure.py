"""The power-curve figures of docs/validation.md: what every control's figure shares (matplotlib, imported on use)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from biasatlas.report.plots import lay_out


def save_panels(fig: Any, axes: tuple[Any, ...], path: Path) -> Path:
    """Legends on every panel, then the figure written to ``path`` (its folder made) and closed."""
    import matplotlib.pyplot as plt

    for ax in axes:
        ax.legend(fontsize=7)
    lay_out(fig)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
