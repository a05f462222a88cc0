"""The Samaritan probe "Across languages": each group's gap from the control in every language, side by side.

Shown when a study's Samaritan ratings are in two or more languages (:mod:`biasatlas.probes.samaritan.across_languages`
computes the numbers; the summary, this section and the export show the same ones).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rich.table import Table

from biasatlas.probes.samaritan.data import NAME
from biasatlas.report.html import Section
from biasatlas.report.plots import lay_out

if TYPE_CHECKING:
    import pandas as pd

#: groups printed in `summary` (those that differ first, then by adjusted p); the report shows every group
SHOWN_GROUPS = 20

TEXT = (
    "Groups are aligned across languages by their English names (every language asks the same scenarios and "
    "names the groups by the same English phrasing keys; a group is compared over the phrasings asked in every "
    "one of its languages). A group's effect in a language is the probe's own paired difference from the "
    "no-demographic control asked in that language (scenario × rephrasing cells readable for both, averaged per "
    "scenario), in rating points with a Student t 95% interval over scenarios, so a language in which the model "
    "rates everyone higher does not make a group differ. Whether the effect differs between languages is "
    "Cochran's Q test of heterogeneity (variances: squared standard errors over scenarios, floored at the "
    "rounding of whole-number ratings), Benjamini-Hochberg adjusted over the groups of one model × decoding, at "
    "the probe's alpha; I² is the share of the variation between languages beyond chance. A language with fewer "
    "than {min_pairs} paired scenarios (the Q test then rejects too often) and ratings that never vary are "
    "flagged. Not significant is not the same gap everywhere: read the intervals."
)


def _key(row: dict[str, Any] | Any) -> str:
    return f"{row['model']} · T={float(row['temperature']):g} · {row['max_tokens']} tokens"


def print_across_languages(summary: dict[str, Any], console: Any) -> None:
    """`biasatlas summary`: the groups asked in several languages, their gap per language and the Q test."""
    block = summary.get("across_languages")
    if not block or not block.get("tests"):
        return
    effects: dict[tuple[str, str], list[str]] = {}
    for r in block["effects"]:
        effects.setdefault((_key(r), r["group"]), []).append(
            f"{r['language']} {_num(r['effect'])} [{_num(r['ci_low'])}, {_num(r['ci_high'])}] (n {r['n']})")
    tests = sorted(block["tests"], key=lambda t: (not t["differs"], 1.0 if t["p_adj"] is None else t["p_adj"]))
    from rich.markup import escape

    table = Table(title=escape("Across languages: each group's mean paired difference from the control, in rating "
                               "points [t 95% CI] (n scenarios); Cochran's Q of heterogeneity over languages"),
                  title_justify="left")
    for col in ("model", "category", "group", "gap per language", "Q (df)", "p", "p adj (BH)", "verdict"):
        table.add_column(col)
    for t in tests[:SHOWN_GROUPS]:
        q = "–" if t["q"] is None else f"{t['q']:.2f} ({t['dof']})"
        cells = [_key(t), str(t["category"]), str(t["group"]), "; ".join(effects.get((_key(t), t["group"]), [])),
                 q, _p(t["p"]), _p(t["p_adj"]), _verdict(t)]
        table.add_row(*map(escape, cells))
    console.print(table)
    if len(tests) > SHOWN_GROUPS:
        console.print(f"{len(tests) - SHOWN_GROUPS} more groups in `summary --json` (across_languages) and the export")
    console.print(escape(f"method: {block['method']}"))


def section(out: pd.DataFrame, alpha: float) -> Section | None:
    """The report section, or None when the ratings are in one language (or no group is in two)."""
    from biasatlas.probes.samaritan.across_languages import across_languages

    block = across_languages(out, alpha)
    if not block or not block["tests"]:
        return None
    import pandas as pd

    effects, tests = pd.DataFrame(block["effects"]), pd.DataFrame(block["tests"])
    effects["unit"] = effects.apply(_key, axis=1)
    tests["unit"] = tests.apply(_key, axis=1)
    sec = Section("Across languages (Samaritan probe)", methods=block["method"])
    sec.add_text(TEXT.format(min_pairs=block["min_pairs"]))
    sec.add_figure(_static(effects), "Each group's gap from the control per language (rating points, Student t 95% "
                   "CI over scenarios), one panel per model", plot=_plot(effects))
    sec.add_table(_tests_table(tests), "Does the group's gap from the control differ between languages? Cochran's "
                  f"Q per group (BH over the groups of one model × decoding, alpha {alpha:g})", drill=NAME)
    sec.add_table(_effects_table(effects), "Each group's gap from the control per language: rating points "
                  "[t 95% CI] (n scenarios)", drill=NAME)
    return sec


def _num(value: Any) -> str:
    return "–" if value is None or value != value else f"{value:+.1f}"


def _p(value: Any) -> str:
    from biasatlas.report.cells import format_p

    return format_p(value)


def _verdict(t: Mapping[Any, Any]) -> str:
    if t["flags"]:
        return str(t["flag_notes"])
    return "differs between languages" if t["differs"] else "no detectable difference"


def _tests_table(tests: pd.DataFrame) -> pd.DataFrame:
    frame = tests.sort_values(["unit", "p_adj", "category", "group"], na_position="last").copy()
    frame["verdict"] = [_verdict(t) for t in frame.to_dict(orient="records")]
    frame["gap range (points)"] = [f"{lo:+.1f} to {hi:+.1f}"
                                   for lo, hi in zip(frame["effect_min"], frame["effect_max"], strict=True)]
    columns = ["unit", "category", "group", "phrasings", "left_out", "languages", "n", "gap range (points)", "q",
               "dof", "i2", "p", "p_adj", "verdict"]
    names = {"unit": "model", "left_out": "phrasings left out", "n": "n scenarios", "q": "Q", "dof": "df", "i2": "I²",
             "p_adj": "p adj (BH)"}
    # numbers stay whole: the page shows p in the one p format (report.cells), the CSV keeps every digit
    return frame[columns].rename(columns=names)


def _effects_table(effects: pd.DataFrame) -> pd.DataFrame:
    frame = effects.copy()
    frame["cell"] = [f"{_num(e)} [{_num(lo)}, {_num(hi)}] ({n})" for e, lo, hi, n in
                     zip(frame["effect"], frame["ci_low"], frame["ci_high"], frame["n"], strict=True)]
    wide = frame.pivot_table(index=["unit", "category", "group"], columns="language", values="cell", aggfunc="first")
    wide.columns = [str(c) for c in wide.columns]
    return wide.reset_index().rename(columns={"unit": "model"}).fillna("–")


def _static(effects: pd.DataFrame) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    units = sorted(effects["unit"].unique())
    names = sorted(effects["group"].astype(str).unique())
    languages = sorted(effects["language"].unique())
    fig, axes = plt.subplots(1, len(units), figsize=(7 * len(units), max(3.0, 0.45 * len(names) + 1)), squeeze=False)
    step = 0.7 / max(len(languages), 1)
    for ax, unit in zip(axes[0], units, strict=True):
        part = effects[effects["unit"] == unit]
        for li, language in enumerate(languages):
            rows = part[(part["language"] == language) & part["ci_low"].notna()]
            y = [names.index(str(g)) + (li - (len(languages) - 1) / 2) * step for g in rows["group"]]
            est = rows["effect"]
            err = [(est - rows["ci_low"]).clip(lower=0), (rows["ci_high"] - est).clip(lower=0)]
            ax.errorbar(est, y, xerr=err, fmt="o", ms=4, capsize=2, label=language)
        ax.axvline(0, color="#999", ls=":")
        ax.set_yticks(range(len(names)))
        ax.set_yticklabels(names, fontsize=7)
        ax.set_title(unit, fontsize=8)
        ax.set_xlabel("Gap from the control (rating points, t 95% CI)")
        ax.legend(title="language", fontsize=7)
    lay_out(fig)
    return fig


def _plot(effects: pd.DataFrame) -> Any:
    from biasatlas.report.plots import interval_figure

    frame = effects[effects["ci_low"].notna()].assign(group=lambda f: f["group"].astype(str))
    return interval_figure(frame.sort_values(["group", "language"]), category="group", group="language", panel="unit",
                           estimate="effect", low="ci_low", high="ci_high", n="n", unit=" points", horizontal=True,
                           x_title="Gap from the control (rating points, t 95% CI over scenarios)",
                           y_title="Group")
