"""Compare two answer exports of the same plan (e.g. CPU vs GPU): option probabilities and answer text by prompt id.

    biasatlas export --study A --to A_x --format csv; biasatlas export --study B --to B_x --format csv
    .venv/bin/python benchmarks/compare_answers.py A_x/answers_contact.csv B_x/answers_contact.csv

Prints JSON: rows matched on (prompt_id, sample_index), the largest and mean absolute difference of the
option probabilities, how often the most probable option agrees, and the share of identical answer texts
(docs/performance.md, "Local backend on a GPU").
"""

from __future__ import annotations

import json
import sys

import pandas as pd


def compare(first: str, second: str) -> dict[str, object]:
    a, b = pd.read_csv(first), pd.read_csv(second)
    m = a.merge(b, on=["prompt_id", "sample_index"], suffixes=("_a", "_b"))
    out: dict[str, object] = {"rows_a": len(a), "rows_b": len(b), "matched": len(m)}
    diffs, agree = [], 0
    for pa_text, pb_text in zip(m["option_probs_a"], m["option_probs_b"], strict=True):
        if not isinstance(pa_text, str) or not isinstance(pb_text, str):
            continue
        pa, pb = json.loads(pa_text), json.loads(pb_text)
        diffs.append(max(abs(pa[k] - pb[k]) for k in pa))
        agree += max(pa, key=pa.get) == max(pb, key=pb.get)
    if diffs:
        out.update(prob_rows=len(diffs), max_abs_prob_diff=max(diffs), mean_abs_prob_diff=sum(diffs) / len(diffs),
                   top_option_agree=agree / len(diffs))
    texts = m.dropna(subset=["answer_text_a", "answer_text_b"])
    out.update(text_rows=len(texts), text_identical=float((texts["answer_text_a"] == texts["answer_text_b"]).mean())
               if len(texts) else None)
    return out


if __name__ == "__main__":
    print(json.dumps(compare(sys.argv[1], sys.argv[2]), indent=1))
