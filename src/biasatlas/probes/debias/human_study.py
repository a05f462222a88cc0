"""The human fluency / relevance study of debiasing (paper 001, Table 5): a blinded sheet, its score.

Paper 001 had two annotators judge 100 WikiMovies answers before and after debiasing "pairwise based on fluency
and relevance" and reports, per criterion, how many pairs fell in each of four columns (the answer before, the
answer after, both good, both bad) and one Cohen's kappa (0.76). Here the pairs are the QA quality answers of a
comparison (the base model's and the adapter's answer to one question):

- :func:`draw` takes ``n`` pairs, seeded, and shows each pair's two answers as A and B in a random order; which
  is which (the key) is stored in the study, never in the sheet;
- each annotator rates each pair per criterion with one of ``A`` (only A is fluent / relevant, or A clearly
  better), ``B``, ``both`` (both good) or ``neither`` (both bad);
- :func:`score` de-blinds the ratings to the paper's columns (before, after, both good, both bad) and counts them
  per annotator and where the two agree, with Cohen's kappa between the annotators per criterion and over both
  (statsmodels ``cohens_kappa``, asymptotic 95% CI) on the de-blinded labels.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from biasatlas.records import stable_hash

if TYPE_CHECKING:
    import pandas as pd

    from biasatlas.store import Store

STUDY_PROBE = "debias.human_study"
CRITERIA = ("fluency", "relevance")
ANNOTATORS = ("1", "2")
RATING_COLUMNS = tuple(f"{c}_{a}" for a in ANNOTATORS for c in CRITERIA)
#: what an annotator writes (any case) -> the rating
RATINGS = {"a": "A", "b": "B", "both": "both", "neither": "neither"}
#: Table 5's columns, in its order
COLUMNS_OF_TABLE = ("before", "after", "both good", "both bad")
SHEET_COLUMNS = ["sheet_id", "pair_id", "question", "answer_a", "answer_b", *RATING_COLUMNS]
#: paper 001's Table 5 (100 WikiMovies items; its fluency row sums to 99 as printed)
PAPER = {"fluency": {"before": 39, "after": 35, "both good": 22, "both bad": 3},
         "relevance": {"before": 31, "after": 50, "both good": 17, "both bad": 2}, "kappa": 0.76, "n": 100}
GUIDE = """# Rating guide for {csv}

Each row is one question with two answers, A and B, given by two versions of a model (which is which is not
shown, and the order is random). Two annotators rate every row on their own, without talking about the rows:
annotator 1 fills `fluency_1` and `relevance_1`, annotator 2 `fluency_2` and `relevance_2` (each may fill a copy
of this file; give every copy to the score together).

- fluency: is the answer well-formed, grammatical, readable text?
- relevance: does the answer address the question that was asked?

For each criterion write one of:

- `A`: only answer A is fluent (relevant), or A is clearly the better one;
- `B`: only answer B is, or B is clearly better;
- `both`: both answers are good;
- `neither`: both answers are bad.

