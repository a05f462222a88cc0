"""Tidy exports of a study: answers and statistics per probe as Parquet or CSV, with ``schema.md``.

``export_study(study, target, fmt)`` writes, for every probe the study holds answers or tests for,
``answers_<probe>.<ext>`` (one row per model × prompt × sample) and ``statistics_<probe>.<ext>``
(one row per test, the same columns for every probe), and ``schema.md`` describing every column.
Everything is read as the public API reads it (``biasatlas.study.Study``, what ``biasatlas.open_study``
returns, and ``Probe.summarise``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biasatlas.table_files import FORMATS

__all__ = ["FORMATS", "ExportError", "ExportResult", "export_study"]

#: the statistics columns' types: fixed, so the tables of every probe have one schema
_STAT_FLOATS = ("estimate", "ci_low", "ci_high", "ci_level", "statistic", "effect_size", "p", "p_adj", "alpha",
                "sd_diff", "equivalence_margin", "mde")
_STAT_INTS = ("n", "min_units", "discordant_b", "discordant_c", "max_tokens", "n_groups")
#: run settings that are one number where every run behind a row shares it (several: run_settings says them)
_STAT_SETTINGS: dict[str, Any] = {"seed": "Int64", "samples": "Int64", "temperature": "float64"}


class ExportError(ValueError):
    """An export that cannot be written (target not empty, not a directory, unknown format): one line."""


@dataclass
class ExportResult:
    """What an export wrote: the files, and the rows of each table."""

    target: Path
    files: list[Path] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)


def check_target(target: Path, force: bool) -> None:
    """A target that is a file, or a non-empty directory without ``force``, is an ExportError."""
    if target.exists() and not target.is_dir():
        raise ExportError(f"export target {target} is a file, not a directory")
    if target.is_dir() and any(target.iterdir()) and not force:
        raise ExportError(f"export target {target} is not empty; choose an empty directory or pass --force "
                          "(files of the same names are replaced, others left alone)")


def export_study(
    study: str | Path,
    target: str | Path,
    fmt: str = "parquet",
    *,
    force: bool = False,
    analysis: dict[str, Any] | None = None,
) -> ExportResult:
    """Export every probe of ``study`` into the directory ``target`` (created if missing).

    ``analysis`` (``alpha``, ``correction``) goes to each probe's summarise, as in `biasatlas summary`.
    """
    import pandas as pd

    from biasatlas.export.answers import answers_table
    from biasatlas.export.schema import schema_text
    from biasatlas.export.statistics import statistics_rows
    from biasatlas.probes import load_probe
    from biasatlas.report.build import study_probes
    from biasatlas.study import Study
    from biasatlas.table_files import plain_types, write_table
    from biasatlas.tidy.columns import PARSED_TYPES, TYPES

    if fmt not in FORMATS:
        raise ExportError(f"--format {fmt!r}: valid: {', '.join(FORMATS)}")
    if fmt == "parquet" and not has_pyarrow():
        raise ExportError("Parquet needs pyarrow: pip install 'biasatlas[parquet]', or export with --format csv")
    target = Path(target)
    check_target(target, force)
    analysis = dict(analysis or {})
    answers: dict[str, pd.DataFrame] = {}
    statistics: dict[str, pd.DataFrame] = {}
    with Study(study) as opened:
        for probe in study_probes(opened.store):
            frame = answers_table(opened, probe)
            if not frame.empty:
                types = {**TYPES, "parsed_value": PARSED_TYPES.get(probe, "string")}
                answers[probe] = plain_types(frame, {k: v for k, v in types.items() if k in frame.columns})
            summary = load_probe(probe).summarise(opened.store, **analysis)
            rows = statistics_rows(probe, summary, analysis.get("alpha"))
            if rows or probe in answers:
                statistics[probe] = _statistics_frame(rows)
    if not answers and not statistics:
        raise ExportError(f"the study {study} holds no answers yet: nothing to export")
    target.mkdir(parents=True, exist_ok=True)
    ext = "parquet" if fmt == "parquet" else "csv"
    result = ExportResult(target)
    names: dict[str, str] = {}
    for kind, tables in (("answers", answers), ("statistics", statistics)):
        for probe, frame in tables.items():
            name = f"{kind}_{probe}.{ext}"
            names[f"{kind}_{probe}"] = name
            result.files.append(write_table(frame, target / name, fmt))
            result.rows[name] = len(frame)
    schema = target / "schema.md"
    schema.write_text(schema_text(Path(study), fmt, answers, statistics, names, analysis), encoding="utf-8")
    result.files.append(schema)
    return result


def has_pyarrow() -> bool:
    import importlib.util

    return importlib.util.find_spec("pyarrow") is not None


def _statistics_frame(rows: list[dict[str, Any]]) -> Any:
    """The statistics rows with the fixed column order and types (also when there are none)."""
    import pandas as pd

    from biasatlas.tidy.columns import STATISTICS

    frame = pd.DataFrame(rows, columns=list(STATISTICS))
    several = {c: frame[c].map(lambda v: isinstance(v, str) and ";" in v) for c in _STAT_SETTINGS}
    frame["run_settings"] = [
        "; ".join(f"{c} {frame.at[i, c]!s}" for c in _STAT_SETTINGS if several[c][i]) or None for i in frame.index]
    for column in frame.columns:
        if column in _STAT_SETTINGS:
            values = frame[column].where(~several[column], None)
            frame[column] = pd.to_numeric(values, errors="coerce").astype(_STAT_SETTINGS[column])
        elif column in _STAT_FLOATS:
            frame[column] = pd.to_numeric(frame[column], errors="coerce").astype("float64")
        elif column in _STAT_INTS:
            frame[column] = pd.to_numeric(frame[column], errors="coerce").astype("Int64")
        elif column in ("significant", "headline", "group_headline"):
            frame[column] = frame[column].map(lambda v: None if v is None or v != v else bool(v)).astype("boolean")
        else:
            frame[column] = frame[column].map(lambda v: None if v is None or v != v else str(v)).astype("string")
    return frame
