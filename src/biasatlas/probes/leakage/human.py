"""Human stereotype tables (traits × groups) for the leakage probe: load them, or aggregate raw ratings.

A table has one row per trait (32) and one column per group (30); a cell is the mean, over a language's
annotators who rated the group, of the strength of that pole. ``999`` in a file means missing: it is read as
NaN and never as zero (the paper's zero-filling is an explicit option of the leakage fit, not of loading).
Raw per-annotator ratings are aggregated into such tables by :mod:`biasatlas.probes.leakage.ratings`.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from biasatlas.probes.leakage.data import (
    LANGUAGES,
    LeakageDataError,
    check_language,
    data_dir,
    group_ids,
    trait_ids,
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
