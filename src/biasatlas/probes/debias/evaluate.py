"""Before/after evaluation of debiasing: the contact probe run for the base and the tuned model.

Both runs go through the normal runner into the study (probe ``contact``), each tagged in its run
config with ``debias: {setting, role, part, fingerprint, adapter}``; the analysis pairs the two
answers to the same prompt and reports biased % before and after with n and Wilson intervals,
and exact McNemar tests on the paired answers (paper 001, Table 4 and Figures 4-7).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from biasatlas.probes.contact import probe as contact
from biasatlas.records import GenerationSettings, Prompt
from biasatlas.runner import RunTotals, run_plan
from biasatlas.stats.multitest import adjust
from biasatlas.stats.paired import mcnemar_paired
from biasatlas.stats.proportions import wilson_interval

ROLES = ("before", "after")
# Table / figure of paper 001 -> grouping columns.
GROUPINGS: dict[str, list[str]] = {
    "overall": ["contact"],  # Figure 4
    "by_scale": ["scale", "contact"],  # Table 4
    "by_scenario": ["scenario", "contact"],  # Figure 5
    "by_principle": ["principle", "contact"],  # Figure 6
    "by_axis": ["axis", "contact"],  # Figure 7
}
FACTORS = ["language", "scale", "contact", "action", "scenario", "principle", "axis", "template_set", "set_id"]


def run_config(role: str, setting: str, part: str, fingerprint: str, model: str,
               adapter: str | None, language: str) -> dict[str, Any]:
    """The run config that marks a contact run as one side of a debiasing comparison."""
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}; valid: {', '.join(ROLES)}")
    return {
        "probe": contact.NAME,
        "model": model,
        "language": language,
        "debias": {"setting": setting, "role": role, "part": part, "fingerprint": fingerprint,
                   "adapter": adapter},
    }


def run_side(prompts: Sequence[Prompt], backend: Any, store: Any, settings: GenerationSettings,
             config: dict[str, Any], progress: bool = False, samples: int = 1) -> RunTotals:
    """Ask ``backend`` the evaluation prompts, into the study (cached answers are reused)."""
    return run_plan(prompts, backend, store, settings, samples=samples, config=config, progress=progress)


# ---- reading runs back ----------------------------------------------------------------------
def debias_runs(store: Any, probe: str = contact.NAME) -> pd.DataFrame:
    """Every run of ``probe`` that belongs to a debiasing comparison, with its tags as columns."""
    runs = store.runs(probe)
    rows = []
    for r in runs.itertuples(index=False):
        cfg = json.loads(r.config_json)
        tag = cfg.get("debias")
        if not tag:
            continue
        totals = json.loads(r.totals_json or "{}")
        rows.append({"run_id": int(r.run_id), "backend_id": r.backend_id, "status": r.status,
                     "mode": cfg.get("settings", {}).get("mode"), "model": cfg.get("model"),
                     "planned": totals.get("planned"), "seconds": totals.get("seconds"), **tag})
    return pd.DataFrame(rows)


def comparisons(store: Any, probe: str = contact.NAME) -> list[dict[str, Any]]:
    """The latest before and after run of each (base model, setting, part, split fingerprint, mode).

    The base model is part of the key: two models tuned on one split are two comparisons."""
    runs = debias_runs(store, probe)
    if runs.empty:
        return []
    out = []
    keys = ["model", "setting", "part", "fingerprint", "mode"]
    for key, group in runs.groupby(keys, sort=False, dropna=False):
        before = group[group["role"] == "before"]
        after = group[group["role"] == "after"]
        if before.empty or after.empty:
            continue
        b, a = before.iloc[-1], after.iloc[-1]
        out.append({
            "setting": key[1], "part": key[2], "fingerprint": key[3], "mode": key[4],
            "before_run": int(b["run_id"]), "after_run": int(a["run_id"]),
            "before_model": b["backend_id"], "after_model": a["backend_id"],
            "adapter": a.get("adapter"), "model_spec": b.get("model"),
        })
    return out


def paired_outcomes(store: Any, comparison: dict[str, Any]) -> pd.DataFrame:
    """One row per prompt (× sample): its factors and the decision before and after tuning."""
    frame = store.frame(probe=contact.NAME, run_ids=[comparison["before_run"], comparison["after_run"]])
    scored = contact.outcomes(frame)
    if scored.empty:
        return pd.DataFrame()
    keys = ["prompt_id", "mode", "sample_index"]
    cols = [*keys, *(f for f in FACTORS if f in scored.columns)]
    sides = {}
    for role in ROLES:
        side = scored[scored["model"] == comparison[f"{role}_model"]]
        sides[role] = side[[*cols, "decision", "biased", "p_unbiased"]].rename(
            columns={"decision": f"decision_{role}", "biased": f"biased_{role}", "p_unbiased": f"p_unbiased_{role}"}
        )
    return sides["before"].merge(sides["after"][[*keys, *(c for c in sides["after"].columns if c.endswith("_after"))]],
                                 on=keys, how="inner")


def evaluation_outcomes(store: Any) -> pd.DataFrame:
    """One row per answer of every comparison's contact runs: its setting, part and side (``role``)
    beside the contact probe's tidy columns (factors, decision, biased)."""
    frames = []
    for comp in comparisons(store):
        scored = contact.outcomes(store.frame(probe=contact.NAME,
                                              run_ids=[comp["before_run"], comp["after_run"]]))
        if scored.empty:
            continue
        role = scored["model"].map({comp["before_model"]: "before", comp["after_model"]: "after"})
        tags = {"setting": comp["setting"], "part": comp["part"], "fingerprint": comp["fingerprint"]}
        frames.append(scored.assign(**tags, role=role))
    if not frames:
        return pd.DataFrame(columns=["setting", "part", "fingerprint", "role", "prompt_id", "decision", "biased"])
    out = pd.concat(frames, ignore_index=True)
    first = ["setting", "part", "fingerprint", "role"]
    return out[[*first, *(c for c in out.columns if c not in first)]]


