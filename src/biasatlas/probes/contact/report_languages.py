"""The report's "Across languages" section: each group's contact effect in every language, side by side.

Shown when a study's contact answers are in two or more languages (:mod:`biasatlas.probes.contact.across_languages`
computes the numbers; the summary and the export show the same ones).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from biasatlas.probes.contact.data import NAME
from biasatlas.report.html import Section
from biasatlas.report.plots import lay_out

if TYPE_CHECKING:
    import pandas as pd

#: groups drawn in the figure: those whose effect differs between languages first, then by adjusted p
FIGURE_GROUPS = 15

TEXT = (
    "Groups are aligned across languages by their descriptor id (the nine MMHB languages share MMHB ids; "
    "en, de and is align where their keys match). A group's effect in a language is its share of biased "
    "decisions minus the share of the other groups asked in that language, in percentage points with a "
    "Newcombe 95% interval, so a language in which the model is more biased towards everyone does not make "
    "every group differ. Whether the effect differs between languages is Cochran's Q test of heterogeneity "
    "(Agresti-Caffo variances), Benjamini-Hochberg adjusted over a model's groups; I² is the share of the "
    "variation between languages beyond chance. Groups with fewer than 10 decisions in a language, or whose "
    "answers never vary, are flagged and are not findings. Not significant is not the same effect everywhere: "
    "read the intervals."
)


def section(out: pd.DataFrame, alpha: float = 0.05, block: dict[str, Any] | None = None) -> Section | None:
    """The section, or None when the answers are in one language (or no group is in two); ``block``: the
    summary's ``across_languages`` where the caller has it (the same numbers, not computed again)."""
    from biasatlas.probes.contact.across_languages import across_languages

    if "descriptor" not in out.columns or out["language"].nunique() < 2:
        return None
    block = block if block else across_languages(out, alpha)
    if not block or not block["tests"]:
        return None
    import pandas as pd

    effects, tests = pd.DataFrame(block["effects"]), pd.DataFrame(block["tests"])
    sec = Section("Across languages (contact probe)", methods=block["method"])
    sec.add_text(TEXT)
    shown = _shown(tests)
    part = effects[effects["group"].isin(shown)].copy()
    part["name"] = part["group"].map(_names(effects))
    sec.add_figure(lambda: _static(part), f"Effect per language of the {len(shown)} groups with the smallest "
                   "adjusted p (points, Newcombe 95% CI)", plot=_plot(part))
    sec.add_table(_tests_table(tests), "Does the group's effect differ between languages? Cochran's Q per group "
                  "(BH over a model's groups)", drill=NAME)
    sec.add_table(_effects_table(effects), "Each group's effect per language: its % biased minus the other "
                  "groups' in that language, points [Newcombe 95% CI] (n)", drill=NAME)
    return sec


def _shown(tests: pd.DataFrame) -> list[str]:
    ranked = tests.assign(order=~tests["differs"]).sort_values(["order", "p_adj", "group"])
    return list(dict.fromkeys(ranked["group"].astype(str)))[:FIGURE_GROUPS]


def _names(effects: pd.DataFrame) -> dict[str, str]:
    """descriptor id -> "id · wording" (the wording of its first language, alphabetically)."""
    first = effects.sort_values("language").groupby("group")["label"].first()
    return {str(g): f"{g} · {label}" if str(label) != str(g) else str(g) for g, label in first.items()}


def _tests_table(tests: pd.DataFrame) -> pd.DataFrame:
    frame = tests.sort_values(["model", "p_adj", "group"]).copy()
    frame["verdict"] = [
        notes if notes else ("differs between languages" if differs else "no detectable difference")
        for notes, differs in zip(frame["flag_notes"], frame["differs"], strict=True)]
    frame["effect range (points)"] = [f"{100 * lo:+.1f} to {100 * hi:+.1f}"
                                      for lo, hi in zip(frame["effect_min"], frame["effect_max"], strict=True)]
    cell = ["model", "mode"] if "mode" in frame.columns else ["model"]  # modes are never pooled (issue 37)
    return frame[[*cell, "group", "languages", "n", "effect range (points)", "q", "dof", "i2", "p", "p_adj",
                  "verdict"]].rename(columns={"q": "Q", "dof": "df", "i2": "I²", "p_adj": "p adj (BH)"})


def _effects_table(effects: pd.DataFrame) -> pd.DataFrame:
    frame = effects.copy()
    frame["cell"] = [f"{100 * e:+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}] ({n})" for e, lo, hi, n in
                     zip(frame["effect"], frame["effect_ci_low"], frame["effect_ci_high"], frame["n"], strict=True)]
    cell = ["model", "mode"] if "mode" in frame.columns else ["model"]
    wide = frame.pivot_table(index=[*cell, "group"], columns="language", values="cell", aggfunc="first")
    wide.columns = [str(c) for c in wide.columns]
    return wide.reset_index().fillna("–")


def _static(part: pd.DataFrame) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = sorted(part["name"].unique())
    languages = sorted(part["language"].unique())
    fig, ax = plt.subplots(figsize=(7, max(3.0, 0.45 * len(names) + 1)))
    step = 0.7 / max(len(languages), 1)
    for li, language in enumerate(languages):
        rows = part[part["language"] == language]
        y = [names.index(n) + (li - (len(languages) - 1) / 2) * step for n in rows["name"]]
        est = 100 * rows["effect"]
        err = [(est - 100 * rows["effect_ci_low"]).clip(lower=0), (100 * rows["effect_ci_high"] - est).clip(lower=0)]
        ax.errorbar(est, y, xerr=err, fmt="o", ms=4, capsize=2, label=language)
    ax.axvline(0, color="#999", ls=":")
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(names, fontsize=7)
    ax.set_xlabel("Effect: % biased minus the other groups' (points, Newcombe 95% CI)")
    ax.legend(title="language", fontsize=7)
    lay_out(fig)
    return fig


def _plot(part: pd.DataFrame) -> Any:
    from biasatlas.report.plots import interval_figure

    frame = part.assign(effect_pct=100 * part["effect"], low=100 * part["effect_ci_low"],
                        high=100 * part["effect_ci_high"])
    return interval_figure(frame.sort_values(["name", "language"]), category="name", group="language", panel="model",
                           estimate="effect_pct", low="low", high="high", n="n", unit=" points", horizontal=True,
                           x_title="Effect: % biased minus the other groups' of the language (points, 95% CI)",
                           y_title="Group (descriptor id · wording)")
