"""Group disparity of the Samaritan probe: which group of a category is rated differently from the others.

Family: one model × language × decoding × category; its groups are the category's groups (the control is not
one of them: the group-vs-control tests are the probe's other table). Every group is asked the same scenarios;
per group and scenario, the mean rating over its rephrasings (each cell's phrasings and samples pooled, a
stored answer once: ``analysis.scenario_means``). Scenarios every group of the category was read on enter:
Friedman's test over the groups with scenarios as blocks ("are the groups rated alike?"), each group against
the mean of the other groups (a paired t-test over scenarios, Holm over the groups), every pair of groups
(paired t-tests, Holm over the pairs: which groups differ from each other), and the spread of the groups'
gaps from the control (range and standard deviation, from the group-vs-control table).
"""

from __future__ import annotations

import math
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from biasatlas.probes.samaritan.analysis import UNIT, scenario_means
from biasatlas.probes.samaritan.data import CONTROL
from biasatlas.stats.disparity import continuous_groups, continuous_omnibus, step_down
from biasatlas.stats.multitest import holm

FAMILY = (*UNIT, "category")


def rating_mde(sd: float, n: int, groups: int, alpha: float, power: float = 0.8) -> float:
    """The smallest gap of one group from the others' mean its t-test detects with ``power`` at alpha / groups
    (Holm's first step), from the observed sd of the scenario differences (normal approximation)."""
    if n < 2 or groups < 2 or not sd > 0:
        return math.nan
    return float((sps.norm.ppf(1 - alpha / (2 * groups)) + sps.norm.ppf(power)) * sd / math.sqrt(n))


def _pairs(wide: pd.DataFrame, alpha: float) -> list[dict[str, Any]]:
    """Every pair of groups: paired t over scenarios, Holm over the pairs of the family."""
    pairs = list(combinations([str(g) for g in wide.columns], 2))
    rows = []
    for a, b in pairs:
        diff = (wide[a] - wide[b]).to_numpy(float)
        p = float(sps.ttest_rel(wide[a], wide[b]).pvalue) if len(diff) > 1 and diff.std() > 0 else math.nan
        rows.append({"a": a, "b": b, "difference": float(diff.mean()) if len(diff) else math.nan, "p": p})
    adjusted: list[float] = holm(np.array([r["p"] for r in rows], float)).tolist() if rows else []
    for row, q in zip(rows, adjusted, strict=True):
        row["p_adj"] = float(q)
        row["differs"] = bool(q < alpha)
    return rows


def disparity(outcomes: pd.DataFrame, groups_table: list[dict[str, Any]], alpha: float) -> dict[str, list[Any]]:
    """``groups``: one row per family × group; ``pairs``: the pairwise tests; ``spread``: per family."""
    out: dict[str, list[Any]] = {"groups": [], "pairs": [], "spread": []}
    if outcomes.empty:
        return out
    means = scenario_means(outcomes[outcomes["category"] != CONTROL])
    gaps = pd.DataFrame(groups_table) if groups_table else pd.DataFrame()
    for key, part in means.groupby(list(FAMILY), sort=True, dropna=False):
        labels = dict(zip(FAMILY, key, strict=True))
        wide = part.pivot(index="scenario", columns="group", values="rating").dropna()
        asked = sorted(part["group"].astype(str).unique())
        if len(asked) < 2:
            continue
        base = {**labels, "level": None, "measure": "rating", "groups": len(asked), "questions": len(wide)}
        if wide.shape[1] >= 2 and len(wide) >= 2:
            names = [str(g) for g in wide.columns]
            table = wide.to_numpy(float)
            omnibus = continuous_omnibus(table)
            effects = step_down(table, names, wide.index.to_numpy(), alpha, continuous_groups)
            sd = [float(np.std(table[:, j] - np.delete(table, j, 1).mean(1), ddof=1)) for j in range(len(names))]
            for e, s in zip(effects, sd, strict=True):
                out["groups"].append({
                    **base, "group": e.group, "value": e.value, "others": e.others, "effect": e.effect,
                    "ci_low": e.ci_low, "ci_high": e.ci_high, "statistic": e.statistic, "p": e.p, "min_p": e.min_p,
                    "p_adj": e.p_adj, "n": e.n, "units": e.units, "sd_diff": s,
                    "mde": rating_mde(s, e.n, len(names), alpha),
                    "test": "paired t-test over scenarios (the group − the mean of the other groups)",
                    "omnibus_test": omnibus.method, "omnibus_statistic": omnibus.statistic, "omnibus_p": omnibus.p})
            out["pairs"] += [{**labels, **r} for r in _pairs(wide, alpha)]
        tested = {str(g) for g in wide.columns} if len(wide) >= 2 else set()
        for group in sorted(set(asked) - tested):
            out["groups"].append({**base, "group": group, "n": 0, "units": 0,
                                  "test": "not tested: fewer than 2 scenarios read for every group of the category"})
        if not gaps.empty:
            mine = gaps[np.logical_and.reduce([gaps[k].astype(str) == str(v) for k, v in labels.items()])]
            bias = pd.to_numeric(mine["bias"], errors="coerce").dropna() if "bias" in mine else pd.Series(dtype=float)
            if len(bias):
                out["spread"].append({**labels, "groups": len(bias), "range": float(bias.max() - bias.min()),
                                      "sd": float(bias.std(ddof=1)) if len(bias) > 1 else None,
                                      "lowest": str(mine["group"].to_dict()[bias.idxmin()]),
                                      "highest": str(mine["group"].to_dict()[bias.idxmax()])})
    return out


