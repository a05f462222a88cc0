"""Import of published contact datasets, so they run like our own prompts.

Formats:
- ``raj``: a CSV with columns id, key_principle, scenario, action_type, axis, bucket, base_prompt,
  positive_contact, negative_contact (Raj et al.), each text with a ``[descriptor]`` placeholder.
  Descriptors come from ``--descriptors`` or, failing that, from HolisticBias v1.0 for the row's
  axis and bucket.
- ``rows``: a spreadsheet (xlsx) or CSV with one column of questions, three rows per template in the
  order none / positive / negative (the German/Icelandic format), plus a descriptor list.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from biasatlas.probes.contact.data import NAME, SCALES, holistic_bias_descriptors, template_sets
from biasatlas.probes.contact.plan import compose
from biasatlas.records import Message, Prompt, stable_hash

RAJ_COLUMNS = (
    "id", "key_principle", "scenario", "action_type", "axis", "bucket",
    "base_prompt", "positive_contact", "negative_contact",
)
PLACEHOLDER = "[descriptor]"


class DatasetImportError(ValueError):
    """A malformed import file; the message names the file and the row."""


def _read_table(path: Path) -> pd.DataFrame:
    if not path.exists():
        raise DatasetImportError(f"{path}: file not found")
    try:
        if path.suffix.lower() in {".xlsx", ".xlsm", ".xls"}:
            return pd.read_excel(path, dtype=str)
        return pd.read_csv(path, dtype=str, keep_default_na=False)
    except Exception as exc:  # pandas raises many types for unreadable files
        raise DatasetImportError(f"{path}: cannot read as a table: {exc}") from exc


def read_descriptors(path: Path) -> list[tuple[str, str]]:
    """(descriptor, group label) pairs from a text file (one per line) or a CSV/XLSX.

    A table may have columns ``descriptor`` and optionally ``group`` (else the first column).
    """
    if path.suffix.lower() in {".txt", ""}:
        if not path.exists():
            raise DatasetImportError(f"{path}: file not found")
        items = [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        return [(d, d) for d in items]
    table = _read_table(path)
    col = "descriptor" if "descriptor" in table.columns else table.columns[0]
    group = "group" if "group" in table.columns else col
    out = []
    for i, row in table.iterrows():
        value = str(row[col]).strip()
        if not value or value.lower() == "nan":
            raise DatasetImportError(f"{path}: row {int(str(i)) + 2}: empty descriptor")
        out.append((value, str(row[group]).strip() or value))
    return out


def detect_format(table: pd.DataFrame) -> str:
    return "raj" if set(RAJ_COLUMNS) <= set(table.columns) else "rows"


def infer_scale(text: str) -> str:
    """certainty / likelihood / frequency from the question's option words."""
    low = text.lower()
    if re.search(r"\b(unlikely|likely|wahrscheinlich|líklegt)\b", low):
        return "likelihood"
    if re.search(r"\b(mostly|rarely|meistens|selten|oftast|sjaldan)\b", low):
        return "frequency"
    return "certainty"


def _scale_spec(language: str, scale: str) -> tuple[tuple[str, str], str]:
    """Options and instruction for a scale, from our template set of the language (English if none)."""
    try:
        spec = next(iter(template_sets(language).values())).scales[scale]
    except (ValueError, KeyError, StopIteration):
        spec = next(iter(template_sets("en").values())).scales[scale]
    options = spec["options"]
    return (str(options[0]), str(options[1])), str(spec["instruction"])


def _with_instruction(text: str, options: tuple[str, str], instruction: str) -> str:
    # Keep a dataset's own answer instruction when it already names both options.
    if all(o.lower() in text.lower() for o in options):
        return text
    return compose(None, text, instruction)


def import_dataset(
    path: Path,
    descriptors_path: Path | None = None,
    *,
    fmt: str | None = None,
    language: str = "en",
    scale: str | None = None,
    action: str = "positive",
) -> list[Prompt]:
    """Prompts from a published dataset file, in prompt sets of none / positive / negative."""
    table = _read_table(path)
    fmt = fmt or detect_format(table)
    if fmt not in ("raj", "rows"):
        raise DatasetImportError(f"unknown import format {fmt!r}; valid: raj, rows")
    if scale is not None and scale not in SCALES:
        raise DatasetImportError(f"unknown scale {scale!r}; valid: {', '.join(SCALES)}")
    given = read_descriptors(descriptors_path) if descriptors_path else None
    if fmt == "raj":
        return _import_raj(path, table, given, language, scale)
    if given is None:
        raise DatasetImportError(f"{path}: the 'rows' format needs a descriptor list (--descriptors FILE)")
    return _import_rows(path, table, given, language, scale, action)


