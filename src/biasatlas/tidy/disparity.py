"""Group disparity as tidy statistics rows (``source`` = ``group disparity``), and the headline in words.

One row per family's omnibus test ("are the groups of this axis / category treated alike?") and one per group
(its effect against the other groups of its family). The row of the headline group of each family (its pooled
level, its main measure) is marked ``group_headline`` (``headline`` stays the probe's effect headline);
:func:`headline_text` says it in the one sentence every surface prints (`summary`, the report's overview, the
run's last lines).
"""

from __future__ import annotations

import math
from typing import Any

from biasatlas.stats.quality import Quality, answer_flags, attainable_flag, not_tested

Row = dict[str, Any]
SOURCE = "group disparity"
FAMILY = {
    "contact": "group disparity: the groups of one axis of one model x mode x language, at one framing level "
    "(all framings pooled, or one framing); Holm",
    "samaritan": "group disparity: the groups of one category of one model x language x decoding; Holm",
}
ESTIMAND = {
    "decision": "share of biased decisions: the group − the mean of the other groups of its axis, over the same "
    "questions",
    "P(biased)": "mean P(biased): the group − the mean of the other groups of its axis, over the same questions",
    "rating": "rating: the group − the mean of the other groups of its category, over the same scenarios "
    "(rating points)",
}
N_UNIT = {
    "contact": "questions (template cell x scale x action x framing; texts the MMHB packs share counted once) "
    "that every group of the axis has a decision on; units: their no-contact questions, the clusters of the "
    "interval",
    "samaritan": "scenarios every group of the category was read on (rephrasings and samples averaged)",
}
BLOCKING = ("not_tested", "too_few_units", "not_fitted", "not_converged")


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _blocked(flags: Any) -> bool:
    return any(code in str(flags or "") for code in BLOCKING)


def _flags(g: Row, alpha: float, what: str) -> Quality:
    quality = answer_flags(int(g.get("answers") or 0), int(g.get("unreadable") or 0), int(g.get("refusals") or 0))
    if _missing(g.get("p")):
        quality.merge(not_tested(str(g.get("test") or "no test").removeprefix("not tested: ")))
    groups = int(g.get("groups") or 1)
    if not _missing(g.get("min_p")):
        # Holm's first step compares the smallest p with alpha / groups: below that the group cannot be found
        quality.merge(attainable_flag(min(1.0, float(g["min_p"]) * groups), alpha,
                                      f"the group-vs-rest test of {groups} {what} groups (Holm)"))
    return quality


def disparity_rows(probe: str, groups: list[Row], alpha: float, cell: tuple[str, ...],
                   what: str = "axis") -> list[Row]:
    """The tidy rows of ``groups`` (the probe's disparity rows); ``cell``: the columns of a family."""
    rows: list[Row] = []
    families: dict[tuple[Any, ...], list[Row]] = {}
    for g in groups:
        families.setdefault((*(g.get(k) for k in cell), g.get("level"), g.get("measure")), []).append(g)
    for members in families.values():
        first = members[0]
        labels = {k: first.get(k) for k in cell}
        measure = first.get("measure")
        family_name = str(first.get(what) or "")
        common: Row = {"source": SOURCE, **labels, "contact": first.get("level"), "measure": measure,
                       "alpha": alpha, "correction": "holm", "family": FAMILY[probe], "n_unit": N_UNIT[probe]}
        tested = [m for m in members if not _missing(m.get("p"))]
        if tested and not _missing(first.get("omnibus_p", tested[0].get("omnibus_p"))):
            head = tested[0]
            quality = Quality()
            rows.append({**common, "group": None, "comparison": f"the {len(tested)} {family_name} groups alike",
                         "test": head.get("omnibus_test"), "statistic": head.get("omnibus_statistic"),
                         "statistic_name": "Q" if "Cochran" in str(head.get("omnibus_test")) else "chi-squared",
                         "p": head.get("omnibus_p"), "p_adj": None, "n": head.get("questions"),
                         "units": head.get("units"), "headline": False, "group_headline": False,
                         "flags": quality.flags,
                         "flag_notes": quality.text})
        for g in members:
            quality = _flags(g, alpha, family_name)
            p_adj = g.get("p_adj")
            rows.append({
                **common, "group": g.get("group"), "comparison": f"{g.get('group')} vs the other {family_name} groups",
                "test": g.get("test"), "estimate": g.get("effect"), "estimand": ESTIMAND.get(str(measure), ""),
                "ci_low": g.get("ci_low"), "ci_high": g.get("ci_high"), "ci_level": 1 - alpha
                if not _missing(g.get("ci_low")) else None,
                "ci_method": "Newcombe method 10, answers deflated by the units' design effect"
                if measure == "decision" else "Student t over units",
                "statistic": g.get("statistic"),
                "statistic_name": "biased answers of the group" if measure == "decision" else "t",
                "p": g.get("p"), "p_adj": p_adj, "n": g.get("n"), "units": g.get("units"),
                "significant": None if _missing(p_adj)
                else bool(float(str(p_adj)) < alpha) and not quality.blocks_interval,
                "mde": g.get("mde"), "mde_note": _mde_note(g, alpha), "headline": False, "group_headline": False,
                "flags": quality.flags, "flag_notes": quality.text,
            })
    _mark_headlines(rows, cell)
    return rows


def _mde_note(g: Row, alpha: float) -> str | None:
    if _missing(g.get("mde")):
        return None
    return (f"80% power at alpha {alpha:g} / {g.get('groups')} groups (Holm's first step) on {g.get('n')} "
            "questions against the others' observed share (normal approximation)")


