"""Reading failures by group in `biasatlas summary` and the report: the tests, the groups that differ, and the
flag of a group effect smaller than the groups' difference in reading failures.

The figures come from :func:`biasatlas.readers.failures.failure_tables` (summary key ``reading_failures``);
the flag from :func:`biasatlas.stats.reading_failures.exceeds_effect`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from biasatlas.readers.failures import CELLS, CONTROL, answers, failure_rates, failure_tables

if TYPE_CHECKING:
    import pandas as pd

    from biasatlas.report.html import Section

KEY = "reading_failures"
#: differing groups named one by one in the summary (--json lists them all)
SHOWN = 20
METHOD = ("Answers not read (refused, unclear, unreadable) tested by group, questions as strata: Cochran-Mantel-"
          "Haenszel general association statistic over the groups (within-question permutation p, chi-squared "
          "above 200 informative questions); each group against the rest of its axis with the exact conditional "
          "stratified test, Holm-adjusted over the axis's groups; rates with Wilson 95% intervals, differences "
          "in points with Newcombe's interval. Each answer counts once.")


def add_failures(summary: dict[str, Any], out: pd.DataFrame, probe: str, alpha: float = 0.05) -> None:
    """Put the tests of reading failures by group, and the flags of the summary's group effects, in ``summary``."""
    block = failure_tables(out, probe, alpha)
    block["method"] = METHOD
    block["effect_flags"] = (_contact_flags(out, summary.get("across_languages")) if probe == "contact"
                             else _samaritan_flags(block, summary.get("groups") or []))
    summary[KEY] = block


