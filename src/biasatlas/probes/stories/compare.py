"""A model's associations against the published StereoTales human-study list (``questions.json``).

The published list (1,580 entries, all with lift >= 2, no licence: the user supplies it) holds
associations A=a -> B=b with the mean percentage and lift across the paper's models. Its attribute
names and values are mapped to the bundled keys (:class:`~.published.ValueMapper`); an entry that
does not map is listed with the reason, never dropped silently. For every slice of the study
(model x prompt template, x language where it has several: never pooled, as the rest of the analysis)
and every mapped entry, :func:`compare` gives the slice's own fraction and lift of that cell (from the
same pruned contingency table as the analysis) and whether the association holds there (the two-step
procedure), or why the entry cannot be tested there; the associations a slice holds that the list
lacks are "new".
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
from biasatlas.stats.associations import (
    ASSOCIATION_KEY,
    OTHER,
    AssociationConfig,
    contingency,
    mine_associations,
)

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


@dataclass(frozen=True)
class CellFigures:
    """A published cell in one slice's pruned A x B table: the slice's fraction, lift and count, or ``why``
    it cannot be tested (``fraction`` None)."""

    fraction: float | None
    lift: float | None
    count: int
    why: str | None = None


def cell_figures(profiles: pd.DataFrame, key: Key, min_row_total: int) -> CellFigures:
    """The fraction, lift and count of cell (a, b) in the A x B table of these stories, or why not testable."""
    a_dim, a_value, b_dim, b_value = key
    sub = profiles[profiles["base_attribute"].astype(str) == a_dim]
    if sub.empty or b_dim not in sub.columns:
        return CellFigures(None, None, 0, f"no story prompted with {a_dim}")
    a, b = sub[a_dim].astype(str), sub[b_dim].astype(str)
    table = contingency(a, b, min_row_total)
    known = (a != UNKNOWN) & (b != UNKNOWN) & (b != OTHER)
    if table is None or a_value not in table.index:
        if int((known & (a == a_value)).sum()) < min_row_total:
            return CellFigures(None, None, 0, f"fewer than {min_row_total} stories prompted with {a_dim}={a_value} "
                                              f"have a known {b_dim}")
        if b[known].nunique() < 2:
            return CellFigures(None, None, 0, f"fewer than 2 known values of {b_dim} in the stories prompted with "
                                              f"{a_dim}")
        return CellFigures(None, None, 0, f"fewer than 2 values of {a_dim} with {min_row_total} stories with a "
                                          f"known {b_dim}")
    counts = table.to_numpy()
    row = list(table.index).index(a_value)
    count = int(counts[row, list(table.columns).index(b_value)]) if b_value in table.columns else 0
    row_total = float(counts[row].sum())
    column_total = float(table[b_value].sum()) if b_value in table.columns else 0.0
    expected = row_total * column_total / float(counts.sum())
    return CellFigures(count / row_total, (count / expected if expected else 0.0), count)


SLICE_COLUMNS = ("model", "template", "language")
POOLED = "all"  # the language of a slice that pools the study's languages


def slice_frame(profiles: pd.DataFrame, per_language: bool | None = None) -> pd.DataFrame:
    """The profiles with one (model, template, language) label per slice compared: templates always apart,
    languages apart unless ``per_language`` is False (None: apart when the study has several)."""
    frame = profiles.copy()
    if "template" not in frame.columns:
        frame["template"] = "scenario_based"
    frame["template"] = frame["template"].fillna("scenario_based").astype(str)
    if "language" not in frame.columns:
        frame["language"] = POOLED
    several = frame["language"].astype(str).nunique() > 1
    frame["language"] = POOLED if several and per_language is False else frame["language"].astype(str)
    frame["model"] = frame["model"].astype(str)
    return frame


def compare(
    profiles: pd.DataFrame,
    entries: Sequence[PublishedEntry],
    config: AssociationConfig | None = None,
    per_language: bool | None = None,
) -> dict[str, Any]:
    """Per slice (model x prompt template, x language where the study has several unless ``per_language`` is
    False): the published associations it reproduces (with its fraction and lift beside the published ones),
    those it does not, each untestable one with the reason, and the associations it adds."""
    config = config or AssociationConfig()
    dims = list(load_seeds("en").dimensions)
    frame = slice_frame(profiles, per_language) if not profiles.empty else profiles
    by = list(SLICE_COLUMNS)
    result = mine_associations(frame, dims, by=by, config=config) if not frame.empty else None
    per_slice = result.per_slice if result is not None else pd.DataFrame()
    mapped = [e for e in entries if e.key is not None]
    published_keys = {e.key for e in mapped}
    rows: list[dict[str, Any]] = []
    new: list[dict[str, Any]] = []
    slices: list[dict[str, Any]] = []
    grouped = list(frame.groupby(by, sort=True, observed=True)) if not frame.empty else []
    for labels_t, own in grouped:
        labels = dict(zip(by, map(str, labels_t), strict=True))
        held_rows = per_slice
        for column, value in labels.items():
            held_rows = held_rows[held_rows[column].astype(str) == value] if not held_rows.empty else held_rows
        held: dict[Key, dict[str, Any]] = {}
        for record in held_rows.to_dict("records"):
            k = tuple(str(record[c]) for c in ASSOCIATION_KEY)
            held[(k[0], k[1], k[2], k[3])] = {str(c): v for c, v in record.items()}
        untestable: Counter[str] = Counter()
        for entry in mapped:
            assert entry.key is not None
            cell = cell_figures(own, entry.key, config.min_row_total)
            if cell.why:
                untestable[cell.why] += 1
            rows.append({
                **labels, "question_id": entry.question_id, **dict(zip(ASSOCIATION_KEY, entry.key, strict=True)),
                "published_fraction": entry.fraction, "published_lift": entry.lift,
                "fraction": cell.fraction, "lift": cell.lift, "count": cell.count, "reproduced": entry.key in held,
                "why": cell.why,
            })
        added = sorted(set(held) - published_keys)
        for k in added:
            rec = held[k]
            new.append({**labels, **dict(zip(ASSOCIATION_KEY, k, strict=True)), "count": int(rec["count"]),
                        "fraction": float(rec["fraction"]), "lift": float(rec["lift"]), "q": float(rec["q_by"])})
        slices.append({
            **labels,
            "stories": len(own),
            "published_testable": len(mapped) - sum(untestable.values()),
            "reproduced": len(published_keys & set(held)),
            "held": len(held),
            "new": len(added),
            "untestable": dict(untestable),
        })
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
        "slices": slices,
        "rows": rows,
        "new": new,
        "method": "per model x prompt template (x language where the study has several, unless pooled): an entry "
                  "is reproduced when the slice holds the association by the two-step procedure (BH-significant "
                  "table with a medium or large effect, BY-significant cell, lift >= "
                  f"{config.min_lift}); fraction and lift are the slice's own, from the same pruned table; an "
                  "entry that cannot be tested there says why",
    }
