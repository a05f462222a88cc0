"""``schema.md``: what was exported, how to read it, and every column of every table, with its type."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from biasatlas.tidy.columns import (
    ANSWER_CORE,
    ANSWER_OPTIONAL,
    ANSWER_TAIL,
    PARSED_VALUE,
    PROBE_COLUMNS,
    STATISTICS,
    stories_attribute,
)


def describe(probe: str, column: str) -> str | None:
    """The description of an answers column of ``probe``; None when there is none (a test keeps it so)."""
    if column == "parsed_value":
        return f"{ANSWER_TAIL[column]} Here: {PARSED_VALUE.get(probe, 'the read value.')}"
    for table in (ANSWER_CORE, ANSWER_OPTIONAL, ANSWER_TAIL, PROBE_COLUMNS.get(probe, {})):
        if column in table:
            return table[column]
    if probe == "stories":
        from biasatlas.probes.stories.seeds import load_seeds

        if column in load_seeds("en").dimensions:
            return stories_attribute(column)
    return None


def type_name(dtype: Any) -> str:
    if pd.api.types.is_bool_dtype(dtype):
        return "boolean"
    if pd.api.types.is_integer_dtype(dtype):
        return "integer"
    if pd.api.types.is_float_dtype(dtype):
        return "float"
    return "string"


def _table(rows: list[tuple[str, str, str]]) -> list[str]:
    lines = ["| column | type | meaning |", "|---|---|---|"]
    lines += ["| `{}` | {} | {} |".format(c, t, d.replace("|", "\\|")) for c, t, d in rows]
    return lines


def schema_text(
    study: Path,
    fmt: str,
    answers: dict[str, pd.DataFrame],
    statistics: dict[str, pd.DataFrame],
    files: dict[str, str],
    analysis: dict[str, Any],
) -> str:
    """The Markdown text of ``schema.md`` for the tables just written (``files``: table name -> file name)."""
    from biasatlas import __version__

    ext = "parquet" if fmt == "parquet" else "csv"
    lines = [
        "# biasatlas export",
        "",
        f"Study `{study}`, exported {datetime.now(UTC).isoformat(timespec='seconds')} by biasatlas {__version__} "
        f"as {fmt.upper()}" + (f"; analysis options {analysis}" if analysis else "; the probes' default analysis")
        + ".",
        "",
        "## Files",
        "",
        "| file | rows | what |",
        "|---|---|---|",
    ]
    for probe, frame in answers.items():
        lines.append(f"| `{files[f'answers_{probe}']}` | {len(frame)} | {probe}: one row per model × prompt × sample |")
    for probe, frame in statistics.items():
        lines.append(f"| `{files[f'statistics_{probe}']}` | {len(frame)} | {probe}: one row per test |")
    lines += [
        "",
        "Read a table with pandas or the Hugging Face `datasets` library:",
        "",
        "```python",
        "import pandas as pd",
        f"answers = pd.read_{'parquet' if ext == 'parquet' else 'csv'}(\"answers_contact.{ext}\")",
        "from datasets import load_dataset",
        f"stats = load_dataset(\"{ext}\", data_files=\"statistics_*.{ext}\")[\"train\"]"
        "  # the same columns for every probe",
        "```",
        "",
        "Missing values are empty cells in CSV and nulls in Parquet. Lists and objects (options, option",
        "probabilities, a story's profile) are JSON text. The statistics tables have the same columns for",
        "every probe; the answers tables share the first and last columns and hold each probe's own design",
        "factors and read columns between them.",
        "",
        "## Answers tables",
        "",
        "Columns every answers table has:",
        "",
    ]
    some = next(iter(answers.values()), None)
    shared = [(c, type_name(some[c].dtype) if some is not None and c in some else "", d)
              for c, d in {**ANSWER_CORE, **ANSWER_TAIL}.items()]
    lines += _table(shared)
    for probe, frame in answers.items():
        own = [c for c in frame.columns if c not in ANSWER_CORE and c not in ANSWER_TAIL]
        lines += ["", f"### {probe}", "", f"`parsed_value`: {PARSED_VALUE.get(probe, 'the read value.')} "
                  f"Type here: {type_name(frame['parsed_value'].dtype)}.", ""]
        if own:
            lines += _table([(c, type_name(frame[c].dtype), describe(probe, c) or "") for c in own])
    lines += ["", "## Statistics tables", ""]
    some = next(iter(statistics.values()), None)
    lines += _table([(c, type_name(some[c].dtype) if some is not None else "", d) for c, d in STATISTICS.items()])
    lines.append("")
    return "\n".join(lines)
