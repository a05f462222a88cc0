"""The scenario explorer: each extracted attribute's distribution per model × language × scenario (and group).

Le Jeune et al. (2025) offer an explorer of the attribute distributions across models, languages and scenarios;
here each value's share per scenario carries a Wilson 95% interval, and a chi-square test of independence of the
scenario × value table (ours: the paper shows the distributions, it tests none) says whether an attribute's
distribution differs across scenarios. The prompted attribute of a story is left out of its distribution (as in
:func:`.analysis.distributions`); n counts the stories whose attribute was read (not ``unknown``).
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import pandas as pd

from biasatlas.probes.stories.seeds import UNKNOWN, load_seeds
from biasatlas.stats.multitest import adjust
from biasatlas.stats.proportions import wilson_intervals

SLICE = ["model", "language"]
LEVELS = ("scenario", "group")
#: values kept per scenario in the summary (the rest summed as "other")
TOP_VALUES = 5
#: scenarios listed where an attribute departs most
DEPARTURES = 20
DEFAULT_CORRECTION = "bh"
#: Monte Carlo permutations of the scenario test (p resolution 1 / (PERMUTATIONS + 1))
PERMUTATIONS = 1000
TOO_FEW_RULE = (
    "not tested where fewer than 2 scenarios or 2 values have stories, or where no prompted value has prompts "
    "in two scenarios (no permutation can move a scenario); the permutation p does not rest on the chi-square "
    "approximation, so sparse tables (Cochran's rule unmet: an expected count below 1 or over 20% below 5, "
    "reported as cochran false) are tested too"
)
DIST_COLUMNS = [*SLICE, "level", "scenario", "group", "attribute", "value", "count", "n", "share", "ci_low",
                "ci_high", "share_elsewhere", "difference", "residual"]
TEST_COLUMNS = [*SLICE, "level", "attribute", "chi2", "dof", "p", "p_asymptotic", "permutations", "n", "prompts",
                "scenarios", "values", "min_expected", "share_expected_below_5", "cochran", "too_few", "too_few_note",
                "p_adj", "correction", "alpha", "significant"]


def method_text(alpha: float = 0.05, correction: str = DEFAULT_CORRECTION) -> str:
    """The methods paragraph of the explorer."""
    name = {"bh": "Benjamini-Hochberg", "holm": "Holm"}.get(correction, correction)
    return (
        "Scenario explorer (the paper's explorer of attribute distributions; the intervals and the test are ours): "
        "per model × language and per scenario (and per scenario group), the share of each value of every "
        "extracted attribute among the stories whose attribute was read (unknown left out of n; the prompted "
        "attribute left out), with a Wilson 95% interval (over stories: with several stories a prompt it is too "
        "narrow). Ours: per attribute, Pearson's chi-square of the scenario × value table of the stories, its p "
        f"from {PERMUTATIONS:,} seeded permutations of the scenarios among the prompts of each prompted value "
        "(the prompt is the unit: a prompt's samples share it, and are copies under deterministic decoding; and "
        "a limited draw cannot confound the scenario with the prompted value), "
        f"{name} across the attributes of each model × language and level at alpha {alpha:g}; {TOO_FEW_RULE}. "
        "A departure is a scenario's share of a "
        "value minus its share in the other scenarios, with the adjusted standardised residual of the cell."
    )


def scenario_groups() -> dict[str, str]:
    """The group of each bundled scenario key."""
    return {s.key: s.group for s in load_seeds("en").scenarios}


def _counts(profiles: pd.DataFrame, dim: str, where: str) -> pd.DataFrame:
    """Stories per slice × ``where`` × value of ``dim`` (read values only), with every zero of the grid."""
    sub = profiles[(profiles["base_attribute"].astype(str) != dim) & profiles[where].notna()]
    values = sub[dim].astype(str)
    sub = sub.assign(value=values, scenario=sub[where].astype(str))[values != UNKNOWN]
    if sub.empty:
        return pd.DataFrame()
    counts = sub.groupby([*SLICE, "scenario", "value"], observed=True).size()
    parts = []
    for keys, block in counts.groupby(level=[0, 1], observed=True):
        table = cast(pd.Series, block.droplevel([0, 1]).unstack(fill_value=0).stack())  # every scenario × value
        frame = table.rename("count").reset_index()
        frame["model"], frame["language"] = tuple(keys) if isinstance(keys, tuple) else (keys, None)
        parts.append(frame)
    return pd.concat(parts, ignore_index=True)


def scenario_distributions(profiles: pd.DataFrame, groups: dict[str, str] | None = None) -> pd.DataFrame:
    """Per model × language × level (scenario, group) × scenario × attribute × value: count, n, share (Wilson
    95%), the share in the slice's other scenarios, the difference and the adjusted standardised residual."""
    if profiles.empty or "scenario_key" not in profiles.columns:
        return pd.DataFrame(columns=DIST_COLUMNS)
    groups = scenario_groups() if groups is None else groups
    frame = profiles.assign(scenario_key=profiles["scenario_key"].astype(object))
    frame["scenario_group"] = frame["scenario_key"].map(lambda k: groups.get(str(k)) if pd.notna(k) else None)
    dims = [d for d in load_seeds("en").dimensions if d in frame.columns]
    parts = []
    for level, where in (("scenario", "scenario_key"), ("group", "scenario_group")):
        for dim in dims:
            counts = _counts(frame, dim, where)
            if counts.empty:
                continue
            counts["attribute"], counts["level"] = dim, level
            parts.append(counts)
    if not parts:
        return pd.DataFrame(columns=DIST_COLUMNS)
    out = pd.concat(parts, ignore_index=True)
    key = [*SLICE, "level", "attribute"]
    out["n"] = out.groupby([*key, "scenario"])["count"].transform("sum")
    total = out.groupby([*key, "value"])["count"].transform("sum")  # the value's stories over every scenario
    grand = out.groupby(key)["count"].transform("sum")
    out["share"] = out["count"] / out["n"]
    low, high = wilson_intervals(out["count"].to_numpy(), out["n"].to_numpy())
    out["ci_low"], out["ci_high"] = low, high
    rest = grand - out["n"]
    out["share_elsewhere"] = ((total - out["count"]) / rest).where(rest > 0)
    out["difference"] = out["share"] - out["share_elsewhere"]
    expected = out["n"] * total / grand
    scale = np.sqrt(expected * (1 - out["n"] / grand) * (1 - total / grand))
    out["residual"] = ((out["count"] - expected) / scale).where(scale > 0)
    out["group"] = np.where(out["level"] == "group", out["scenario"],
                            out["scenario"].map(lambda k: groups.get(str(k))))
    return out[DIST_COLUMNS].sort_values([*key, "scenario", "value"], kind="stable").reset_index(drop=True)


