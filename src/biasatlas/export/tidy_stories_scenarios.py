"""Tidy statistics rows of the stories' scenario explorer (``summary --json`` ``scenarios``): each value's share
per scenario and scenario group (Wilson 95%), and the chi-square test of each attribute across scenarios (ours),
its p from permutations of the scenarios among the prompts (the unit) of each prompted value.
"""

from __future__ import annotations

from typing import Any

from biasatlas.stats.quality import Quality

Row = dict[str, Any]
ACROSS = {"scenario": "across scenarios", "group": "across scenario groups"}
TEST = "Pearson chi-square test of independence, permutation p (prompts within prompted value)"


def _distribution_rows(entries: list[dict[str, Any]]) -> list[Row]:
    rows = []
    for e in entries:
        where = "scenario" if e["level"] == "scenario" else "scenario group"
        for v in e["values"]:
            low, high = v["ci95"]
            rows.append({"source": "scenario distribution", "model": e["model"], "language": e["language"],
                         "scenario": e["scenario"] if e["level"] == "scenario" else None, "group": e["group"],
                         "measure": ACROSS[e["level"]], "compared_attribute": e["attribute"],
                         "compared_value": v["value"], "estimate": v["share"],
                         "estimand": f"share of the {where}'s stories with the attribute read that have the value",
                         "ci_low": low, "ci_high": high, "ci_method": "Wilson", "ci_level": 0.95, "n": e["n"],
                         "n_unit": f"stories of the {where} whose attribute was read (not unknown)"})
    return rows


def _test_rows(tests: list[dict[str, Any]], flags: Any) -> list[Row]:
    rows = []
    for t in tests:
        extra = Quality()
        if t.get("too_few") and t.get("p") is not None:
            extra.add("few_answers", str(t.get("too_few_note")))
        units = "scenarios" if t["level"] == "scenario" else "scenario groups"
        dof = f", dof {t['dof']}" if t.get("dof") is not None else ""
        rows.append({"source": "scenario test", "model": t["model"], "language": t["language"], "scenario": None,
                     "group": None, "measure": ACROSS[t["level"]], "compared_attribute": t["attribute"],
                     "comparison": f"{t['attribute']} {ACROSS[t['level']]} ({t['scenarios']} {units}, "
                     f"{t['values']} values{dof}, {t.get('prompts', t['n'])} prompts)", "test": TEST,
                     "statistic": t.get("chi2"),
                     "statistic_name": "chi-square", "estimand": "whether the attribute's distribution differs "
                     f"{ACROSS[t['level']]} (a test of ours; the paper shows the distributions only)",
                     "p": t.get("p"), "p_adj": t.get("p_adj"), "correction": t.get("correction"),
                     "alpha": t.get("alpha"), "significant": t.get("significant"), "n": t["n"],
                     "n_unit": "stories whose attribute was read (the test's unit: their prompts, in comparison)",
                     "family": f"stories scenario explorer: one test per extracted attribute, per model × language, "
                     f"{ACROSS[t['level']]}",
                     **flags(None, None, t.get("alpha") or 0.05, TEST, t.get("p"),
                             reason=t.get("too_few_note"), extra=extra)})
    return rows


def scenario_rows(block: dict[str, Any], alpha: float, flags: Any) -> list[Row]:
    """The rows of the scenario block (``flags``: tidy_other.flag_columns, passed in to avoid an import cycle)."""
    if not block:
        return []
    rows = _distribution_rows(block.get("distributions") or []) + _test_rows(block.get("tests") or [], flags)
    empty = flags(None, None, alpha, "")
    return [{**empty, **r} if "flags" not in r else r for r in rows]
