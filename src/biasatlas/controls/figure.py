"""The power-curve figure of docs/validation.md (matplotlib, imported on use)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any


def plot_power(rows: Sequence[dict[str, Any]], base_rows: Sequence[dict[str, Any]], effects: dict[str, float],
               path: Path) -> Path:
    """Detection rate vs prompt sets per language (control adapter and base model), and the analytic MDE
    beside the measured effect."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for language in sorted({r["language"] for r in rows}):
        mine = [r for r in rows if r["language"] == language]
        base = [r for r in base_rows if r["language"] == language]
        left.plot([r["prompt_sets"] for r in mine], [r["detection_rate"] for r in mine], marker="o",
                  label=f"{language}: control adapter")
        left.plot([r["prompt_sets"] for r in base], [r["detection_rate"] for r in base], marker="x", linestyle="--",
                  label=f"{language}: base model (false detections)")
        right.plot([r["prompt_sets"] for r in mine], [r["analytic_mde"] for r in mine], marker="o",
                   label=f"{language}: analytic MDE (80% power)")
        right.axhline(effects[language], linestyle=":", color=left.lines[-2].get_color(),
                      label=f"{language}: measured planted effect")
    left.axhline(0.05, color="grey", linewidth=0.8)
    left.set(xlabel="prompt sets per group (template cells x 3 framings)", ylabel="share of 50 resampled studies "
             "finding the planted group", ylim=(-0.02, 1.02), title="Detection rate")
    right.set(xlabel="prompt sets per group", ylabel="share of biased answers, group - others",
              title="Minimum detectable effect", ylim=(0, 1.05))
    return save_panels(fig, (left, right), path)


def save_panels(fig: Any, axes: tuple[Any, ...], path: Path) -> Path:
    """Legends on every panel, then the figure written to ``path`` (its folder made) and closed."""
    import matplotlib.pyplot as plt

    for ax in axes:
        ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
