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


# ---- what --plan-only says ---------------------------------------------------------------------------------

PAPER = "Cao et al., 2024 (cross-language stereotype leakage)"
#: what the paper design sets when the study is analysed (summary, `leakage fit`, report)
PAPER_SETS = (
    f"the paper: {PAPER}",
    "every missing (999) cell counts as 0, as the paper's code read the tables, so all 30 groups, the 12 "
    "non-shared ones included, stay in each fit (section 4.2.4)",
    f"a flow is a positive cross-language coefficient with an uncorrected p < {PAPER_ALPHA:g} (Figure 2's criterion)",
    "each target language's monolingual control (LM_tgt of Eq. 1) is the model run with --mono-for LANG, and "
    "Table 3 gives its coefficient per model and target language",
)
#: what it cannot match (docs/methods.md, "What the paper design cannot match")
CANNOT_MATCH = (
    "the controls are whichever models are run with --mono-for; the paper's were bert-base-cased, "
    "bert-base-chinese, rubert-tiny2 and indic-transformers-hi-bert, scored with the sensitivity test (SeT), "
    "whereas a masked model here is scored with PLL-ILPS",
    "zero-filling is the paper code's rule, not a model of the missing ratings: a 0 stands for 'not rated', so a "
    "non-shared group's slope mixes rated and unrated cells",
    "a target language without a --mono-for control is fitted without the LM_tgt term (the summary notes it)",
)
#: our default design, said where the user sees the plan
OURS_NOTE = ("Differs from Cao et al.: complete cases (the non-shared groups a language did not rate drop out of "
             "its fits), Benjamini-Hochberg over each model's cross-language tests (the paper: uncorrected p < "
             "0.05), and the monolingual control only where --mono names one; --design paper for the paper's fit.")


def plan_block(config: Any) -> dict[str, Any]:
    """The ``design`` entry of `run leakage --design paper --plan-only`: what the design sets, what it cannot
    match, and the language this run is the monolingual control of (``None``: a model that is fitted)."""
    return {"name": "paper", "paper": PAPER, "set": list(PAPER_SETS), "cannot_match": list(CANNOT_MATCH),
            "control": config.mono_for}
