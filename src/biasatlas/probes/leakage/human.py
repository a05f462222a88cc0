"""Human stereotype tables (traits × groups) for the leakage probe: load them, or aggregate raw ratings.

A table has one row per trait (32) and one column per group (30); a cell is the mean, over a language's
annotators who rated the group, of the strength of that pole. ``999`` in a file means missing: it is read as
NaN and never as zero (the paper's zero-filling is an explicit option of the leakage fit, not of loading).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from biasatlas.probes.leakage.data import (
    LANGUAGES,
    LeakageDataError,
    check_language,
    data_dir,
    group_ids,
    groups,
    trait_ids,
    trait_pairs,
)

MISSING = 999
SCORE_RANGE = (-50.0, 50.0)


def bundled_dir() -> Path:
    """The human tables shipped with biasatlas (Cao et al., MIT; see data/leakage/human/NOTICE.md)."""
    return data_dir() / "human"


def table_path(directory: Path, language: str) -> Path:
    return Path(directory) / f"aggregated_data_{language.upper()}.csv"


def load_table(path: str | Path) -> pd.DataFrame:
    """Read one traits × groups table; ``999`` becomes NaN. Unknown traits or groups are errors."""
    path = Path(path)
    if not path.exists():
        raise LeakageDataError(f"human table not found: {path}")
    frame = pd.read_csv(path, dtype={0: str})
    first = frame.columns[0]
    frame = frame.set_index(first)
    frame.index = frame.index.str.strip()
    frame.columns = [str(c).strip() for c in frame.columns]
    unknown_traits = [t for t in frame.index if t not in trait_ids()]
    unknown_groups = [g for g in frame.columns if g not in group_ids()]
    if unknown_traits or unknown_groups:
        raise LeakageDataError(
            f"{path}: unknown traits {unknown_traits} / unknown groups {unknown_groups}"
            f" (expected the 32 ABC traits as rows and the 30 group ids as columns)"
        )
    values = frame.apply(pd.to_numeric, errors="coerce")
    bad = values.isna() & frame.notna()
    if bad.any().any():
        trait, group = next((t, g) for t in bad.index for g in bad.columns if bad.loc[t, g])
        raise LeakageDataError(f"{path}: non-numeric value {frame.loc[trait, group]!r} at {trait} × {group}")
    values = values.where(values != MISSING)
    out_of_range = (values < 0) | (values > SCORE_RANGE[1])
    if out_of_range.any().any():
        trait, group = next((t, g) for t in values.index for g in values.columns if out_of_range.loc[t, g])
        raise LeakageDataError(
            f"{path}: value {values.loc[trait, group]} at {trait} × {group} is outside [0, 50] (999 = missing)"
        )
    return values.reindex(index=list(trait_ids()), columns=list(group_ids())).astype(float)


def load_human(directory: str | Path | None = None, languages: tuple[str, ...] = LANGUAGES) -> dict[str, pd.DataFrame]:
    """The tables of ``languages`` from ``directory`` (default: the bundled ones)."""
    base = Path(directory) if directory is not None else bundled_dir()
    return {lang: load_table(table_path(base, check_language(lang))) for lang in languages}


def shared_column_order() -> list[str]:
    """The group columns in the order of the shared tables' header (not Table 2's order)."""
    header = table_path(bundled_dir(), "en").read_text(encoding="utf-8").splitlines()[0]
    return [c.strip() for c in header.split(",")[1:]]


def write_table(table: pd.DataFrame, path: str | Path) -> Path:
    """Write a table in the shared layout: header ``Traits,<groups>``, missing cells as ``999``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    out = table.reindex(index=list(trait_ids()), columns=shared_column_order()).fillna(MISSING)
    out.index.name = "Traits"
    out.to_csv(path, float_format="%.10g")
    return path


# ---- aggregation of raw per-annotator ratings ---------------------------------------------------------------
def default_name_map() -> dict[str, str]:
    """Group names raw ratings may use (plurals, ids, known typos) -> group id; keys case-folded."""
    mapping: dict[str, str] = {}
    for group in groups():
        for name in (group.id, *group.plurals):
            mapping[name.casefold()] = group.id
    return mapping


def load_name_map(path: str | Path) -> dict[str, str]:
    """A user's extra names: a JSON or YAML mapping ``{"name in the ratings": "group id"}``."""
    path = Path(path)
    if not path.exists():
        raise LeakageDataError(f"name map not found: {path}")
    text = path.read_text(encoding="utf-8")
    try:
        raw = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise LeakageDataError(f"{path}: cannot parse the name map: {exc}") from exc
    if not isinstance(raw, dict):
        raise LeakageDataError(f"{path}: a name map is a mapping of names to group ids")
    bad = {k: v for k, v in raw.items() if v not in group_ids()}
    if bad:
        raise LeakageDataError(f"{path}: these names map to unknown group ids: {bad}; valid ids: {group_ids()}")
    return {str(k).casefold(): str(v) for k, v in raw.items()}