def _units(profiles: pd.DataFrame, groups: dict[str, str]) -> pd.DataFrame:
    """The profiles with their unit and stratum: ``prompt`` (a story's prompt: its samples share it, and are
    copies under deterministic decoding) and ``stratum`` (what the prompt holds beside its scenario: the
    prompted attribute and value, and the template)."""
    frame = profiles.assign(scenario_key=profiles["scenario_key"].astype(object))
    frame["scenario_group"] = frame["scenario_key"].map(lambda k: groups.get(str(k)) if pd.notna(k) else None)
    story = frame["story_id"].astype(str) if "story_id" in frame.columns else pd.Series(
        [str(i) for i in range(len(frame))], index=frame.index)
    frame["prompt"] = frame["language"].astype(str) + "|" + story.str.rsplit(":", n=1).str[0]
    template = frame["template"].astype(str) if "template" in frame.columns else ""
    frame["stratum"] = frame["base_attribute"].astype(str) + "=" + frame["base_value"].astype(str) + "|" + template
    return frame


def _test(block: pd.DataFrame, where: str, dim: str, permutations: int, seed: int) -> dict[str, Any]:
    """The chi-square of one slice's scenario × value table, its p from the permutation of the scenarios
    among the prompts of each stratum (:mod:`biasatlas.stats.cluster_permutation`)."""
    from scipy.stats import chi2 as chi2_dist

    from biasatlas.stats.cluster_permutation import permutation_chi2

    prompt, prompts = pd.factorize(block["prompt"])
    value, values = pd.factorize(block[dim])
    counts = np.zeros((len(prompts), len(values)))
    np.add.at(counts, (prompt, value), 1.0)
    first = np.unique(prompt, return_index=True)[1]  # a prompt's first story: its scenario and stratum
    labels, names = pd.factorize(block[where].to_numpy()[first], sort=True)
    out: dict[str, Any] = {"n": int(counts.sum()), "prompts": len(counts), "scenarios": len(names),
                           "values": counts.shape[1], "permutations": 0}
    if min(len(names), counts.shape[1]) < 2:
        return {**out, "chi2": None, "dof": None, "p": None, "p_asymptotic": None, "min_expected": None,
                "share_expected_below_5": None, "cochran": None, "too_few": True,
                "too_few_note": "not tested: fewer than 2 scenarios or 2 values with stories"}
    strata, _ = pd.factorize(block["stratum"].to_numpy()[first])
    res = permutation_chi2(labels, counts, strata, permutations=permutations, seed=seed)
    expected = res.expected
    below5 = float((expected < 5).mean())
    few = res.movable == 0
    note = ("not tested: no prompted value has prompts in two scenarios, so no permutation moves a scenario"
            if few else None)
    return {**out, "chi2": res.statistic, "dof": res.dof, "p": res.p if not few else None,
            "p_asymptotic": float(chi2_dist.sf(res.statistic, res.dof)) if res.dof else None,
            "permutations": res.permutations, "min_expected": float(expected.min()),
            "share_expected_below_5": below5, "cochran": bool(expected.min() >= 1 and below5 <= 0.2),
            "too_few": few, "too_few_note": note}


