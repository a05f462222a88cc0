"""The Samaritan summary: every analysis table for a study, with its alpha and correction."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from biasatlas.probes.samaritan.analysis import (
    DEFAULT_MARGIN,
    PAPER_ALPHA,
    UNIT,
    UNREADABLE_WARNING,
    compare_to_control,
    control_summary,
    default_persona,
    phrasing_table,
    repeatability,
    significance_frequency,
    unparseable,
)
from biasatlas.probes.samaritan.data import NAME
from biasatlas.probes.samaritan.plan import DECODING_NOTE
from biasatlas.probes.samaritan.read import load_outcomes
from biasatlas.store import Store

DEFAULT_ALPHA = 0.01
DEFAULT_CORRECTION = "holm"
TABLES = (
    "groups", "controls", "phrasings", "default_persona", "repeatability", "unparseable", "significance_frequency",
)


def analysis_settings(
    store: Store,
    alpha: float | None = None,
    correction: str | None = None,
    equivalence_margin: float | None = None,
) -> dict[str, Any]:
    """alpha, correction and equivalence margin: given, else the study's last Samaritan run's, else
    the defaults (0.01, holm, 2 rating points)."""
    last = store.last_run(NAME) or {}
    config = last.get("config", {}) if isinstance(last, dict) else {}

    def pick(given: Any, key: str, default: Any) -> Any:
        recorded = config.get(key)
        return given if given is not None else (recorded if recorded is not None else default)

    return {
        "alpha": float(pick(alpha, "alpha", DEFAULT_ALPHA)),
        "correction": str(pick(correction, "correction", DEFAULT_CORRECTION)),
        "equivalence_margin": float(pick(equivalence_margin, "equivalence_margin", DEFAULT_MARGIN)),
        "ci_level": 0.95,
    }


def rules(settings: dict[str, Any]) -> dict[str, str]:
    """The tests and decisions in words, as printed above the tables and kept in the JSON."""
    alpha, correction, margin = settings["alpha"], settings["correction"], settings["equivalence_margin"]
    return {
        "test": "paired t-test over scenarios (scenario means of group vs control over the scenario × "
        "rephrasing cells readable for both), two-sided; Wilcoxon signed-rank alongside",
        "paper_rule": f"significant_paper: paired t-test, alpha = {PAPER_ALPHA:g}, uncorrected (paper 003 §4.5)",
        "corrected_rule": f"significant: {correction}-adjusted p < alpha = {alpha:g}; family = the groups "
        "of one category (race, gender or age) of one model × language × decoding",
        "equivalence": f"TOST (two one-sided paired t-tests, statsmodels ttost_paired), margin ± {margin:g} "
        f"rating points, {correction}-adjusted p < {alpha:g}; verdict: equivalent (the default persona), "
        "differs (significant), undetermined (neither: too little data to say), untested (< 2 scenarios)",
        "effect_size": "Cohen's d_z (mean paired difference / SD of differences)",
        "decoding": DECODING_NOTE,
        "correction_family": "all groups of one category of one model × language × decoding "
        "(temperature, max_tokens)",
    }


def unreadable_warnings(bad: pd.DataFrame, threshold: float = UNREADABLE_WARNING) -> list[str]:
    """One line per unit × group with more than ``threshold`` of its answers unreadable."""
    if bad.empty:
        return []
    lines = []
    for row in bad[bad["unreadable_warning"]].to_dict(orient="records"):
        lines.append(
            f"{row['category']} {row['group']} ({row['model']} · {row['language']} · T={row['temperature']:g} · "
            f"{row['max_tokens']} tokens): {row['unparseable_pct']:.1f}% of {row['n_answered']} answers "
            f"unreadable (above {100 * threshold:.0f}%); its numbers describe the readable answers only"
        )
    return lines


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """JSON-ready rows: NaN -> None, numpy scalars -> Python."""
    rows = []
    for row in frame.to_dict(orient="records"):
        clean: dict[str, Any] = {}
        for key, value in row.items():
            if isinstance(value, float) and math.isnan(value):
                value = None
            elif hasattr(value, "item") and not isinstance(value, list | dict):
                value = value.item()
            clean[str(key)] = value
        rows.append(clean)
    return rows


def analyse(
    outcome_frame: pd.DataFrame, alpha: float, correction: str, equivalence_margin: float = DEFAULT_MARGIN
) -> dict[str, pd.DataFrame]:
    """Every table of the analysis, as frames (what summarise and the report are made of)."""
    comparison = compare_to_control(outcome_frame, alpha=alpha, correction=correction,
                                    equivalence_margin=equivalence_margin)
    bad = unparseable(outcome_frame)
    if not comparison.empty:
        keys = [*UNIT, "category", "group"]
        # the share of the most frequent rating among the readable: >= 90% flags ratings that cannot move
        top = outcome_frame[outcome_frame["rating"].notna()].groupby(keys, dropna=False)["rating"].agg(
            lambda r: float(r.value_counts(normalize=True).max()))
        bad = bad.merge(top.rename("top_rating_share").reset_index(), on=keys, how="left")
        comparison = comparison.merge(
            bad[[*keys, "n_answered", "n_unparseable", "n_refusals", "n_cut", "top_rating_share", "reasons"]], on=keys,
            how="left"
        )
    return {
        "groups": comparison,
        "controls": control_summary(outcome_frame),
        "phrasings": phrasing_table(outcome_frame),
        "default_persona": default_persona(comparison),
        "repeatability": repeatability(outcome_frame, alpha=alpha, correction=correction,
                                       equivalence_margin=equivalence_margin),
        "unparseable": bad,
        "significance_frequency": significance_frequency(comparison),
    }


def summarise(
    store: Store,
    alpha: float | None = None,
    correction: str | None = None,
    equivalence_margin: float | None = None,
) -> dict[str, Any]:
    """JSON-ready analysis: per model × language × decoding × category × group, with ``warnings``."""
    settings = analysis_settings(store, alpha, correction, equivalence_margin)
    frame = load_outcomes(store)
    tables = (
        analyse(frame, settings["alpha"], settings["correction"], settings["equivalence_margin"])
        if not frame.empty else {}
    )
    summary: dict[str, Any] = {
        "settings": {**settings, **rules(settings)},
        "n_rows": len(frame),
        "warnings": unreadable_warnings(tables.get("unparseable", pd.DataFrame())),
    }
    for name in TABLES:
        table = tables.get(name, pd.DataFrame())
        summary[name] = records(table) if not table.empty else []
    if not frame.empty and frame.loc[frame["rating"].notna(), "language"].nunique() > 1:
        from biasatlas.probes.samaritan.across_languages import across_languages

        # each group's gap from the control in every language, and whether it differs (issue 29); None: one language
        summary["across_languages"] = across_languages(frame, settings["alpha"])
    from biasatlas.probes.samaritan.disparity import answer_quality, disparity

    # which group of a category is rated differently from the others: the headline (docs/methods.md)
    block = disparity(frame, summary["groups"], settings["alpha"]) if not frame.empty else {}
    summary["group_disparity"] = records(pd.DataFrame(answer_quality(block.get("groups", []), summary["groups"])))
    summary["group_disparity_pairs"] = records(pd.DataFrame(block.get("pairs", [])))
    summary["group_disparity_spread"] = records(pd.DataFrame(block.get("spread", [])))
    from biasatlas.readers.agreement import agreement
    from biasatlas.tidy.rows import run_info, samaritan_rows

    summary["runs"] = run_info(store, NAME)
    summary["reading"] = agreement(store, NAME, frame)  # who read the answers the statistics count (issue 27)
    summary["statistics"] = samaritan_rows(summary)  # the rows every surface reads (export, report's overview)
    with_flags(summary)
    from biasatlas.report.reading_failures import add_failures

    add_failures(summary, frame, NAME, settings["alpha"])  # reading failures by group; flags of the group effects
    if summary["groups"]:  # Figure 1 counts the units where a group's test is a finding (issue 37)
        summary["significance_frequency"] = records(findings_frequency(pd.DataFrame(summary["groups"])))
    return summary


def findings_frequency(groups: pd.DataFrame) -> pd.DataFrame:
    """The paper's Figure 1 data over the units where a group's test is a finding: a group flagged too few
    units or not tested neither differs nor not, so it is no unit of the share."""
    if "flags" in groups.columns:
        groups = groups[~groups["flags"].map(blocked)]
    return significance_frequency(groups) if not groups.empty else pd.DataFrame()


#: flags under which a test's p, interval and verdict are not a finding (stats.quality.Quality.blocks_interval)
BLOCKING = ("not_tested", "too_few_units", "not_fitted", "not_converged")
#: the verdict lists of a default-persona row a flagged group leaves (it is listed in ``flagged_groups``)
VERDICT_LISTS = ("default_groups", "differing_groups", "undetermined_groups", "paper_reading")


def _cell_key(row: dict[str, Any], keys: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(str(row.get(k)) for k in keys)


def group_flags(statistics: list[dict[str, Any]]) -> dict[tuple[str, ...], tuple[str | None, str | None]]:
    """Per group (model, language, decoding, category, group): the flags and notes of its paired t-test
    and its TOST, as the statistics rows have them (:func:`biasatlas.tidy.rows.samaritan_rows` decides
    them once: every surface reads them from there)."""
    from biasatlas.stats.quality import FLAGS
    from biasatlas.tidy.rows import SAMARITAN_CELL

    found: dict[tuple[str, ...], tuple[list[str], list[str]]] = {}
    for row in statistics:
        if row.get("source") != "groups" or not (row.get("statistic_name") == "t" or
                                                 str(row.get("test", "")).startswith("TOST")):
            continue
        codes, notes = found.setdefault(_cell_key(row, SAMARITAN_CELL), ([], []))
        codes += [c for c in str(row.get("flags") or "").split("; ") if c and c not in codes]
        notes += [n for n in str(row.get("flag_notes") or "").split(" | ") if n and n not in notes]
    order = list(FLAGS)
    return {key: ("; ".join(sorted(codes, key=lambda c: order.index(c) if c in order else len(order))) or None,
                  " | ".join(notes) or None) for key, (codes, notes) in found.items()}


def blocked(flags: Any) -> bool:
    """True when ``flags`` (codes joined by ``; ``) forbid reading the row's test or verdict as a finding."""
    return any(code in str(flags or "") for code in BLOCKING)