# ---- tables ---------------------------------------------------------------------------------
def _rate(biased: pd.Series) -> dict[str, float]:
    scored = biased.dropna()
    n, k = len(scored), int(scored.sum())
    low, high = wilson_interval(k, n)
    return {"n": n, "biased": k, "pct": 100.0 * k / n if n else float("nan"),
            "ci_low": 100.0 * low, "ci_high": 100.0 * high}


def before_after_table(paired: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Per group: biased % before and after (n, Wilson 95% CI) and an exact McNemar test.

    The percentages are over each side's scored answers; the test uses the prompts scored on both
    sides (``n_pairs``). The effect is the change in the proportion biased (after − before).
    """
    rows = []
    if paired.empty:
        return pd.DataFrame()
    for key, g in paired.groupby(by, sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        row: dict[str, Any] = dict(zip(by, key, strict=True))
        for role in ROLES:
            rate = _rate(g[f"biased_{role}"])
            row.update({f"{role}_{k}": v for k, v in rate.items()})
            row[f"{role}_none"] = int(g[f"biased_{role}"].isna().sum())
        test = mcnemar_paired(g["biased_before"], g["biased_after"])
        row.update({"n_pairs": test.n, "test": test.method, "statistic": test.statistic, "p": test.p,
                    "effect": test.effect, "effect_ci_low": test.ci_low, "effect_ci_high": test.ci_high})
        rows.append(row)
    return pd.DataFrame(rows)


def all_tables(paired: pd.DataFrame, correction: str = "bh") -> dict[str, pd.DataFrame]:
    """Every grouping of the paper, p-values adjusted together across all of them."""
    tables = {name: before_after_table(paired, by) for name, by in GROUPINGS.items()}
    flat = [(name, i) for name, t in tables.items() for i in range(len(t))]
    pvals = np.array([tables[name]["p"].iloc[i] for name, i in flat], dtype=float)
    adjusted = adjust(pvals, correction) if len(pvals) else pvals
    for name, t in tables.items():
        if not t.empty:
            t["p_adj"] = [adjusted[j] for j, (n, _) in enumerate(flat) if n == name]
            t["correction"] = correction
    return tables


def mean_probability_shift(paired: pd.DataFrame) -> dict[str, Any] | None:
    """Choice mode: mean P(unbiased answer) before and after, with a paired t-test and Cohen's d_z."""
    from biasatlas.stats.paired import paired_t

    if "p_unbiased_before" not in paired or paired["p_unbiased_before"].isna().all():
        return None
    before = pd.to_numeric(paired["p_unbiased_before"], errors="coerce").to_numpy(float)
    after = pd.to_numeric(paired["p_unbiased_after"], errors="coerce").to_numpy(float)
    res = paired_t(after, before)
    ok = ~(np.isnan(before) | np.isnan(after))
    return {"mean_before": float(before[ok].mean()), "mean_after": float(after[ok].mean()), **res.as_dict(),
            "effect_note": "difference: after − before; CI of the mean difference"}