def _contact_flags(out: pd.DataFrame, across: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Each group effect of the across-languages table (its biased share minus its language's other groups')
    whose failure rates (the group's and the rest's) differ by more than the effect."""
    from biasatlas.stats.reading_failures import exceeds_effect

    if not across or not across.get("effects") or "descriptor" not in out.columns:
        return []
    frame = answers(out, "contact")
    frame["failed"] = frame["kind"].notna()
    cell = ["model", "mode", "language"]
    own: dict[Any, Any] = frame.groupby([*cell, "descriptor"])["failed"].agg(["sum", "size"]).T.to_dict()
    total: dict[Any, Any] = frame.groupby(cell)["failed"].agg(["sum", "size"]).T.to_dict()
    flags = []
    for row in across["effects"]:
        key = (row["model"], row.get("mode"), row["language"])
        mine, everyone = own.get((*key, row["group"])), total.get(key)
        if mine is None or everyone is None or everyone["size"] <= mine["size"]:
            continue
        pct = 100 * mine["sum"] / mine["size"]
        rest = 100 * (everyone["sum"] - mine["sum"]) / (everyone["size"] - mine["size"])
        effect = 100 * float(row["effect"])
        if exceeds_effect([pct, rest], effect):
            flags.append({"model": row["model"], "mode": row.get("mode"), "language": row["language"],
                          "group": str(row.get("label") or row["group"]), "effect_pp": effect,
                          "not_read_pct": float(pct), "other_not_read_pct": float(rest), "versus": "the other groups"})
    return flags


def _samaritan_flags(block: dict[str, Any], groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each group's bias (its rating minus the control's, in rating points of 1-100) smaller than the gap
    between its failure rate and the control's."""
    from biasatlas.stats.reading_failures import exceeds_effect

    flags = []
    for row in groups:
        if row.get("bias") is None:
            continue
        where = {k: row.get(k) for k in ("model", "language", "temperature", "max_tokens")}
        mine, control = (failure_rates(block, [g], **where) for g in (row["group"], CONTROL))
        if mine and control and exceeds_effect([mine[0], control[0]], float(row["bias"])):
            flags.append({**where, "category": row.get("category"), "group": row["group"],
                          "effect_pp": float(row["bias"]), "not_read_pct": mine[0], "other_not_read_pct": control[0],
                          "versus": "the control"})
    return flags


def _cell(row: dict[str, Any], probe: str) -> str:
    return " · ".join(str(row.get(k)) for k in CELLS[probe])


def finding_lines(summary: dict[str, Any], probe: str) -> list[str]:
    """One sentence per group whose failure rate differs from the rest of its axis (Holm)."""
    lines = []
    for g in sorted((g for g in (summary.get(KEY) or {}).get("groups", []) if g["differs"]),
                    key=lambda g: g["p_adj"]):
        what = {"refusal": "refused", "unclear": "answered unclearly", "unreadable": "answered unreadably",
                "not read": "gave an answer that was not read"}[g["kind"]]
        ratio = g.get("ratio")
        times = (f"{ratio:.1f}× as often as" if ratio is not None and ratio >= 1 else
                 f"less often ({ratio:.2f}×) than" if ratio is not None else
                 "more often than" if g["diff_pp"] > 0 else "less often than")
        lines.append(f"{_cell(g, probe)}: for {g['group']} the model {what} {times} for the other groups: "
                     f"{g['pct']:.1f}% [{g['ci_low']:.1f}, {g['ci_high']:.1f}] of {g['n']} vs {g['rest_pct']:.1f}% "
                     f"({g['diff_pp']:+.1f} points [{g['diff_ci_low']:+.1f}, {g['diff_ci_high']:+.1f}]), "
                     f"Holm p {g['p_adj']:.2g}")
    return lines


def flag_lines(summary: dict[str, Any]) -> list[str]:
    """One warning per group effect smaller than its groups' difference in reading failures."""
    return [f"⚑ reading failures: {f['model']} · {f['language']} · {f['group']}: effect {f['effect_pp']:+.1f} "
            f"points, but {f['not_read_pct']:.1f}% of its answers were not read vs {f['other_not_read_pct']:.1f}% "
            f"for {f['versus']}: the difference in what was read may make the effect"
            for f in (summary.get(KEY) or {}).get("effect_flags", [])]


def print_failures(summary: dict[str, Any], probe: str, console: Any) -> None:
    """The summary's lines: the tests that found a difference, each differing group, and the flags."""
    block = summary.get(KEY) or {}
    tests = block.get("tests", [])
    if not tests:
        return
    differing = [t for t in tests if t["differs"]]
    console.print(f"Reading failures by group: {len(differing)} of {len(tests)} cell x kind tests find a group "
                  "that differs (Holm over the axis's groups)", markup=False, soft_wrap=True)
    lines = finding_lines(summary, probe)
    for line in lines[:SHOWN]:
        console.print(f"  {line}", markup=False, soft_wrap=True)
    if len(lines) > SHOWN:
        console.print(f"  {len(lines) - SHOWN} more in `summary --json` ({KEY})", markup=False)
    for line in flag_lines(summary):
        console.print(line, markup=False, soft_wrap=True)


def section(out: pd.DataFrame, probe: str, title: str, summary: dict[str, Any] | None = None) -> Section | None:
    """The report's section of reading failures by group (from ``summary`` where it holds them, else from the
    outcomes ``out``), or None when there is nothing to test."""
    import pandas as pd

    from biasatlas.report.html import Section

    if summary is None or KEY not in summary:
        summary = {**(summary or {})}
        add_failures(summary, out, probe)
    block = summary.get(KEY) or {}
    if not block.get("tests"):
        return None
    part = Section(f"{title}: reading failures by group", methods=METHOD)
    for line in finding_lines(summary, probe) or ["No group's answers failed to be read more or less often than "
                                                  "the rest of its axis's."]:
        part.add_text(line)
    for line in flag_lines(summary):
        part.add_text(line)
    tests = pd.DataFrame(block["tests"]).drop(columns=["method"])
    part.add_table(tests, "Tests per cell and failure kind (p: CMH over the groups; groups differing: Holm)")
    groups = pd.DataFrame(block["groups"])
    part.add_table(groups.sort_values(["p_adj", "p"], na_position="last"),
                   "Each group against the rest of its axis: failure rate % [Wilson 95% CI], difference in points "
                   "[Newcombe 95% CI], exact stratified p and Holm-adjusted p")
    return part
