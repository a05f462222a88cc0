"""The leakage probe's two analysis designs, and the paper's Table 3.

- ``ours`` (default): complete cases, Benjamini-Hochberg over each model's cross-language terms, the
  monolingual control only where ``--mono`` names one;
- ``paper`` (Cao et al. 2024, as their code ran it): every missing (999) cell set to 0, so that the 12
  non-shared groups stay in every fit (section 4.2.4); a flow is a positive coefficient with an uncorrected
  p < 0.05; each target language's monolingual model (LM_tgt of Eq. 1) enters the fit, taken from the runs
  made with ``--mono-for LANG`` (or ``--mono``).

A study's design is the one its latest leakage run was asked with (``run leakage --design paper``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

import pandas as pd

from biasatlas.probes.leakage.data import LANGUAGES
from biasatlas.store import Store

Design = Literal["ours", "paper"]
DESIGNS: tuple[str, ...] = ("ours", "paper")
PAPER_ALPHA = 0.05
PAPER_CORRECTION = "none"  # the paper's Figure 2 keeps every flow with p < 0.05, uncorrected
PROBE = "leakage"


def _configs(store: Store) -> list[tuple[int, dict[str, Any]]]:
    runs = store.runs(PROBE)
    out: list[tuple[int, dict[str, Any]]] = []
    for run_id, raw in zip(runs["run_id"], runs["config_json"], strict=True):
        try:
            config = json.loads(raw or "{}")
        except json.JSONDecodeError:
            continue
        config = config if isinstance(config, dict) else {}
        # a probe's run record keeps its configuration under "config" (Probe.run_record)
        inner = config.get("config")
        out.append((int(run_id), {**config, **inner} if isinstance(inner, dict) else config))
    return out


def study_design(store: Store) -> Design:
    """The design of the study's latest leakage run that states one (``ours`` if none does)."""
    for _, config in reversed(_configs(store)):
        if config.get("design") in DESIGNS:
            return "paper" if config["design"] == "paper" else "ours"
    return "ours"


def study_controls(store: Store) -> dict[str, str]:
    """``{language: variant}`` of the models run as a language's monolingual control (``--mono-for``).

    The latest control run of a language wins; its variant is read from the answers that run planned."""
    from biasatlas.probes.leakage.scores import variant_label

    out: dict[str, str] = {}
    for run_id, config in _configs(store):
        lang = config.get("mono_for")
        if lang not in LANGUAGES:
            continue
        frame = store.frame(probe=PROBE, run_ids=[run_id])
        if frame.empty:
            continue
        variants = {variant_label(str(m), str(me), str(mo))
                    for m, me, mo in zip(frame["model"], frame["method"], frame["mode"], strict=True)}
        if len(variants) == 1:
            out[str(lang)] = variants.pop()
    return out


def table3(fits: Sequence[Any]) -> pd.DataFrame:
    """The paper's Table 3: the monolingual control's coefficient (beta of Eq. 1), one row per model, one
    column group per target language (EN, RU, ZH, HI): estimate, 95% CI, p, n cells."""
    rows: list[dict[str, Any]] = []
    for fit in fits:
        if not fit.mono:
            continue
        coef = next((c for c in fit.coefficients if c.term == "mono"), None)
        rows.append({"model": fit.variant, "target": fit.target.upper(),
                     "beta": None if coef is None else coef.estimate,
                     "ci_low": None if coef is None else coef.ci_low,
                     "ci_high": None if coef is None else coef.ci_high,
                     "p": None if coef is None else coef.p, "n_obs": fit.n_obs, "usable": fit.usable,
                     "why": fit.error or fit.dropped})
    return pd.DataFrame(rows)


def table3_wide(table: pd.DataFrame) -> pd.DataFrame:
    """Table 3 in the paper's layout: rows the models, columns ``Mono → EN/RU/ZH/HI``, cells
    ``beta [CI] (p)`` (``–`` where no fit with a control was made)."""
    if table.empty:
        return table
    cells: dict[str, dict[str, str]] = {}
    for row in table.to_dict(orient="records"):
        if row["beta"] is None or row["why"]:
            text = f"– ({row['why']})" if row["why"] else "–"
        else:
            text = f"{row['beta']:.2f} [{row['ci_low']:.2f}, {row['ci_high']:.2f}] (p {row['p']:.2g})"
        cells.setdefault(str(row["model"]), {})[f"Mono → {row['target']}"] = text
    columns = [f"Mono → {lang.upper()}" for lang in LANGUAGES]
    wide = pd.DataFrame.from_dict(cells, orient="index").reindex(columns=columns)
    wide = wide.astype(object).where(wide.notna(), "–")
    return wide.rename_axis("model").reset_index()
