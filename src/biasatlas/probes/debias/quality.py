"""Does debiasing hurt answering? ROUGE-L on our QA set, and BBQ, before and after tuning.

QA (paper 001 uses 100 WikiMovies items; we ship ~100 general-knowledge questions of our own,
``data/debias/qa.yaml``): greedy answers of at most 32 tokens, ROUGE-L F1 (``rouge-score``, Porter
stemming) against the reference, compared on the same questions with a paired t-test (mean
difference with its 95% CI, Cohen's d_z) and a Wilcoxon signed-rank test.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from biasatlas.datafiles import DataFileError, load_yaml
from biasatlas.records import GenerationSettings, Message, Prompt, stable_hash
from biasatlas.stats.paired import mcnemar_paired, paired_t, wilcoxon_signed_rank

TASK = "qa"
PROBE = "debias"  # QA and BBQ prompts are stored under this probe name, meta.task says which
QA_SETTINGS = GenerationSettings(mode="generate", max_tokens=32, temperature=0.0)
BBQ_SETTINGS = GenerationSettings(mode="choice")


def qa_path() -> Path:
    return Path(str(resources.files("biasatlas") / "data" / "debias" / "qa.yaml"))


def load_qa(path: Path | None = None) -> tuple[list[dict[str, str]], str]:
    """The QA items (id, question, answer) and the answer instruction; checks the file's shape."""
    path = path or qa_path()
    data = load_yaml(path)
    if not isinstance(data, dict) or not data.get("provenance"):
        raise DataFileError(f"{path}: needs a 'provenance' block and 'items'")
    items = data.get("items") or []
    seen: set[str] = set()
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not all(str(item.get(k, "")).strip() for k in ("id", "question", "answer")):
            raise DataFileError(f"{path}: items[{i}] needs id, question and answer")
        if item["id"] in seen:
            raise DataFileError(f"{path}: duplicate id {item['id']!r}")
        seen.add(item["id"])
    return [{k: str(item[k]) for k in ("id", "question", "answer")} for item in items], str(data["instruction"])


def qa_prompts(limit: int | None = None) -> list[Prompt]:
    items, instruction = load_qa()
    return [
        Prompt(probe=PROBE, language="en",
               messages=(Message(role="user", content=f"{it['question']}\n{instruction}"),),
               meta={"task": TASK, "item_id": it["id"], "reference": it["answer"]})
        for it in items[:limit]
    ]


def fingerprint(prompts: list[Prompt]) -> str:
    return stable_hash(sorted(p.id for p in prompts), length=16)


def rouge_l(predictions: list[str], references: list[str]) -> list[float]:
    """ROUGE-L F1 per pair (rouge-score, Porter stemmer)."""
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    return [float(scorer.score(ref, pred or "")["rougeL"].fmeasure) for pred, ref in zip(predictions, references,
                                                                                          strict=True)]


def _sides(frame: pd.DataFrame, comparison: dict[str, Any]) -> pd.DataFrame:
    """Rows of the two models, paired by prompt: one column per side for text / probabilities."""
    keys = ["prompt_id", "mode", "sample_index"]
    answered = frame[frame["status"] == "answered"]
    parts = []
    for role in ("before", "after"):
        side = answered[answered["model"] == comparison[f"{role}_model"]].set_index(keys)
        parts.append(side.add_suffix(f"_{role}"))
    return parts[0].join(parts[1], how="inner").reset_index()


def qa_summary(store: Any, comparison: dict[str, Any]) -> dict[str, Any]:
    """ROUGE-L before and after on the same questions, with paired tests."""
    frame = store.frame(probe=PROBE, run_ids=[comparison["before_run"], comparison["after_run"]])
    frame = frame[frame["task"] == TASK] if "task" in frame else frame.iloc[0:0]
    paired = _sides(frame, comparison)
    if paired.empty:
        return {"n": 0}
    refs = list(paired["reference_before"])
    before = np.array(rouge_l([str(t or "") for t in paired["text_before"]], refs))
    after = np.array(rouge_l([str(t or "") for t in paired["text_after"]], refs))
    t = paired_t(after, before)
    w = wilcoxon_signed_rank(after, before)
    examples = [
        {"item": i, "reference": r, "before": b, "after": a}
        for i, r, b, a in zip(paired["item_id_before"], refs, paired["text_before"], paired["text_after"],
                              strict=True)
    ][:10]
    return {
        "n": len(paired),
        "rouge_l_before": float(before.mean()),
        "rouge_l_after": float(after.mean()),
        "difference": t.as_dict(),
        "wilcoxon": w.as_dict(),
        "examples": examples,
    }


def bbq_summary(store: Any, comparison: dict[str, Any]) -> dict[str, Any]:
    """BBQ accuracy and bias scores before and after, with McNemar tests on correctness."""
    from biasatlas.probes.debias import bbq as bbq

    frame = store.frame(probe=PROBE, run_ids=[comparison["before_run"], comparison["after_run"]])
    frame = frame[frame["task"] == bbq.TASK] if "task" in frame else frame.iloc[0:0]
    scored = bbq.score_rows(frame)
    if scored.empty:
        return {"n": 0}
    table = bbq.scores(scored)
    role = {comparison["before_model"]: "before", comparison["after_model"]: "after"}
    table.insert(0, "side", table["model"].map(role))
    tests = []
    for cond in bbq.CONDITIONS:
        sub = scored[scored["context_condition"] == cond]
        wide = sub.pivot_table(index=["prompt_id", "sample_index"], columns="model", values="correct", aggfunc="first")
        if comparison["before_model"] in wide and comparison["after_model"] in wide:
            # "biased" in mcnemar_paired's wording = wrong here: incorrect before vs after
            res = mcnemar_paired(1 - wide[comparison["before_model"]], 1 - wide[comparison["after_model"]])
            tests.append({"condition": cond, "quantity": "error rate", **res.as_dict()})
    return {"n": int(scored["prompt_id"].nunique()), "scores": table.to_dict(orient="records"), "tests": tests}
