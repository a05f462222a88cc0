"""Aggregating raw per-annotator ratings ``{annotator: {group: {"left - right": score}}}`` into a human table.

The defaults follow the design of paper 004 (section 3.2): a cell needs at least five annotations in the
language (``min_raters=5``), and a non-shared group counts only in its home language (``nonshared="home"``:
"for non-shared groups ... we collected annotations only in that language"). The published tables keep
non-shared groups wherever they were rated and at least five raters, with two exceptions in Hindi
(:data:`PUBLISHED_EXCEPTIONS`): ``min_raters=5, nonshared="all"`` reproduces en, ru and zh, and with
``keep_groups=PUBLISHED_EXCEPTIONS[lang]`` (the CLI's ``--as-published``) hi too. Every cell left missing is
reported with why; group names that are not among the 30 are skipped and listed (``strict=True`` fails).
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
import yaml

from biasatlas.datafiles import MAX_YAML_BYTES, BoundedSafeLoader
from biasatlas.probes.leakage.data import (
    LeakageDataError,
    check_language,
    group_by_id,
    group_ids,
    groups,
    trait_ids,
    trait_pairs,
)
from biasatlas.probes.leakage.human import MISSING, SCORE_RANGE

MIN_RATERS = 5  # paper 004, section 3.2: "a minimum of five annotations per social group in each language"
Nonshared = Literal["home", "all"]
#: Groups the published tables (Cao et al., commit 8254eb7) keep with fewer than five raters, per language:
#: Hindi immigrant (1 rater) and Asian person (4), as counted in the raw data_full_hindi.json by the review of
#: issue 25; the published values agree (immigrant: whole numbers, one pole 0 per pair; Asian person: quarters).
PUBLISHED_EXCEPTIONS: dict[str, tuple[str, ...]] = {"en": (), "ru": (), "zh": (), "hi": ("immigrant", "Asian person")}
SHAPE = "{annotator: {group: {'left - right': score}}}"


@dataclass
class Aggregation:
    """A human table, its raters per group, the missing cells with why, and the group names skipped."""

    table: pd.DataFrame
    raters: pd.Series  # annotators per group id whose ratings were used
    missing: pd.DataFrame  # group, category, missing_cells, raters, reason
    skipped_groups: dict[str, int] = field(default_factory=dict)  # name not among the 30 -> annotators

    def skipped_warning(self, strict: bool = False) -> str | None:
        """One line naming the skipped group names, or None."""
        if not self.skipped_groups:
            return None
        names = ", ".join(f"{n!r} ({k} annotator{'s' if k != 1 else ''})" for n, k in
                          sorted(self.skipped_groups.items()))
        verb = "found" if strict else "skipped"
        return (f"{verb} {len(self.skipped_groups)} group name(s) not among the 30: {names}; map them with "
                f"--name-map FILE{'' if strict else ', or use --strict to fail'}")


# ---- reading files -------------------------------------------------------------------------------------------
def _read_text(path: Path, what: str) -> str:
    """The file as UTF-8 text (a UTF-8 byte-order mark is allowed); anything else is a one-line error."""
    if not path.exists():
        raise LeakageDataError(f"{what} not found: {path}")
    if not path.is_file():
        raise LeakageDataError(f"{path}: not a file")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise LeakageDataError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")) or (len(raw) >= 2 and b"\x00" in raw[:4]):
        raise LeakageDataError(f"{path}: the file is UTF-16 (or another wide encoding); save it as UTF-8")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise LeakageDataError(f"{path}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from None


def read_ratings(path: str | Path) -> dict[str, Any]:
    """The ratings JSON of one language, checked to be a mapping; every problem is one LeakageDataError."""
    path = Path(path)
    text = _read_text(path, "ratings file")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LeakageDataError(f"{path}: not valid JSON: {exc}") from None
    except RecursionError:
        raise LeakageDataError(f"{path}: JSON nested too deeply; expected {SHAPE} (three levels)") from None
    if not isinstance(data, dict):
        raise LeakageDataError(f"{path}: expected {SHAPE}")
    return data


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
    text = _read_text(path, "name map")
    try:
        if len(text) > MAX_YAML_BYTES:
            raise LeakageDataError(f"{path}: larger than {MAX_YAML_BYTES / 2**20:g} MiB, the most a name map may have")
        # bounded: an alias bomb or a deep nesting is a one-line error, not a MemoryError
        raw = json.loads(text) if path.suffix == ".json" else yaml.load(text, Loader=BoundedSafeLoader)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise LeakageDataError(f"{path}: cannot parse the name map: {' '.join(str(exc).split())}") from None
    except RecursionError:
        raise LeakageDataError(f"{path}: the name map is nested too deeply; expected name: group id") from None
    if not isinstance(raw, dict):
        raise LeakageDataError(f"{path}: a name map is a mapping of names to group ids")
    bad = {k: v for k, v in raw.items() if v not in group_ids()}
    if bad:
        raise LeakageDataError(f"{path}: these names map to unknown group ids: {bad}; valid ids: {group_ids()}")
    return {str(k).casefold(): str(v) for k, v in raw.items()}


# ---- aggregation -----------------------------------------------------------------------------------------------
def _pair_lookup() -> dict[str, tuple[str, str]]:
    """``"left - right"`` (whitespace- and case-insensitive) -> (left trait, right trait)."""
    return {_norm_key(p.key): (p.left, p.right) for p in trait_pairs()}


def _norm_key(key: str) -> str:
    left, sep, right = key.partition("-") if " - " not in key else key.partition(" - ")
    if not sep:
        return key.casefold()
    return " - ".join(" ".join(part.replace("-", " ").split()).casefold() for part in (left, right))


def _score(score: Any, source: str, where: str) -> float | None:
    """A slider score in [-50, 50]; None for not rated (``999`` or null)."""
    if score is None or score == MISSING:
        return None
    if isinstance(score, bool) or not isinstance(score, (int, float)) or math.isnan(score):
        raise LeakageDataError(f"{source}: score {score!r} is not a number ({where})")
    if not SCORE_RANGE[0] <= score <= SCORE_RANGE[1]:
        raise LeakageDataError(f"{source}: score {score} outside [-50, 50] ({where})")
    return float(score)


def aggregate(
    ratings: Mapping[str, Any],
    *,
    language: str,
    min_raters: int = MIN_RATERS,
    nonshared: Nonshared = "home",
    name_map: Mapping[str, str] | None = None,
    strict: bool = False,
    source: str = "ratings",
    keep_groups: Collection[str] = (),
) -> Aggregation:
    """Aggregate one language's ratings into a traits × groups table of mean pole strengths.

    A pole's value is the mean over the group's raters of its strength (left = max(-s, 0), right =
    max(s, 0)); a cell rated by fewer than ``min_raters`` annotators is missing. With ``nonshared="home"``
    a non-shared group's ratings count only in its home language. Unknown trait pairs and bad scores raise
    LeakageDataError naming the annotator, group and key; ``999`` (or null) scores count as not rated.
    A group of ``keep_groups`` keeps every cell it has a rating for, at any number of raters.
    """
    check_language(language)
    if min_raters < 1:
        raise LeakageDataError(f"min_raters must be at least 1, got {min_raters}")
    unknown = sorted(set(keep_groups) - set(group_ids()))
    if unknown:
        raise LeakageDataError(f"keep_groups: unknown group ids {unknown}; valid: {', '.join(group_ids())}")
    names = default_name_map()
    names.update({k.casefold(): v for k, v in (name_map or {}).items()})
    by_id, pairs = group_by_id(), _pair_lookup()
    strengths: dict[tuple[str, str], list[float]] = {}
    raters: dict[str, set[str]] = {}
    skipped: dict[str, set[str]] = {}
    for annotator, by_group in ratings.items():
        if not isinstance(by_group, dict):
            raise LeakageDataError(f"{source}: annotator {annotator!r} must map group names to ratings")
        for name, scores in by_group.items():
            group = names.get(str(name).strip().casefold())
            if group is None:
                skipped.setdefault(str(name), set()).add(str(annotator))
                continue
            if not isinstance(scores, dict):
                raise LeakageDataError(f"{source}: annotator {annotator!r}, group {name!r}: expected pair scores")
            for key, raw in scores.items():
                pole = pairs.get(_norm_key(str(key)))
                if pole is None:
                    raise LeakageDataError(
                        f"{source}: unknown trait pair {key!r} (annotator {annotator!r}, group {name!r}); "
                        f"valid: {', '.join(p.key for p in trait_pairs())}"
                    )
                score = _score(raw, source, f"annotator {annotator!r}, group {name!r}, {key!r}")
                if score is None:
                    continue
                strengths.setdefault((pole[0], group), []).append(max(-score, 0.0))
                strengths.setdefault((pole[1], group), []).append(max(score, 0.0))
                raters.setdefault(group, set()).add(str(annotator))
    aggregation = Aggregation(table=pd.DataFrame(), raters=pd.Series(dtype=int), missing=pd.DataFrame(),
                              skipped_groups={n: len(who) for n, who in skipped.items()})
    if skipped and strict:
        raise LeakageDataError(f"{source}: {aggregation.skipped_warning(strict=True)}")
    foreign = {g for g in raters if nonshared == "home" and by_id[g].category == "nonshared"
               and by_id[g].home != language}
    table = pd.DataFrame(np.nan, index=list(trait_ids()), columns=list(group_ids()))
    for (trait, group), values in strengths.items():
        # The minimum applies to the raters of this very cell, so a pair an annotator skipped counts less.
        if group not in foreign and (len(values) >= min_raters or group in keep_groups):
            table.loc[trait, group] = float(np.mean(values))
    table.index.name = "Traits"
    counts = pd.Series({g: (0 if g in foreign else len(raters.get(g, ()))) for g in group_ids()}, dtype=int)
    aggregation.table, aggregation.raters = table, counts
    aggregation.missing = _missing(table, raters, foreign, language, min_raters)
    return aggregation


def _missing(
    table: pd.DataFrame, raters: Mapping[str, set[str]], foreign: set[str], language: str, min_raters: int
) -> pd.DataFrame:
    """One row per group with a missing cell: how many cells, its raters, and why."""
    by_id = group_by_id()
    rows: list[dict[str, Any]] = []
    for group in table.columns:
        missing = int(table[group].isna().sum())
        if not missing:
            continue
        info = by_id[group]
        count = len(raters.get(group, ()))
        if group in foreign:
            reason = (f"non-shared group of {info.home}: its {count} rater(s) in {language} are left out (paper 004 "
                      f"3.2 collects it only in {info.home}; --nonshared all keeps them)")
        elif count == 0:
            home = f" (a non-shared group of {info.home})" if info.category == "nonshared" else ""
            reason = f"not rated in {language}{home}"
        elif missing == len(table.index):
            reason = f"{count} rater(s), fewer than --min-raters {min_raters} (paper 004: at least 5 per group)"
        else:
            reason = f"{missing} cells have fewer than {min_raters} raters (annotators skipped those pairs)"
        rows.append({"group": group, "category": info.category, "missing_cells": missing, "raters": count,
                     "reason": reason})
    return pd.DataFrame(rows, columns=["group", "category", "missing_cells", "raters", "reason"])


def aggregate_file(
    path: str | Path,
    *,
    language: str,
    min_raters: int = MIN_RATERS,
    nonshared: Nonshared = "home",
    name_map_path: str | Path | None = None,
    strict: bool = False,
    keep_groups: Collection[str] = (),
) -> Aggregation:
    """:func:`aggregate` over a ratings JSON file, with an optional name-map file."""
    extra = load_name_map(name_map_path) if name_map_path else None
    return aggregate(read_ratings(path), language=language, min_raters=min_raters, nonshared=nonshared,
                     name_map=extra, strict=strict, source=str(path), keep_groups=keep_groups)
