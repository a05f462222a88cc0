"""Each probe's headline per model x language, for the report's overview grid: read, never recomputed.

The headline rows are the statistics rows the probe's summary marks ``headline``
(:mod:`biasatlas.tidy.rows`): the same estimate, interval, adjusted p (the probe's correction
family, :mod:`biasatlas.stats.families`) and quality flags as `summary --json` and the export.
Probes without a headline here are shown in the grid by their validity only.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pandas as pd

from biasatlas.report.cells import format_p
from biasatlas.report.table_data import model_label

COLUMNS = ["model", "language", "measure", "estimate", "ci_low", "ci_high", "test", "n", "p", "p_adj", "significant",
           "flags", "flag_notes", "family", "correction", "probability_effect", "scale", "seed", "samples", "mde",
           "mde_note", "text"]


#: the headline's text columns: a missing value stays None (pandas would make it NaN, and NaN prints "nan")
TEXT = ("mode", "scale", "measure", "test", "flags", "flag_notes", "family", "correction", "probability_effect",
        "seed", "samples", "mde_note", "text")


def _texts(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every text column of object dtype, None where missing (never NaN or the string "nan")."""
    for column in TEXT:
        if column in frame.columns:
            values = frame[column].astype(object)
            frame[column] = values.where(values.notna(), None)
    return frame


def _blocked(flags: Any) -> bool:
    """True when a row's flags forbid reading its test as a finding (stats.quality.Quality.blocks_interval)."""
    return any(code in str(flags or "") for code in ("not_tested", "too_few_units", "not_fitted", "not_converged"))


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _points(value: Any) -> float:
    return math.nan if _missing(value) else 100 * float(value)


def contact_headline(summary: dict[str, Any]) -> pd.DataFrame:
    """Δ % biased under positive vs no contact on the same prompt sets (exact McNemar, Newcombe interval),
    with the change in P(biased) beside it where choice mode gives one (decisions that cannot move)."""
    rows = summary.get("statistics") or []
    key = ("model", "mode", "language", "scale", "comparison")
    change = {tuple(r.get(k) for k in key): r for r in rows
              if r.get("estimand") == "mean change in P(biased) (framing − none)"}
    logodds = {tuple(r.get(k) for k in key): r for r in rows
               if r.get("measure") == "P(biased)" and r.get("test") == "paired t-test"}
    out = []
    for r in rows:
        if not r.get("headline") or r.get("source") != "tests":  # group disparity has its own headline
            continue
        shift, test = change.get(tuple(r.get(k) for k in key)), logodds.get(tuple(r.get(k) for k in key))
        probability = None
        if shift is not None and not _missing(shift.get("estimate")):
            probability = (f"ΔP(biased) {shift['estimate']:+.3f} [{shift['ci_low']:+.3f}, {shift['ci_high']:+.3f}]"
                           if not _missing(shift.get("ci_low")) else f"ΔP(biased) {shift['estimate']:+.3f}")
            if test is not None and not _missing(test.get("p_adj")):
                probability += f", adjusted p {format_p(test['p_adj'])} (paired t on log-odds)"
        if probability is None and "one_option" in str(r.get("flags") or ""):
            probability = "no probability-level effect: generate mode has no option probabilities (--mode choice)"
        out.append({
            "model": r.get("model"), "mode": r.get("mode"), "language": r.get("language"), "scale": r.get("scale"),
            "measure": "Δ % biased, positive − no contact", "estimate": _points(r.get("estimate")),
            "ci_low": _points(r.get("ci_low")), "ci_high": _points(r.get("ci_high")), "test": r.get("test"),
            "n": r.get("n"), "p": r.get("p"), "p_adj": r.get("p_adj"), "significant": bool(r.get("significant")),
            "flags": r.get("flags"), "flag_notes": r.get("flag_notes"), "family": r.get("family"),
            "correction": r.get("correction"), "probability_effect": probability, "seed": r.get("seed"),
            "samples": r.get("samples"), "mde": _points(r.get("mde")), "mde_note": r.get("mde_note"),
        })
    frame = pd.DataFrame(out)
    if frame.empty:
        return pd.DataFrame(columns=COLUMNS)
    return _texts(frame.assign(model=model_label(frame)).reindex(columns=COLUMNS))


