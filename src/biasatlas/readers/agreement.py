"""Rules-vs-judge agreement on the answers both read, and the list of their disagreements.

"Both read" means: an answer of free text that the judge labelled and the rules read too (every such answer:
the rules always give a label on the closed set, an option or rating, ``refusal`` or ``unclear``). Under
``--reader both`` the judge reads what the rules found unreadable or read with low confidence, and a seeded
check sample of about one in ten of the rest (``judge.in_check_sample``), so the agreement mixes the two (the
answers a judge was needed for weigh more than in the study); ``--reader judge`` measures it on every answer.
Cohen's kappa and its asymptotic 95% interval come from statsmodels (``cohens_kappa``).
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

from biasatlas.readers.judge import reading

if TYPE_CHECKING:
    import pandas as pd

    from biasatlas.store import Store


def both_read(outcomes: pd.DataFrame) -> pd.DataFrame:
    """The rows of a probe's outcomes that both the rules and the judge labelled."""
    if outcomes.empty or "judge_label" not in outcomes.columns:
        return outcomes.iloc[0:0]
    return outcomes[outcomes["judge_label"].notna() & outcomes["rules_label"].notna()]


def kappa(first: list[str], second: list[str]) -> dict[str, Any]:
    """Cohen's kappa of two readers' labels with its 95% CI (statsmodels), and the raw agreement."""
    import numpy as np
    from statsmodels.stats.inter_rater import cohens_kappa

    n = len(first)
    agree = sum(a == b for a, b in zip(first, second, strict=True))
    out: dict[str, Any] = {"n": n, "agree": agree, "agreement_pct": round(100 * agree / n, 1) if n else None,
                           "kappa": None, "kappa_ci": None}
    categories = sorted(set(first) | set(second))
    if n < 2 or len(set(first)) < 2 or len(set(second)) < 2:
        # a reader that gave one label only: kappa is 0/0, or 0 whatever the other reader did (not a measure)
        out["note"] = "kappa undefined: a reader gave one label only"
        return out
    index = {c: i for i, c in enumerate(categories)}
    table = np.zeros((len(categories), len(categories)))
    for a, b in zip(first, second, strict=True):
        table[index[a], index[b]] += 1
    with np.errstate(all="ignore"), warnings.catch_warnings():  # its z-test divides 0/0 at kappa 0: not used here
        warnings.simplefilter("ignore", RuntimeWarning)
        result = cohens_kappa(table)
    if np.isfinite(result.kappa):
        out["kappa"] = round(float(result.kappa), 3)
        out["kappa_ci"] = [round(float(result.kappa_low), 3), round(float(result.kappa_upp), 3)]
    return out


def agreement(store: Store, probe: str, outcomes: pd.DataFrame) -> dict[str, Any] | None:
    """The reading of ``probe`` (who read how many answers) and, with a judge, rules-vs-judge agreement."""
    if outcomes.empty or "reader" not in outcomes.columns:
        return None
    reader, judge = reading(store, probe)
    counts = {str(k): int(v) for k, v in outcomes["reader"].value_counts().items()}
    out: dict[str, Any] = {"reader": reader, "judge": judge, "labels_by": counts}
    if reader == "rules":
        return out
    pairs = both_read(outcomes)
    result = kappa([str(v) for v in pairs["rules_label"]], [str(v) for v in pairs["judge_label"]])
    out["agreement"] = {**result, "statistic": "Cohen's kappa, asymptotic 95% CI (statsmodels cohens_kappa)",
                        "on": "answers both the rules and the judge read"}
    return out


def disagreements(outcomes: pd.DataFrame) -> pd.DataFrame:
    """The answers both read where the rules and the judge differ: model, language, prompt, answer, both labels,
    and the label used (the ``reader`` column says whose); in the shape of the report's answers table."""
    import pandas as pd

    from biasatlas.readers.labels import question_text

    pairs = both_read(outcomes)
    pairs = pairs[pairs["rules_label"].astype(str) != pairs["judge_label"].astype(str)]
    columns = ["model", "language", "prompt", "answer", "rules", "judge", "reader"]
    if pairs.empty:
        return pd.DataFrame(columns=columns)
    return pd.DataFrame({
        "model": pairs["model"].astype(str),
        "language": pairs["language"].astype(str),
        "prompt": pairs["messages_json"].map(question_text),
        "answer": pairs["text"].astype(str),
        "rules": pairs["rules_label"].astype(str),
        "judge": pairs["judge_label"].astype(str),
        "reader": pairs["reader"].astype(str),
    }).reset_index(drop=True)


def reading_line(probe_title: str, summary: dict[str, Any] | None) -> str | None:
    """One line for the summary and the report: who read the answers and, with a judge, the agreement."""
    if not summary:
        return None
    by = ", ".join(f"{k} {v}" for k, v in sorted(summary["labels_by"].items()))
    line = f"{probe_title}: read by {summary['reader']}" + (f" (judge {summary['judge']})" if summary["judge"] else "")
    line += f"; labels by {by}" if by else ""
    agreement_ = summary.get("agreement")
    if agreement_ is not None:
        if not agreement_["n"]:
            line += "; no answer was read by both the rules and the judge"
        else:
            line += (f"; rules vs judge on {agreement_['n']} answers both read: "
                     f"{agreement_['agreement_pct']}% agree")
            if agreement_["kappa"] is not None:
                low, high = agreement_["kappa_ci"]
                line += f", Cohen's kappa {agreement_['kappa']:.2f} [95% CI {low:.2f}, {high:.2f}]"
            else:
                line += ", Cohen's kappa undefined (a reader gave one label only)"
    return line