def scenario_tests(profiles: pd.DataFrame, correction: str = DEFAULT_CORRECTION, alpha: float = 0.05,
                   groups: dict[str, str] | None = None, permutations: int = PERMUTATIONS,
                   seed: int = 0) -> pd.DataFrame:
    """Per model × language × level × attribute: the chi-square of the scenario × value table of the stories,
    its p from ``permutations`` seeded permutations of the scenarios among the prompts of each prompted value
    (the prompt is the unit), corrected (``correction``) across the attributes of each model × language × level."""
    if profiles.empty or "scenario_key" not in profiles.columns:
        return pd.DataFrame(columns=TEST_COLUMNS)
    frame = _units(profiles, scenario_groups() if groups is None else groups)
    dims = [d for d in load_seeds("en").dimensions if d in frame.columns]
    rows = []
    for dim in dims:
        read = frame[[*SLICE, "base_attribute", "prompt", "stratum", "scenario_key", "scenario_group", dim]]
        read = read[(read["base_attribute"].astype(str) != dim) & (read[dim].astype(str) != UNKNOWN)]
        read = read.assign(**{dim: read[dim].astype(str)})
        for level, where in (("scenario", "scenario_key"), ("group", "scenario_group")):
            sub = read[read[where].notna()]
            for keys, block in sub.groupby(SLICE, sort=True):
                rows.append({**dict(zip(SLICE, keys, strict=True)), "level": level, "attribute": dim,
                             **_test(block, where, dim, permutations, seed)})
    if not rows:
        return pd.DataFrame(columns=TEST_COLUMNS)
    out = pd.DataFrame(rows).sort_values([*SLICE, "level", "attribute"], kind="stable").reset_index(drop=True)
    out["p"] = pd.to_numeric(out["p"], errors="coerce")
    out["p_adj"] = np.nan
    for _, idx in out.groupby([*SLICE, "level"]).groups.items():
        out.loc[idx, "p_adj"] = adjust(out.loc[idx, "p"].to_numpy(dtype=float), correction)
    out["correction"], out["alpha"] = correction, alpha
    out["significant"] = (out["p_adj"] < alpha).fillna(False).astype(bool)
    return out[TEST_COLUMNS]


