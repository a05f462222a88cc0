"""The association tables of the section "As in Le Jeune et al., 2025": the paper's explorer tables of the global
and per-language aggregations (each association with how many models or languages hold it, and its harm
label) and the Jaccard similarity of the languages' association sets."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd


def association_key(record: Mapping[str, Any]) -> str:
    """The key the harm block uses for an association record (``A=a -> B=b``)."""
    return (f"{record['base_attribute']}={record['base_value']} -> "
            f"{record['compared_attribute']}={record['compared_value']}")


def harm_labels(summary: Mapping[str, Any]) -> dict[str, bool]:
    """harmful (True) / benign per association key, as the summary's labels (humans where any, else judges)."""
    rows = summary.get("harm", {}).get("labels", {}).get("associations", [])
    return {str(r["association"]): bool(r["harmful"]) for r in rows}


def _label_rows(summary: Mapping[str, Any]) -> dict[str, tuple[str, str]]:
    """(harm, rated by) per association key: harmful / benign, and humans / LLM judges."""
    rows = summary.get("harm", {}).get("labels", {}).get("associations", [])
    return {str(r["association"]): ("harmful" if r["harmful"] else "benign",
                                    "humans" if r.get("rated_by") == "human" else "LLM judges") for r in rows}


def _phrase(record: Mapping[str, Any]) -> str:
    """An association as the paper writes it: ``A: a → B: b``."""
    return (f"{record['base_attribute']}: {record['base_value']} → "
            f"{record['compared_attribute']}: {record['compared_value']}")


def _explorer(records: Sequence[Mapping[str, Any]], summary: Mapping[str, Any], by: str, label: str) -> pd.DataFrame:
    """One row per association (a repeated one, e.g. of another template, once, its ``by`` lists merged): the
    paper's explorer columns, the most widely held first."""
    labels = _label_rows(summary)
    merged: dict[str, dict[str, Any]] = {}
    for r in records:
        key = association_key(r)
        row = merged.setdefault(key, {"association": _phrase(r), "base attribute": r["base_attribute"],
                                      "compared attribute": r["compared_attribute"], "names": set(),
                                      "harm": labels.get(key, ("unrated", ""))[0],
                                      "rated by": labels.get(key, ("unrated", ""))[1]})
        row["names"] |= {str(v) for v in (r.get(by) or [])}
    rows = [{**{k: v for k, v in row.items() if k != "names"}, label: len(row["names"]),
             f"{label[:-1]} names": ", ".join(sorted(row["names"]))} for row in merged.values()]
    columns = ["association", "base attribute", "compared attribute", label, f"{label[:-1]} names", "harm", "rated by"]
    frame = pd.DataFrame(rows, columns=columns)
    return frame.sort_values([label, "association"], ascending=[False, True], kind="stable").reset_index(drop=True)


def global_table(summary: Mapping[str, Any]) -> pd.DataFrame:
    """The paper's table of every significant association of the global aggregation: the association, its
    attributes, how many models (and which) show it, and its harm label (humans where rated, else judges)."""
    return _explorer(summary.get("associations") or [], summary, "models", "models")


def per_language_table(summary: Mapping[str, Any]) -> pd.DataFrame:
    """The paper's table of every significant association of the per-language aggregation: the association,
    its attributes, its language reach (how many languages, and which) and its harm label."""
    records = (summary.get("per_language") or {}).get("associations") or []
    return _explorer(records, summary, "languages", "languages")


def jaccard_table(summary: Mapping[str, Any]) -> pd.DataFrame:
    """Jaccard similarity |X ∩ Y| / |X ∪ Y| of the per-language association sets, languages × languages: the
    summary's matrix where it has one, else from the per-language associations (empty below two languages)."""
    from biasatlas.stats.associations import jaccard_matrix

    per_language = summary.get("per_language") or {}
    given = per_language.get("jaccard")
    if given:
        frame = pd.DataFrame(given)
        return frame.reindex(index=list(frame.columns)).astype(float) if len(frame) >= 2 else pd.DataFrame()
    sets: dict[str, set[tuple[str, ...]]] = {}
    for r in per_language.get("associations") or []:
        for lang in r.get("languages") or []:
            sets.setdefault(str(lang), set()).add((association_key(r),))
    return jaccard_matrix(sets) if len(sets) >= 2 else pd.DataFrame()
