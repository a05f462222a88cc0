"""Social Contact Debiasing (paper 001): before/after tables, tests and the report section.

Not a probe that asks its own questions: it reads the contact runs that ``biasatlas debias``
tagged as the base ("before") and tuned ("after") side of a setting, pairs their answers to the
same prompts, and adds the QA (ROUGE-L) and BBQ quality checks when they were run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from biasatlas.probes.debias import evaluate as evaluate
from biasatlas.probes.debias import quality as quality
from biasatlas.probes.contact.analysis import records

NAME = "debias"
TITLE = "Social Contact Debiasing (before / after LoRA tuning)"

METHODS = (
    "Social Contact Debiasing (Raj et al. 2024, paper 001): the model is instruction-tuned with LoRA (peft) on "
    "contact prompts paired with their unbiased answer (Table 2: the affirmative option for a positive action, "
    "the negative option for a negative action, under every contact framing and scale), in the model's chat "
    "format, with the loss on the answer tokens only. Settings follow the paper: 1 mixed, 2 cross-dataset "
    "(template set a -> b), 3a/3b/3c cross-scale, 4 cross-scenario, 5 cross-principle, 6 cross-dimension; "
    "splits are drawn in whole prompt sets, seeded, balanced over scales, and no evaluated prompt shares a "
    "prompt set or a prompt text with a training prompt. The same evaluation prompts are asked of the base "
    "model and of the base model with the adapter (merged); biased % per side carries n and a Wilson 95% "
    "interval; the change is tested on the paired answers with an exact McNemar test (effect: change in the "
    "proportion biased, after - before, with a Wald 95% CI); p-values are adjusted with Benjamini-Hochberg "
    "across every test of a setting. Answering quality: ROUGE-L F1 on our own 105-question QA set (paired "
    "t-test with CI, Wilcoxon signed-rank), and BBQ accuracy and bias scores when BBQ files are given."
)


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


def summarise(store: Any, correction: str = "bh") -> dict[str, Any]:
    """Before/after per setting × split part × cell (scale, scenario, principle, axis × contact)."""
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
    return out if out["contact"] or out["quality"] else {}


def _pct(row: dict[str, Any], side: str) -> str:
    pct = row.get(f"{side}_pct")
    if pct is None or pd.isna(pct):
        return "–"
    return f"{pct:.1f} [{row[f'{side}_ci_low']:.1f}, {row[f'{side}_ci_high']:.1f}]"


def _p(value: Any) -> str:
    return "–" if value is None or pd.isna(value) else f"{value:.3g}"


def print_summary(summary: dict[str, Any], console: Any) -> None:
    """Per setting: biased % before and after by scale and contact (Table 4 layout), with tests."""
    from rich.table import Table

    if not summary.get("contact"):
        console.print("No debiasing comparison yet (run `biasatlas debias`).")
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
                          delta, _p(r["p"]), _p(r.get("p_adj")))
            console.print(t)
    for q in summary.get("quality", []):
        if q["task"] == "qa" and q.get("n"):
            d = q["difference"]
            console.print(
                f"QA ({q['setting']}): ROUGE-L {q['rouge_l_before']:.3f} -> {q['rouge_l_after']:.3f} "
                f"(n={q['n']}, mean difference 95% CI [{_p(d['ci_low'])}, {_p(d['ci_high'])}], "
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


def report_sections(store: Any) -> list[Any]:
    """One section: a before/after chart per setting (Figure 4), the paper's tables, quality checks."""
    from biasatlas.probes.debias import report as debias_report

    return debias_report.sections(summarise(store))