def answer_quality(groups: list[dict[str, Any]], table: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``groups`` with each group's answers, unreadable and refusals from the group-vs-control table."""
    keys = (*FAMILY, "group")
    counts = {tuple(str(g.get(k)) for k in keys): g for g in table}
    for row in groups:
        g = counts.get(tuple(str(row.get(k)) for k in keys)) or {}
        row.update(answers=g.get("n_answered"), unreadable=g.get("n_unparseable"), refusals=g.get("n_refusals"))
    return groups


def statistics(outcomes: pd.DataFrame, groups_table: list[dict[str, Any]], alpha: float) -> list[dict[str, Any]]:
    """The group-disparity statistics rows (as the summary's, for the report's section)."""
    from biasatlas.tidy.disparity import disparity_rows

    block = disparity(outcomes, groups_table, alpha)
    return disparity_rows("samaritan", answer_quality(block["groups"], groups_table), alpha, FAMILY, what="category")


METHODS = ("Samaritan: per model × language × decoding × category, the scenarios every group was read on; "
           "the group's rating minus the other groups' mean, paired t over scenarios, Holm over the groups.")


def add_to_sections(sections: list[Any], store: Any) -> None:
    """The report's group-disparity block (headline sentences, forest plot, table; the spread of the gaps from
    the control and which groups differ from each other) at the top of the probe's section (its first), from
    the study's outcomes and group-vs-control table at the study's settings."""
    from biasatlas.probes.samaritan.analysis import compare_to_control
    from biasatlas.probes.samaritan.read import load_outcomes
    from biasatlas.probes.samaritan.summary import analysis_settings
    from biasatlas.report.disparity_block import add_disparity, prepend
    from biasatlas.tidy.disparity import disparity_rows

    frame = load_outcomes(store)
    if not sections or frame.empty:
        return
    settings = analysis_settings(store)
    groups = compare_to_control(frame, settings["alpha"], settings["correction"],
                                equivalence_margin=settings["equivalence_margin"])
    if groups.empty:
        return
    alpha = settings["alpha"]
    records = [{str(k): v for k, v in g.items()} for g in groups.to_dict("records")]
    block = disparity(frame, records, alpha)  # once: the group rows, the pairs and the spread
    rows = disparity_rows("samaritan", answer_quality(block["groups"], records), alpha, FAMILY, what="category")

    def build(section: Any) -> None:
        add_disparity(section, rows, "category", METHODS, drill="samaritan")
        add_spread_and_pairs(section, block["spread"], block["pairs"])

    prepend(sections[0], build)


def _where(row: dict[str, Any]) -> str:
    return " · ".join(str(row[k]) for k in ("model", "language", "category") if row.get(k) is not None)


def add_spread_and_pairs(section: Any, spread: list[dict[str, Any]], pairs: list[dict[str, Any]]) -> None:
    """The spread of each category's gaps from the control, the pairs of groups that differ from each other
    (in words) and every pair's test (a table)."""
    from biasatlas.report.cells import format_p

    for s in spread:
        sd = "–" if s.get("sd") is None else f"{s['sd']:.1f}"
        section.add_text(f"Spread of the gaps from the control, {_where(s)}: range {s['range']:.1f} rating points "
                         f"({s['lowest']} lowest, {s['highest']} highest), sd {sd} over {s['groups']} groups.")
    for p in (p for p in pairs if p.get("differs")):
        section.add_text(f"Differ from each other, {_where(p)}: {p['a']} vs {p['b']} {p['difference']:+.1f} rating "
                         f"points, p adj {format_p(p['p_adj'])} (Holm over the pairs of the category).")
    if pairs:
        import pandas as pd

        table = pd.DataFrame(pairs)
        shown = [c for c in (*FAMILY, "a", "b", "difference", "p", "p_adj", "differs") if c in table.columns]
        section.add_table(table[shown].rename(columns={"difference": "a − b (rating points)", "p_adj": "p adj (Holm)"}),
                          caption="Group disparity, every pair of groups of a category: the mean difference of "
                          "their ratings over the scenarios both were read on, paired t-test, p adjusted (Holm) "
                          "over the pairs of the category.")


def print_disparity(summary: dict[str, Any], console: Any) -> None:
    """The headline of each category (the group rated unlike the others), its groups, spread and pairs."""
    from rich.table import Table

    from biasatlas.report.cells import format_p
    from biasatlas.tidy.disparity import SOURCE, headline_lines

    for row, text in headline_lines(summary.get("statistics") or []):
        cell = " · ".join(str(row[k]) for k in ("model", "language") if row.get(k))
        console.print(f"group disparity {cell} · T={row.get('temperature')}: {text}", markup=False, soft_wrap=True)
    rows = [r for r in summary.get("statistics") or [] if r.get("source") == SOURCE and r.get("group")]
    if not rows:
        return
    table = Table(title="Group disparity: each group's rating − the mean of the other groups of its category "
                  "(rating points, t 95% CI over scenarios); p adj Holm over the groups of the category")
    for column in ("model", "lang", "T", "category", "group", "n scenarios", "effect [95% CI]", "p", "p adj ⚑ flags"):
        table.add_column(column, justify="left" if column in ("model", "lang", "category", "group") else "right")
    for r in sorted(rows, key=lambda r: (str(r["model"]), str(r["language"]), str(r["category"]),
                                         r["estimate"] if r.get("estimate") is not None else 1e9)):
        flags = r.get("flags")
        blocked = any(code in str(flags or "") for code in ("not_tested", "too_few_units"))
        effect = "–" if r.get("estimate") is None else f"{r['estimate']:+.1f}" + (
            "" if blocked or r.get("ci_low") is None else f" [{r['ci_low']:+.1f}, {r['ci_high']:+.1f}]")
        star = " *" if r.get("significant") else ""
        p_adj = "–" if r.get("p_adj") is None else format_p(r["p_adj"]) + star + (f" ⚑ {flags}" if flags else "")
        table.add_row(str(r["model"]), str(r["language"]), str(r.get("temperature")), str(r["category"]),
                      str(r["group"]), str(r.get("n")), effect, format_p(r.get("p")), p_adj)
    console.print(table)
    for s in summary.get("group_disparity_spread") or []:
        sd = "–" if s.get("sd") is None else f"{s['sd']:.1f}"
        console.print(f"spread of the gaps from the control · {s['model']} · {s['language']} · {s['category']}: "
                      f"range {s['range']:.1f} rating points ({s['lowest']} lowest, {s['highest']} highest), sd {sd}",
                      markup=False, soft_wrap=True)
    differ = [p for p in summary.get("group_disparity_pairs") or [] if p.get("differs")]
    for p in differ:
        console.print(f"differ from each other · {p['model']} · {p['language']} · {p['category']}: {p['a']} vs "
                      f"{p['b']} {p['difference']:+.1f} rating points, p adj {format_p(p['p_adj'])} (Holm over "
                      "the pairs)", markup=False, soft_wrap=True)
