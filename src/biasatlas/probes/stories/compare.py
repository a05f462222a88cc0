"""A model's associations against the published StereoTales human-study list (``questions.json``).

The published list (1,580 entries, all with lift >= 2, no licence: the user supplies it) holds
associations A=a -> B=b with the mean percentage and lift across the paper's models. Its attribute
names and values are mapped to the bundled keys (:class:`~.published.ValueMapper`); an entry that
does not map is listed with the reason, never dropped silently. For every model of the study and
every mapped entry, :func:`compare` gives the model's own fraction and lift of that cell (from the
same pruned contingency table as the analysis) and whether the association holds for the model
(the two-step procedure); the associations the model holds that the list lacks are "new".
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from biasatlas.probes.stories.published import ValueMapper
from biasatlas.probes.stories.seeds import UNKNOWN, load_seeds
from biasatlas.stats.associations import ASSOCIATION_KEY, AssociationConfig, contingency, mine_associations

Key = tuple[str, str, str, str]


@dataclass(frozen=True)
class PublishedEntry:
    """One published association; ``key`` in the bundled keys, or None with ``why``."""

    question_id: str
    base: tuple[str, str]
    compared: tuple[str, str]
    fraction: float | None
    lift: float | None
    models: tuple[str, ...]
    key: Key | None
    why: str | None = None


def read_published(path: str | Path) -> tuple[list[PublishedEntry], dict[str, int]]:
    """The published list, mapped; entries without both attributes are counted in the problems.

    Raises ValueError (naming the file) when it is not a JSON list.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a readable JSON file ({exc})") from None
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of associations (questions.json)")
    mapper = ValueMapper()
    entries: list[PublishedEntry] = []
    problems: Counter[str] = Counter()
    for item in data:
        base = item.get("base_attribute") if isinstance(item, dict) else None
        comp = item.get("compared_attribute") if isinstance(item, dict) else None
        if not isinstance(base, dict) or not isinstance(comp, dict):
            problems["entries without base_attribute/compared_attribute"] += 1
            continue
        pairs = ((str(base.get("name")), str(base.get("value"))), (str(comp.get("name")), str(comp.get("value"))))
        key: list[str] = []
        why = None
        for name, value in pairs:
            dim = mapper.dimension(name)
            if dim is None:
                why = f"unknown attribute {name!r}"
                break
            mapped = mapper.value(dim, value)
            if mapped is None or mapped == UNKNOWN:
                why = f"unknown value {value!r} of {dim.key}"
                break
            key.extend([dim.key, mapped])
        pct = _number(item.get("avg_percentage"))
        entries.append(PublishedEntry(
            question_id=str(item.get("question_id")),
            base=pairs[0],
            compared=pairs[1],
            fraction=None if pct is None else pct / 100,
            lift=_number(item.get("avg_lift")),
            models=tuple(map(str, (item.get("metadata") or {}).get("model_list") or ())),
            key=None if why else (key[0], key[1], key[2], key[3]),
            why=why,
        ))
    return entries, dict(problems)


def _number(value: Any) -> float | None:
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


def cell_figures(profiles: pd.DataFrame, key: Key, min_row_total: int) -> tuple[float | None, float | None, int]:
    """The fraction, lift and count of cell (a, b) in the A x B table of these stories (None: not testable)."""
    a_dim, a_value, b_dim, b_value = key
    sub = profiles[profiles["base_attribute"] == a_dim]
    if sub.empty or b_dim not in sub.columns:
        return None, None, 0
    table = contingency(sub[a_dim].astype(str), sub[b_dim].astype(str), min_row_total)
    if table is None or a_value not in table.index:
        return None, None, 0
    counts = table.to_numpy()
    row = list(table.index).index(a_value)
    count = int(counts[row, list(table.columns).index(b_value)]) if b_value in table.columns else 0
    row_total = float(counts[row].sum())
    column_total = float(table[b_value].sum()) if b_value in table.columns else 0.0
    expected = row_total * column_total / float(table.to_numpy().sum())
    return count / row_total, (count / expected if expected else 0.0), count


def compare(
    profiles: pd.DataFrame, entries: Sequence[PublishedEntry], config: AssociationConfig | None = None
) -> dict[str, Any]:
    """Per model: the published associations it reproduces (with its fraction and lift beside the
    published ones), those it does not, and the associations it adds."""
    config = config or AssociationConfig()
    dims = list(load_seeds("en").dimensions)
    result = mine_associations(profiles, dims, config=config) if not profiles.empty else None
    per_slice = result.per_slice if result is not None else pd.DataFrame()
    mapped = [e for e in entries if e.key is not None]
    published_keys = {e.key for e in mapped}
    rows: list[dict[str, Any]] = []
    new: list[dict[str, Any]] = []
    models: dict[str, dict[str, Any]] = {}
    for model in sorted(map(str, profiles["model"].unique())) if not profiles.empty else []:
        own = profiles[profiles["model"].astype(str) == model]
        held_rows = per_slice[per_slice["model"].astype(str) == model] if not per_slice.empty else per_slice
        held: dict[Key, dict[str, Any]] = {}
        for record in held_rows.to_dict("records"):
            k = tuple(str(record[c]) for c in ASSOCIATION_KEY)
            held[(k[0], k[1], k[2], k[3])] = {str(c): v for c, v in record.items()}
        testable = 0
        for entry in mapped:
            assert entry.key is not None
            fraction, lift, count = cell_figures(own, entry.key, config.min_row_total)
            testable += fraction is not None
            rows.append({
                "model": model, "question_id": entry.question_id, **dict(zip(ASSOCIATION_KEY, entry.key, strict=True)),
                "published_fraction": entry.fraction, "published_lift": entry.lift,
                "fraction": fraction, "lift": lift, "count": count, "reproduced": entry.key in held,
            })
        added = sorted(set(held) - published_keys)
        for k in added:
            rec = held[k]
            new.append({"model": model, **dict(zip(ASSOCIATION_KEY, k, strict=True)), "count": int(rec["count"]),
                        "fraction": float(rec["fraction"]), "lift": float(rec["lift"]), "q": float(rec["q_by"])})
        models[model] = {
            "stories": len(own),
            "published_testable": testable,
            "reproduced": len(published_keys & set(held)),
            "held": len(held),
            "new": len(added),
        }
    unmapped = [{"question_id": e.question_id, "base": "=".join(e.base), "compared": "=".join(e.compared),
                 "why": e.why} for e in entries if e.key is None]
    unknown = sorted({e.why for e in entries if e.why})
    return {
        "published": {"entries": len(entries), "mapped": len(mapped), "unmapped": unmapped},
        "mapping": {
            "rule": "published attribute names and values mapped to the bundled keys by key, label or slug, then "
                    "the alias table data/stories/import_aliases.yaml",
            "unknown": unknown,
        },
        "models": models,
        "rows": rows,
        "new": new,
        "method": "an entry is reproduced when the model holds the association by the two-step procedure "
                  "(BH-significant table with a medium or large effect, BY-significant cell, lift >= "
                  f"{config.min_lift}); fraction and lift are the model's own, from the same pruned table",
    }