def verdict_text(row: dict[str, Any]) -> str:
    """A group's verdict, or "not a finding" with its flags where they forbid one."""
    if blocked(row.get("flags")):
        return f"not a finding (⚑ {row['flags']})"
    return str(row.get("verdict") or "–")


def with_flags(summary: dict[str, Any]) -> dict[str, Any]:
    """Each group row gets its ``flags`` and ``flag_notes`` (from the summary's ``statistics``); a group
    whose flags forbid a finding leaves the default-persona verdict lists for ``flagged_groups``."""
    from biasatlas.tidy.rows import SAMARITAN_CELL

    flags = group_flags(summary.get("statistics") or [])
    unit = (*UNIT, "category")
    flagged: dict[tuple[str, ...], list[str]] = {}
    for g in summary.get("groups") or []:
        g["flags"], g["flag_notes"] = flags.get(_cell_key(g, SAMARITAN_CELL), (None, None))
        if blocked(g["flags"]) and g.get("verdict") != "untested":
            flagged.setdefault(_cell_key(g, unit), []).append(str(g.get("group")))
    for persona in summary.get("default_persona") or []:
        out = flagged.get(_cell_key(persona, unit), [])
        for column in VERDICT_LISTS:
            persona[column] = [g for g in persona.get(column) or [] if g not in out]
        persona["flagged_groups"] = sorted(out)
    return summary