def departures(dist: pd.DataFrame, tests: pd.DataFrame, limit: int = DEPARTURES) -> pd.DataFrame:
    """The scenarios where an attribute departs most: per slice × attribute × scenario its value with the
    largest |residual|, the ``limit`` largest over all (scenario level), with the attribute's test."""
    cells = dist[(dist["level"] == "scenario") & dist["residual"].notna()]
    if cells.empty:
        return pd.DataFrame()
    cells = cells.assign(size=cells["residual"].abs())
    key = [*SLICE, "attribute", "scenario"]
    top = cells.sort_values("size", ascending=False, kind="stable").drop_duplicates(key).head(limit)
    tested = tests[tests["level"] == "scenario"][[*SLICE, "attribute", "p_adj", "significant", "too_few"]]
    out = top.merge(tested, on=[*SLICE, "attribute"], how="left")
    return out.drop(columns=["size", "level"]).reset_index(drop=True)


def _value(row: Any) -> dict[str, Any]:
    return {"value": row.value, "count": int(row.count), "share": float(row.share),
            "ci95": [float(row.ci_low), float(row.ci_high)]}


def compact(dist: pd.DataFrame, top: int = TOP_VALUES) -> list[dict[str, Any]]:
    """Per slice × level × attribute × scenario: n and its ``top`` most frequent values (none at zero), the
    remaining stories as ``other``."""
    out = []
    key = [*SLICE, "level", "attribute", "scenario"]
    seen = dist[dist["count"] > 0].sort_values([*key, "count", "value"], ascending=[True] * 5 + [False, True],
                                               kind="stable")
    for k, block in seen.groupby(key, sort=True):
        first = block.iloc[0]
        kept = block.head(top)
        out.append({**dict(zip(key, k, strict=True)), "group": first["group"], "n": int(first["n"]),
                    "values": [_value(r) for r in kept.itertuples(index=False)],
                    "other": int(first["n"] - kept["count"].sum())})
    return out


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    from biasatlas.probes.stories.analysis import json_records

    return json_records(frame)


def summarise_scenarios(profiles: pd.DataFrame, alpha: float = 0.05, correction: str = DEFAULT_CORRECTION,
                        groups: dict[str, str] | None = None) -> dict[str, Any]:
    """The summary block ``scenarios``: method, tests, compact distributions and the largest departures;
    empty when no profile has a scenario."""
    dist = scenario_distributions(profiles, groups)
    if dist.empty:
        return {}
    tests = scenario_tests(profiles, correction, alpha, groups)
    return {"method": method_text(alpha, correction), "too_few_rule": TOO_FEW_RULE, "test_is_ours": True,
            "tests": _records(tests), "distributions": compact(dist),
            "departures": _records(departures(dist, tests))}


def explorer_options(block: dict[str, Any], max_slices: int | None = None) -> list[tuple[str, pd.DataFrame]]:
    """The explorer's dropdown options from a summary block: per slice (every one, or the ``max_slices`` with
    most stories) and attribute, one frame of scenario × value shares (the top values, the rest as "other
    values"); the slice with most stories first."""
    rows = [e for e in block.get("distributions", []) if e["level"] == "scenario"]
    if not rows:
        return []
    sizes: dict[tuple[str, str], int] = {}
    for e in rows:
        sizes[(e["model"], e["language"])] = sizes.get((e["model"], e["language"]), 0) + e["n"]
    slices = sorted(sizes, key=lambda s: (-sizes[s], s))[:max_slices]
    options = []
    for model, language in slices:
        for attribute in sorted({e["attribute"] for e in rows if (e["model"], e["language"]) == (model, language)}):
            points = []
            for e in rows:
                if (e["model"], e["language"], e["attribute"]) != (model, language, attribute):
                    continue
                for v in e["values"]:
                    points.append({"scenario": e["scenario"], "value": v["value"], "share": v["share"],
                                   "ci_low": v["ci95"][0], "ci_high": v["ci95"][1], "n": e["n"], "count": v["count"]})
                if e["other"]:
                    points.append({"scenario": e["scenario"], "value": "other values", "share": e["other"] / e["n"],
                                   "ci_low": None, "ci_high": None, "n": e["n"], "count": e["other"]})
            label = attribute if len(slices) == 1 else f"{attribute} · {model} · {language}"
            options.append((label, pd.DataFrame(points)))
    return options