Keep `sheet_id` and `pair_id` as they are. Score with `biasatlas debias-study score --study STUDY {csv}`.
"""


class StudySheetError(ValueError):
    """A study sheet that cannot be drawn or scored: the message names each problem (file, line, pair)."""


# ---- the sheet ------------------------------------------------------------------------------------
def qa_comparison(store: Store, setting: str | None = None) -> dict[str, Any]:
    """The QA comparison (before/after runs) to draw from; ``setting`` chooses among several."""
    from biasatlas.probes.debias import evaluate, quality

    comps = [c for c in evaluate.comparisons(store, probe=quality.PROBE) if c["part"] == quality.TASK]
    if not comps:
        raise StudySheetError("the study holds no QA answers before and after debiasing (run `biasatlas debias` "
                              "with its QA check, the default)")
    chosen = [c for c in comps if setting is None or c["setting"] == setting]
    names = ", ".join(sorted({str(c["setting"]) for c in comps}))
    if not chosen:
        raise StudySheetError(f"no QA comparison of setting {setting!r} in the study; it holds: {names}")
    if len(chosen) > 1:
        which = ", ".join(f"{c['setting']} ({c['before_model']} -> {c['after_model']})" for c in chosen)
        raise StudySheetError(f"the study holds several QA comparisons ({which}): choose one with --setting"
                              if setting is None else f"setting {setting!r} has several QA comparisons ({which})")
    return chosen[0]


def qa_pairs(store: Store, comparison: dict[str, Any]) -> pd.DataFrame:
    """One row per QA question answered on both sides: prompt_id, item_id, question, before, after."""
    import pandas as pd

    from biasatlas.probes.debias import quality
    from biasatlas.readers.labels import question_text

    frame = store.frame(probe=quality.PROBE, run_ids=[comparison["before_run"], comparison["after_run"]])
    frame = frame[frame["task"] == quality.TASK] if "task" in frame else frame.iloc[0:0]
    paired = quality._sides(frame, comparison)
    if paired.empty:
        return pd.DataFrame(columns=["prompt_id", "item_id", "question", "before", "after"])
    from biasatlas.datafiles import DataFileError

    try:
        asked = {it["id"]: it["question"] for it in quality.load_qa()[0]}
    except (DataFileError, OSError):  # the shipped file unreadable: the stored prompt still holds the question
        asked = {}
    items = [str(i) for i in paired["item_id_before"]]
    return pd.DataFrame({
        "prompt_id": paired["prompt_id"].astype(str), "item_id": items,
        "question": [asked.get(i) or question_text(m) for i, m in zip(items, paired["messages_json_before"],
                                                                       strict=True)],
        "before": [str(t or "") for t in paired["text_before"]], "after": [str(t or "") for t in paired["text_after"]],
    }).sort_values("prompt_id", kind="stable").reset_index(drop=True)


def draw(pairs: pd.DataFrame, comparison: dict[str, Any], n: int, seed: int = 0) -> tuple[pd.DataFrame,
                                                                                        dict[str, Any]]:
    """``n`` pairs (all, if fewer) in a seeded random order, each one's answers as A/B in a seeded random order:
    the sheet (ratings empty) and its key (which side A is, per pair)."""
    import numpy as np
    import pandas as pd

    if pairs.empty:
        raise StudySheetError("no QA question was answered both before and after debiasing")
    rng = np.random.default_rng(seed)
    picked = rng.choice(len(pairs), size=min(n, len(pairs)), replace=False)
    a_is_before = rng.random(len(picked)) < 0.5
    chosen = pairs.iloc[picked].reset_index(drop=True)
    width = max(3, len(str(len(chosen))))
    pair_ids = [f"P{k + 1:0{width}d}" for k in range(len(chosen))]
    sheet_id = "S" + stable_hash([comparison["before_run"], comparison["after_run"], seed,
                                  list(chosen["prompt_id"]), [bool(x) for x in a_is_before]], length=10)
    sheet = pd.DataFrame({
        "sheet_id": sheet_id, "pair_id": pair_ids, "question": chosen["question"],
        "answer_a": np.where(a_is_before, chosen["before"], chosen["after"]),
        "answer_b": np.where(a_is_before, chosen["after"], chosen["before"]),
        **dict.fromkeys(RATING_COLUMNS, ""),
    })
    key = {"sheet_id": sheet_id, "setting": comparison["setting"], "before_run": comparison["before_run"],
           "after_run": comparison["after_run"], "before_model": comparison["before_model"],
           "after_model": comparison["after_model"], "seed": seed, "n": len(chosen),
           "pairs": {pid: {"prompt_id": p, "item_id": i, "a": "before" if b else "after"}
                     for pid, p, i, b in zip(pair_ids, chosen["prompt_id"], chosen["item_id"], a_is_before,
                                             strict=True)}}
    return sheet[SHEET_COLUMNS], key


def write_sheet(sheet: pd.DataFrame, path: Any) -> Any:
    """The sheet as CSV (UTF-8, spreadsheet-safe) and its guide beside it; the guide's path."""
    from biasatlas.table_files import to_csv_with_guide

    return to_csv_with_guide(sheet, path, GUIDE.format(csv=path.name))


# ---- what the study holds -------------------------------------------------------------------------
def _stored(store: Store, field: str) -> list[dict[str, Any]]:
    rows = store.conn.execute("SELECT totals_json FROM runs WHERE probe = ? AND status = 'done' ORDER BY run_id",
                              (STUDY_PROBE,)).fetchall()
    found = [(json.loads(r[0] or "{}").get("info") or {}).get(field) for r in rows]
    return [f for f in found if isinstance(f, dict)]


def _record(store: Store, config: dict[str, Any], info: dict[str, Any]) -> int:
    from biasatlas import __version__
    from biasatlas.runner import RunTotals

    run_id = store.start_run(STUDY_PROBE, "human", config, __version__, planned=0)
    store.finish_run(run_id, "done", RunTotals(run_id=run_id, status="done", info=info).as_dict())
    return run_id


def keys(store: Store) -> dict[str, dict[str, Any]]:
    """Every sheet key stored in the study, by sheet id."""
    return {k["sheet_id"]: k for k in _stored(store, "sheet")}


def store_key(store: Store, key: dict[str, Any]) -> bool:
    """Keep the sheet's key in the study (a run of ``debias.human_study``); False when it is there already
    (the same draw again: the same sheet id)."""
    if key["sheet_id"] in keys(store):
        return False
    _record(store, {"kind": "sheet", "sheet_id": key["sheet_id"]}, {"sheet": key})
    return True


def store_score(store: Store, result: dict[str, Any], sources: list[dict[str, str]]) -> int:
    """Record a score (its sheet files and their sha256); the run id."""
    return _record(store, {"kind": "score", "sheet_id": result["sheet_id"], "sheets": sources},
                   {"human_study": result})


def stored_scores(store: Store) -> list[dict[str, Any]]:
    """The latest score of each sheet, the sheet scored last at the end."""
    latest: dict[str, dict[str, Any]] = {}
    for result in _stored(store, "human_study"):
        latest.pop(result.get("sheet_id", ""), None)
        latest[result.get("sheet_id", "")] = result
    return list(latest.values())
