"""The debiasing summary: before/after tables and tests per setting, and the quality checks.

Not a probe that asks its own questions: it reads the contact runs that ``biasatlas debias``
tagged as the base ("before") and tuned ("after") side of a setting, pairs their answers to the
same prompts, and adds the QA (ROUGE-L) and BBQ quality checks when they were run, BBQ's pairwise
bootstrap between the models (Table 6) and the scored human fluency / relevance study (Table 5).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from biasatlas.probes.contact.analysis import records
from biasatlas.probes.debias import evaluate as evaluate
from biasatlas.probes.debias import quality as quality
from biasatlas.stats.multitest import METHODS as CORRECTIONS

DEFAULT_ALPHA = 0.05
DEFAULT_CORRECTION = "bh"  # Benjamini-Hochberg across every test of a setting


def analysis_options(alpha: float | None, correction: str | None) -> tuple[float, str]:
    """The significance level and the correction of the before/after tests, defaults filled in and checked."""
    alpha = DEFAULT_ALPHA if alpha is None else alpha
    correction = DEFAULT_CORRECTION if correction is None else correction
    if not 0 < alpha < 1:
        raise ValueError(f"alpha {alpha}: must be between 0 and 1 (exclusive)")
    if correction not in CORRECTIONS:
        raise ValueError(f"correction {correction!r}: valid: {', '.join(CORRECTIONS)}")
    return alpha, correction


def _training_info(comparison: dict[str, Any], study_dir: Path) -> dict[str, Any] | None:
    """The adapter's training manifest (settings, loss, throughput), when the directory is still there."""
    candidates = [Path(comparison["adapter"])] if comparison.get("adapter") else []
    candidates.append(study_dir / "adapters" / comparison["setting"])
    for path in candidates:
        manifest = path / "training_config.json"
        if manifest.exists():
            data = json.loads(manifest.read_text(encoding="utf-8"))
            return {k: data.get(k) for k in ("status", "model_spec", "base_model", "config", "examples", "result")}
    return None


def summarise(store: Any, alpha: float | None = None, correction: str | None = None) -> dict[str, Any]:
    """Before/after per setting × split part × cell (scale, scenario, principle, axis × contact).

    ``correction`` (default bh) adjusts the McNemar p-values of a comparison together; ``alpha``
    (default 0.05) only marks which adjusted p-values are significant when printed. The intervals
    are 95% whatever ``alpha`` is. Empty when the study holds no comparison.
    """
    alpha, correction = analysis_options(alpha, correction)
    out: dict[str, Any] = {"contact": [], "quality": []}
    for comp in evaluate.comparisons(store):
        paired = evaluate.paired_outcomes(store, comp)
        tables = evaluate.all_tables(paired, correction) if not paired.empty else {}
        out["contact"].append({
            **comp,
            "prompts": len(paired),
            "tables": {name: records(t) for name, t in tables.items()},
            "probability_shift": evaluate.mean_probability_shift(paired) if not paired.empty else None,
            "training": _training_info(comp, Path(store.dir)),
        })
    for comp in evaluate.comparisons(store, probe=quality.PROBE):
        if comp["part"] == quality.TASK:
            out["quality"].append({**comp, "task": "qa", **quality.qa_summary(store, comp)})
        elif comp["part"] == "bbq":
            out["quality"].append({**comp, "task": "bbq", **quality.bbq_summary(store, comp)})
    from biasatlas.probes.debias import bbq_bootstrap, human_study

    pairwise = bbq_bootstrap.study_pairwise(store)
    if pairwise is not None:  # Table 6's significance: every two BBQ models on their common items
        out["bbq_pairwise"] = pairwise
    scored = human_study.stored_scores(store)
    if scored:  # Table 5: the human fluency / relevance study, the latest score of each sheet
        out["human_study"] = scored
    if not out["contact"] and not out["quality"] and not scored:
        return {}
    out["analysis"] = {"alpha": alpha, "correction": correction}
    return out


def _pct(row: dict[str, Any], side: str) -> str:
    pct = row.get(f"{side}_pct")
    if pct is None or pd.isna(pct):
        return "–"
    return f"{pct:.1f} [{row[f'{side}_ci_low']:.1f}, {row[f'{side}_ci_high']:.1f}]"


def _p(value: Any) -> str:
    from biasatlas.report.cells import format_p

    return format_p(value)


def _bound(value: Any) -> str:
    """An interval bound (a difference, signed), or '–' where none was computed."""
    return "–" if value is None or pd.isna(value) else f"{float(value):+.3f}"


def _p_adj(value: Any, alpha: float) -> str:
    return _p(value) + ("" if value is None or pd.isna(value) or value >= alpha else " *")