def _prompt(text: str, language: str, options: tuple[str, str], meta: dict[str, object]) -> Prompt:
    return Prompt(probe=NAME, language=language, messages=(Message(role="user", content=text),),
                  options=options, meta=meta)


def _import_raj(path: Path, table: pd.DataFrame, given: list[tuple[str, str]] | None,
                language: str, scale: str | None) -> list[Prompt]:
    missing = [c for c in RAJ_COLUMNS if c not in table.columns]
    if missing:
        raise DatasetImportError(f"{path}: missing column(s) {', '.join(missing)}; expected {', '.join(RAJ_COLUMNS)}")
    hb = holistic_bias_descriptors("v1.0")
    prompts: list[Prompt] = []
    for i, row in table.iterrows():
        line = int(str(i)) + 2  # header is line 1
        texts = {"none": row["base_prompt"], "positive": row["positive_contact"], "negative": row["negative_contact"]}
        for contact, text in texts.items():
            if PLACEHOLDER not in str(text):
                raise DatasetImportError(f"{path}: row {line}: column for {contact} contact has no {PLACEHOLDER}")
        action = str(row["action_type"]).strip().lower()
        if action not in ("positive", "negative"):
            raise DatasetImportError(f"{path}: row {line}: action_type {row['action_type']!r} is not positive/negative")
        row_scale = scale or infer_scale(str(row["base_prompt"]))
        options, instruction = _scale_spec(language, row_scale)
        if given is not None:
            pairs = given
        else:
            pairs = [(d.key, d.label) for d in hb if d.axis == row["axis"] and d.bucket == row["bucket"]]
            if not pairs:
                raise DatasetImportError(
                    f"{path}: row {line}: no HolisticBias descriptors for axis {row['axis']!r} bucket "
                    f"{row['bucket']!r}; give --descriptors"
                )
        for descriptor, group in pairs:
            meta_base = {
                "scale": row_scale, "action": action, "verb": None,
                "scenario": str(row["scenario"]).strip().lower(), "principle": str(row["key_principle"]).strip(),
                "axis": row["axis"], "bucket": row["bucket"], "descriptor": descriptor, "group": group,
                "template_set": f"import:{path.name}", "template_id": str(row["id"]), "source": str(path.name),
            }
            set_id = stable_hash(meta_base, length=16)
            for contact, text in texts.items():
                body = _with_instruction(str(text).replace(PLACEHOLDER, descriptor), options, instruction)
                prompts.append(_prompt(body, language, options, {**meta_base, "contact": contact, "set_id": set_id}))
    return prompts


def _import_rows(path: Path, table: pd.DataFrame, given: list[tuple[str, str]], language: str,
                 scale: str | None, action: str) -> list[Prompt]:
    column = table.columns[0]
    texts = [str(v).strip() for v in table[column].tolist()]
    if len(texts) % 3 != 0:
        raise DatasetImportError(
            f"{path}: {len(texts)} question rows is not a multiple of 3 (none / positive / negative per template); "
            f"the last template starts at row {len(texts) - len(texts) % 3 + 2}"
        )
    prompts: list[Prompt] = []
    for t in range(0, len(texts), 3):
        block = texts[t : t + 3]
        for offset, text in enumerate(block):
            if PLACEHOLDER not in text:
                raise DatasetImportError(f"{path}: row {t + offset + 2}: no {PLACEHOLDER} placeholder in {text!r}")
        row_scale = scale or infer_scale(block[0])
        options, instruction = _scale_spec(language, row_scale)
        for descriptor, group in given:
            meta_base = {
                "scale": row_scale, "action": action, "verb": None, "scenario": None, "principle": None,
                "axis": "imported", "bucket": None, "descriptor": descriptor, "group": group,
                "template_set": f"import:{path.name}", "template_id": f"row{t + 2}", "source": str(path.name),
            }
            set_id = stable_hash(meta_base, length=16)
            for contact, text in zip(("none", "positive", "negative"), block, strict=True):
                body = _with_instruction(text.replace(PLACEHOLDER, descriptor), options, instruction)
                prompts.append(_prompt(body, language, options, {**meta_base, "contact": contact, "set_id": set_id}))
    return prompts


__all__ = ["DatasetImportError", "import_dataset", "read_descriptors"]
