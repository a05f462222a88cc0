"""The contact probe's static bar figures label each group of bars by what varies across the figure only: the
constant model, mode or scale is said once under the axis, model ids show their short names."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

from biasatlas.probes.contact.report_figures import bar_by_contact, probability_by_contact

MODEL = "local:smollm2@b179c9523d0e"


def _table(models: list[str], languages: list[str]) -> pd.DataFrame:
    rows = [{"model": m, "mode": "choice", "language": lang, "scale": "certainty", "contact": c,
             "biased_pct": 40.0, "biased_ci_low": 30.0, "biased_ci_high": 50.0, "n": 20,
             "mean": 0.4, "ci_low": 0.3, "ci_high": 0.5}
            for m in models for lang in languages for c in ("none", "positive", "negative")]
    return pd.DataFrame(rows)


def _ticks(fig: object) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.get_xticklabels()]  # type: ignore[attr-defined]


def test_one_model_in_three_languages_is_labelled_by_language_alone() -> None:
    for draw in (bar_by_contact, probability_by_contact):
        fig = draw(_table([MODEL], ["en", "de", "hi"]))
        assert _ticks(fig) == ["de", "en", "hi"]
        assert fig.axes[0].get_xlabel() == "model smollm2 · mode choice · scale certainty"
        plt.close(fig)


def test_two_models_are_labelled_by_model_and_language() -> None:
    fig = bar_by_contact(_table([MODEL, "openai:gpt-4o-mini"], ["en", "de"]))
    assert _ticks(fig) == ["smollm2\nde", "smollm2\nen", "openai:gpt-4o-mini\nde",
                           "openai:gpt-4o-mini\nen"]  # by model id; a hashed local id shortened
    assert fig.axes[0].get_xlabel() == "mode choice · scale certainty"
    plt.close(fig)


def test_a_single_group_keeps_every_key() -> None:
    fig = bar_by_contact(_table([MODEL], ["en"]))
    assert _ticks(fig) == ["smollm2\nchoice\nen\ncertainty"]
    assert fig.axes[0].get_xlabel() == ""
    plt.close(fig)