def samaritan_headline(summary: dict[str, Any]) -> pd.DataFrame:
    """The group rated furthest from the control per model x language x decoding (paired t-test over
    scenarios), and how many groups of that cell differ (adjusted p < the probe's alpha).

    Its estimate is the largest of several, so it tends to overstate.
    """
    rows = [r for r in summary.get("statistics") or [] if r.get("estimand", "") and r.get("statistic_name") == "t"
            and r.get("source") == "groups"]
    cell = ("model", "language", "temperature", "max_tokens")
    out = []
    for r in rows:
        if not r.get("headline"):
            continue
        same = [s for s in rows if all(s.get(k) == r.get(k) for k in cell)]
        # a group whose test is flagged too few units or not tested differs from nothing: counted apart
        flagged = sum(_blocked(s.get("flags")) for s in same)
        differ = sum(bool(s.get("significant")) and not _blocked(s.get("flags")) for s in same)
        apart = f"; {flagged} flagged, not a finding" if flagged else ""
        out.append({
            "model": str(r.get("model")), "language": r.get("language"),
            "scale": None if len({s.get("temperature") for s in rows}) < 2 else f"T={r.get('temperature')}",
            "measure": f"largest gap: {r.get('group')} − control rating ({differ} of {len(same)} groups differ{apart})",
            "estimate": r.get("estimate"), "ci_low": r.get("ci_low"), "ci_high": r.get("ci_high"),
            "test": f"{r.get('test')} over scenarios", "n": r.get("n"), "p": r.get("p"), "p_adj": r.get("p_adj"),
            "significant": bool(r.get("significant")), "flags": r.get("flags"), "flag_notes": r.get("flag_notes"),
            "family": r.get("family"), "correction": r.get("correction"), "probability_effect": None,
            "seed": r.get("seed"), "samples": r.get("samples"), "mde": r.get("mde"), "mde_note": r.get("mde_note"),
        })
    return _texts(pd.DataFrame(out, columns=COLUMNS))


def leakage_headline(summary: dict[str, Any]) -> pd.DataFrame:
    """No effect headline: a cell shows why a leakage fit was left out (not fitted, not converged), if one was."""
    from biasatlas.export.statistics import statistics_rows

    out = [{
        "model": str(r["model"]).rsplit(" [", 1)[0],  # the variant "NAME [theme/choice]": the grid's model NAME
        "language": r["language"], "measure": f"cross-language leakage (mixed model; {r['model']})",
        "estimate": math.nan, "ci_low": math.nan, "ci_high": math.nan, "test": r["test"], "n": r["n"],
        "p": math.nan, "p_adj": math.nan, "significant": False, "flags": r["flags"], "flag_notes": r["flag_notes"],
    } for r in statistics_rows("leakage", summary) if r.get("source") == "dropped_fits"]
    return _texts(pd.DataFrame(out, columns=COLUMNS))


def disparity_headline(summary: dict[str, Any]) -> pd.DataFrame:
    """The group-disparity headline of each family (contact: axis; Samaritan: category), with its sentence
    (``text``: "most disfavoured: …" or "no group differs: …";
    :func:`biasatlas.tidy.disparity.headline_text`)."""
    from biasatlas.tidy.disparity import headline_lines

    out = []
    for r, text in headline_lines(summary.get("statistics") or []):
        scale = 1.0 if r.get("measure") == "rating" else 100.0
        family = r.get("axis") or r.get("category")
        out.append({
            "model": str(r.get("model")), "mode": r.get("mode"), "language": r.get("language"),
            "scale": None if r.get("temperature") is None or r.get("measure") != "rating" else
            f"T={r.get('temperature')}", "measure": f"group disparity ({family}): the group − the other groups"
            + (" (rating points)" if scale == 1.0 else " (% biased)"),
            **{k: math.nan if _missing(r.get(k)) else scale * float(r[k]) for k in ("estimate", "ci_low", "ci_high")},
            "test": r.get("test"), "n": r.get("n"), "p": r.get("p"), "p_adj": r.get("p_adj"),
            "significant": bool(r.get("significant")), "flags": r.get("flags"), "flag_notes": r.get("flag_notes"),
            "family": r.get("family"), "correction": r.get("correction"), "probability_effect": None,
            "seed": r.get("seed"), "samples": r.get("samples"),
            "mde": math.nan if _missing(r.get("mde")) else scale * float(r["mde"]), "mde_note": r.get("mde_note"),
            "text": f"{family}: {text}",
        })
    frame = pd.DataFrame(out, columns=[*COLUMNS, "mode"])
    if frame.empty:
        return pd.DataFrame(columns=COLUMNS)
    if frame["mode"].isna().all():  # Samaritan: one mode, no label
        frame = frame.drop(columns=["mode"])
    else:
        frame["mode"] = frame["mode"].astype(str)
    return _texts(frame.assign(model=model_label(frame)).reindex(columns=COLUMNS))


HEADLINES: dict[str, Callable[[dict[str, Any]], pd.DataFrame]] = {
    "contact": contact_headline,
    "samaritan": samaritan_headline,
    "leakage": leakage_headline,
}


def headline(probe: Any, store: Any) -> pd.DataFrame:
    """The probe's headline table from its summary's rows, or an empty frame when it has none."""
    compute = HEADLINES.get(probe.name)
    if compute is None:
        return pd.DataFrame(columns=COLUMNS)
    from biasatlas.report.cache import probe_summary

    summary = probe_summary(probe.name, lambda: probe.summarise(store))  # the probe's section reads it too
    groups = disparity_headline(summary)  # which group is treated worse: a line of its own in the cell
    own = compute(summary)
    return own if groups.empty else pd.concat([groups, own], ignore_index=True) if not own.empty else groups