def _mark_headlines(rows: list[Row], cell: tuple[str, ...]) -> None:
    """Per family (pooled level, the main measure): the headline row, the group most disfavoured among those
    that differ (contact: most biased decisions; Samaritan: the lowest rating), else the most favoured that
    differs, else the largest gap (a finding or not)."""
    families: dict[tuple[Any, ...], list[Row]] = {}
    for r in rows:
        if r.get("group") is None or r.get("contact") not in (None, "all") or r.get("measure") == "P(biased)":
            continue
        families.setdefault(tuple(r.get(k) for k in cell), []).append(r)
    for members in families.values():
        estimated = [r for r in members if not _missing(r.get("estimate"))]
        if not estimated:  # no group could be compared: the headline says so, with the reason
            members[0]["group_headline"] = True
            continue
        worse = _worse(members[0])
        differ = [r for r in estimated if r.get("significant")]
        up = [r for r in differ if worse * r["estimate"] > 0]
        if up:
            pick = max(up, key=lambda r: worse * r["estimate"])
        elif differ:
            pick = min(differ, key=lambda r: worse * r["estimate"])
        else:
            pick = max(estimated, key=lambda r: abs(r["estimate"]))
        pick["group_headline"] = True


def _worse(row: Row) -> int:
    """The sign of a disfavouring effect: more biased decisions (contact), a lower rating of help (Samaritan)."""
    return -1 if row.get("measure") == "rating" else 1


def _pp(value: Any, scale: float) -> str:
    return "–" if _missing(value) else f"{scale * float(value):+.1f}"


def headline_text(row: Row, family_word: str = "axis") -> str:
    """The headline of one family in words: the group that differs, or that none does with what was detectable."""
    from biasatlas.report.cells import format_p

    if row.get("measure") == "associations":
        return _stories_text(row)
    family = row.get("axis") or row.get("category") or family_word
    if _missing(row.get("estimate")):
        why = f" ⚑ {row['flags']}" if row.get("flags") else ""
        return (f"no {family} group compared: no two groups have a decision on the same question "
                f"(e.g. a --limit that drew other questions for each group){why}")
    rating = row.get("measure") == "rating"
    scale, unit = (1.0, " rating points") if rating else (100.0, " pp")
    interval = ("" if _blocked(row.get("flags")) or _missing(row.get("ci_low"))
                else f" [{_pp(row.get('ci_low'), scale)}, {_pp(row.get('ci_high'), scale)}]")
    effect = f"{row.get('group')} {_pp(row.get('estimate'), scale)}{unit}{interval} vs the other {family} groups"
    if row.get("significant"):
        word = "most disfavoured" if _worse(row) * float(row["estimate"]) > 0 else "most favoured"
        return f"{word}: {effect}, p adj {format_p(row.get('p_adj'))} (Holm)"
    flags = f" ⚑ {row['flags']}" if row.get("flags") else ""
    mde = "" if _missing(row.get("mde")) else (f", detectable at this size: MDE ±{abs(scale * float(row['mde'])):.1f}"
                                               f"{unit}")
    return f"no {family} group differs: largest gap {effect}, p adj {format_p(row.get('p_adj'))}{mde}{flags}"


def stories_group_rows(associations: list[Row], alpha: float) -> list[Row]:
    """Stories: which prompted groups (A = a) carry the most significant associations (BY-adjusted q < alpha,
    the mining's own tests), one row per group; the group with the most (ties: the smallest q) of each
    attribute A is the ``group_headline``. No new test: the rows count the cells the mining found."""
    groups: dict[tuple[Any, Any], list[Row]] = {}
    for a in associations:
        groups.setdefault((a.get("base_attribute"), a.get("base_value")), [])
        if not _missing(a.get("q")) and float(a["q"]) < alpha:
            groups[(a.get("base_attribute"), a.get("base_value"))].append(a)
    rows: list[Row] = []
    for (attribute, value), found in groups.items():
        strongest = max(found, key=lambda a: float(a.get("lift") or 0)) if found else {}
        rows.append({
            "source": SOURCE, "attribute": attribute, "value": value, "group": value, "measure": "associations",
            "comparison": f"{attribute} = {value}: its significant associations",
            "test": "count of the cells whose Fisher test (BY-adjusted q) is below alpha",
            "estimate": len(found), "estimand": "significant associations of the group (cells of its row)",
            "compared_attribute": strongest.get("compared_attribute"),
            "compared_value": strongest.get("compared_value"),
            "effect_size": strongest.get("lift"), "effect_size_name": "lift of its strongest association",
            "p_adj": strongest.get("q"), "alpha": alpha, "correction": "by", "headline": False,
            "group_headline": False, "significant": bool(found),
            "family": "stories: the cells of one attribute A x attribute B table (BY)",
            "n_unit": "association cells of the group's row",
        })
    for attribute in {r["attribute"] for r in rows}:
        mine = [r for r in rows if r["attribute"] == attribute]
        best = max(mine, key=lambda r: (r["estimate"], -(r["p_adj"] if not _missing(r["p_adj"]) else 1.0)))
        best["group_headline"] = True
    return rows


def _stories_text(row: Row) -> str:
    from biasatlas.report.cells import format_p

    if not row.get("estimate"):
        return f"no {row.get('attribute')} group carries a significant association"
    return (f"most associations: {row.get('group')} ({row['estimate']} significant; strongest "
            f"{row.get('compared_attribute')} = {row.get('compared_value')}, lift {float(row['effect_size']):.2f}, "
            f"q {format_p(row.get('p_adj'))} (BY))")


def headline_lines(statistics: list[Row]) -> list[tuple[Row, str]]:
    """Each headline row of the disparity with its words, in the rows' order."""
    return [(r, headline_text(r)) for r in statistics if r.get("source") == SOURCE and r.get("group_headline")]