def print_summary(summary: dict[str, Any], console: Any) -> None:
    """Per setting: biased % before and after by scale and contact (Table 4 layout), with tests."""
    from rich.table import Table

    if not summary.get("contact"):
        console.print("No debiasing comparison yet (run `biasatlas debias`).")
    options = summary.get("analysis", {})
    alpha = options.get("alpha", DEFAULT_ALPHA)
    correction = options.get("correction", DEFAULT_CORRECTION)
    for comp in summary.get("contact", []):
        train = comp.get("training") or {}
        result = train.get("result") or {}
        console.print(
            f"[bold]{comp['setting']}[/] on {comp['part']} ({comp['prompts']} paired prompts, {comp['mode']}): "
            f"{comp['before_model']} -> {comp['after_model']}"
            + (f"; trained {result.get('examples')} examples, {result.get('examples_per_s')} ex/s, "
               f"loss {result.get('train_loss'):.4f}" if result.get("train_loss") is not None else "")
        )
        for name in ("overall", "by_scale"):
            rows = comp["tables"].get(name, [])
            if not rows:
                continue
            by = evaluate.GROUPINGS[name]
            t = Table(title=f"{comp['setting']}: % biased before / after [Wilson 95% CI] — {name}")
            for col in (*by, "n", "before %", "after %", "Δ [95% CI]", "McNemar p", "p adj"):
                t.add_column(col, justify="left" if col in by else "right")
            for r in rows:
                delta = "–" if r["effect"] is None else (
                    f"{100 * r['effect']:+.1f} [{100 * r['effect_ci_low']:+.1f}, {100 * r['effect_ci_high']:+.1f}]")
                t.add_row(*(str(r[c]) for c in by), str(r["n_pairs"]), _pct(r, "before"), _pct(r, "after"),
                          delta, _p(r["p"]), _p_adj(r.get("p_adj"), alpha))
            console.print(t)
        console.print(f"p adj: {correction} over every test of the comparison; * p adj < {alpha:g}")
    for q in summary.get("quality", []):
        if q["task"] == "qa" and q.get("n"):
            d = q["difference"]
            console.print(
                f"QA ({q['setting']}): ROUGE-L {q['rouge_l_before']:.3f} -> {q['rouge_l_after']:.3f} "
                f"(n={q['n']}, mean difference 95% CI [{_bound(d['ci_low'])}, {_bound(d['ci_high'])}], "
                f"paired t p={_p(d['p'])}, Wilcoxon p={_p(q['wilcoxon']['p'])})"
            )
        elif q["task"] == "bbq" and q.get("n"):
            for row in q["scores"]:
                if row.get("category") == "all":
                    console.print(
                        f"BBQ ({q['setting']}, {row['side']}): accuracy ambiguous {row['ambig_acc']:.3f} "
                        f"(n={row['ambig_n']}), disambiguated {row['disambig_acc']:.3f} (n={row['disambig_n']}); "
                        f"bias score ambiguous {row['bias_ambig']:.3f}, disambiguated {row['bias_disambig']:.3f}"
                    )
    _print_pairwise(summary.get("bbq_pairwise"), console)
    for result in summary.get("human_study") or []:
        from biasatlas.probes.debias.human_study import COLUMNS_OF_TABLE
        from biasatlas.probes.debias.human_study_score import kappa_text

        counts = "; ".join(  # Table 5's column order (a stored score's keys come back sorted)
            f"{c}: " + ", ".join(f"{k} {part['agreed'].get(k, 0)}" for k in COLUMNS_OF_TABLE)
            + f", {part['disagreed']} disagree"
            for c, part in result["criteria"].items())
        console.print(f"Human study ({result['setting']}, {result['n']} pairs, both annotators agree on) {counts}; "
                      f"{kappa_text(result['kappa_pooled'])} (both criteria)", markup=False)


def _print_pairwise(block: dict[str, Any] | None, console: Any) -> None:
    """BBQ between every two models (Table 6's significance): difference [95% CI], p, Holm-adjusted p."""
    from rich.table import Table

    if not block or not block.get("rows"):
        return
    t = Table(title=f"BBQ between models: paired bootstrap of items ({block['resamples']} resamples, seed "
                    f"{block['seed']}), second − first; p adj: {block['correction']} over the pairs of a statistic")
    for col in ("first", "second", "statistic", "n", "value 1", "value 2", "difference [95% CI]", "p", "p adj"):
        t.add_column(col, justify="left" if col in ("first", "second", "statistic") else "right")
    for r in block["rows"]:
        value = "–" if r["difference"] is None else f"{r['difference']:+.3f}" + (
            "" if r["ci_low"] is None else f" [{r['ci_low']:+.3f}, {r['ci_high']:+.3f}]")
        shown = ["–" if v is None else f"{v:.3f}" for v in (r["first_value"], r["second_value"])]
        t.add_row(r["first"], r["second"], r["statistic"], str(r["n"]), *shown, value, _p(r["p"]),
                  _p(r.get("p_adj")))
    console.print(t)
