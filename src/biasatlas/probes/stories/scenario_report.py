"""The scenario explorer's part of the section "As in Le Jeune et al., 2025": the dropdown of attribute
distributions across scenarios, one option per model × language slice and attribute, and the departures table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd


def departures_table(summary: Mapping[str, Any]) -> pd.DataFrame:
    """The scenarios where an attribute's distribution departs most (largest adjusted residual): the value, its
    share in the scenario (Wilson 95%) and in the other scenarios, and the attribute's test across scenarios
    (ours)."""
    rows = [{"model": d["model"], "language": d["language"], "attribute": d["attribute"], "scenario": d["scenario"],
             "scenario group": d["group"], "value": d["value"], "estimate": d["share"], "ci_low": d["ci_low"],
             "ci_high": d["ci_high"], "n": d["n"], "share in the other scenarios": d["share_elsewhere"],
             "difference": d["difference"], "adjusted residual (ours)": d["residual"],
             "attribute's q across scenarios (ours)": d.get("p_adj"),
             "not tested (ours)": d.get("too_few")}
            for d in summary.get("scenarios", {}).get("departures", [])]
    return pd.DataFrame(rows)


def explorer_section(out: Any, summary: Mapping[str, Any], cite: str) -> None:
    """The explorer (every model × language slice × attribute in its dropdown) and the departures table."""
    from biasatlas.probes.stories.scenarios import explorer_options
    from biasatlas.report.plots import choice_bars

    block = summary.get("scenarios") or {}
    options = explorer_options(block)
    if not options:
        out.add_text("Attribute distributions across scenarios: need story profiles that carry their scenario.")
        return
    tests = [t for t in block.get("tests", []) if t["level"] == "scenario"]
    differ = sorted({t["attribute"] for t in tests if t["significant"]})
    slices = len({(t["model"], t["language"]) for t in tests})
    shown = (f" The dropdown offers every attribute of each of the {slices} model × language slices." if slices > 1
             else "")
    out.add_plot(choice_bars(options, category="scenario", stack="value", estimate="share", low="ci_low",
                             high="ci_high", n="n", extra=["count"], x_title="Scenario",
                             y_title="Share of the stories with the attribute read",
                             menu_title="Attribute (and model, language):"),
                 f"{cite}, explorer of the attribute distributions across scenarios: choose an attribute; each "
                 "bar is a scenario, split by the attribute's values (its most frequent ones, the rest as other "
                 "values); the hover gives the share, its Wilson 95% interval (ours) and n, the scenario's stories "
                 f"whose attribute was read. The prompted attribute of a story is left out.{shown}")
    table = departures_table(summary)
    out.add_table(table, f"{cite}: where an attribute's distribution departs most across scenarios (ours): per "
                  "scenario the value with the largest adjusted standardised residual, its share (Wilson 95%) "
                  "against the other scenarios'. Ours: per attribute, the chi-square of the scenario × value table, "
                  "its p from permutations of the scenarios among the prompts of each prompted value (the prompt is "
                  "the unit: its samples are not independent stories), corrected across attributes; "
                  f"{len(differ)} of {len({t['attribute'] for t in tests})} attributes differ across scenarios"
                  + (f" ({', '.join(differ)})." if differ else ".")
                  + " A test flagged too few was not run (no prompted value has prompts in two scenarios).")