def _pair_lookup() -> dict[str, tuple[str, str]]:
    """``"left - right"`` (whitespace- and case-insensitive) -> (left trait, right trait)."""
    return {_norm_key(p.key): (p.left, p.right) for p in trait_pairs()}


def _norm_key(key: str) -> str:
    left, sep, right = key.partition("-") if " - " not in key else key.partition(" - ")
    if not sep:
        return key.casefold()
    return " - ".join(" ".join(part.replace("-", " ").split()).casefold() for part in (left, right))


def read_ratings(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    if not path.exists():
        raise LeakageDataError(f"ratings file not found: {path}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise LeakageDataError(f"{path}: not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise LeakageDataError(f"{path}: expected {{annotator: {{group: {{'left - right': score}}}}}}")
    return data


def aggregate(
    ratings: Mapping[str, Any],
    *,
    min_raters: int = 1,
    name_map: Mapping[str, str] | None = None,
    source: str = "ratings",
) -> tuple[pd.DataFrame, pd.Series]:
    """Aggregate ``{annotator: {group: {"left - right": s}}}`` into a traits × groups table.

    A pole's value is the mean over the group's raters of its strength (left = max(-s, 0), right =
    max(s, 0)); a cell rated by fewer than ``min_raters`` annotators is missing. Returns the table and the
    number of raters per (group) column. Unknown groups or trait pairs and scores outside [-50, 50] raise
    LeakageDataError naming the annotator, group and key; ``999`` (or null) scores count as not rated.
    """
    if min_raters < 1:
        raise LeakageDataError(f"min_raters must be at least 1, got {min_raters}")
    names = default_name_map()
    names.update({k.casefold(): v for k, v in (name_map or {}).items()})
    pairs = _pair_lookup()
    strengths: dict[tuple[str, str], list[float]] = {}
    raters: dict[str, set[str]] = {}
    for annotator, by_group in ratings.items():
        if not isinstance(by_group, dict):
            raise LeakageDataError(f"{source}: annotator {annotator!r} must map group names to ratings")
        for name, scores in by_group.items():
            group = names.get(str(name).strip().casefold())
            if group is None:
                raise LeakageDataError(
                    f"{source}: unknown group {name!r} (annotator {annotator!r}); map it to one of the 30 "
                    f"group ids with --name-map FILE (a JSON/YAML mapping name -> id)"
                )
            if not isinstance(scores, dict):
                raise LeakageDataError(f"{source}: annotator {annotator!r}, group {name!r}: expected pair scores")
            rated = False
            for key, score in scores.items():
                pole = pairs.get(_norm_key(str(key)))
                if pole is None:
                    raise LeakageDataError(
                        f"{source}: unknown trait pair {key!r} (annotator {annotator!r}, group {name!r}); "
                        f"valid: {', '.join(p.key for p in trait_pairs())}"
                    )
                if score is None or score == MISSING:
                    continue
                if isinstance(score, bool) or not isinstance(score, (int, float)) or math.isnan(score):
                    raise LeakageDataError(
                        f"{source}: score {score!r} is not a number (annotator {annotator!r}, group {name!r}, {key!r})"
                    )
                if not SCORE_RANGE[0] <= score <= SCORE_RANGE[1]:
                    raise LeakageDataError(
                        f"{source}: score {score} outside [-50, 50] (annotator {annotator!r}, group {name!r}, {key!r})"
                    )
                left, right = pole
                strengths.setdefault((left, group), []).append(max(-float(score), 0.0))
                strengths.setdefault((right, group), []).append(max(float(score), 0.0))
                rated = True
            if rated:
                raters.setdefault(group, set()).add(str(annotator))
    table = pd.DataFrame(np.nan, index=list(trait_ids()), columns=list(group_ids()))
    counts = pd.Series(0, index=list(group_ids()), dtype=int)
    for group, who in raters.items():
        counts[group] = len(who)
    for (trait, group), values in strengths.items():
        # The minimum applies to the raters of this very cell, so a pair an annotator skipped counts less.
        if len(values) >= min_raters:
            table.loc[trait, group] = float(np.mean(values))
    table.index.name = "Traits"
    return table, counts


def aggregate_file(
    path: str | Path, *, min_raters: int = 1, name_map_path: str | Path | None = None
) -> tuple[pd.DataFrame, pd.Series]:
    """:func:`aggregate` over a ratings JSON file, with an optional name-map file."""
    extra = load_name_map(name_map_path) if name_map_path else None
    return aggregate(read_ratings(path), min_raters=min_raters, name_map=extra, source=str(path))
