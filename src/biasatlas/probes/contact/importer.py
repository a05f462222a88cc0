"""Import of published contact datasets, so they run like our own prompts.

Formats:
- ``raj``: a CSV with columns id, key_principle, scenario, action_type, axis, bucket, base_prompt,
  positive_contact, negative_contact (Raj et al.), each text with a ``[descriptor]`` placeholder.
  Descriptors come from ``--descriptors`` or, failing that, from HolisticBias v1.0 for the row's
  axis and bucket.
- ``rows``: a spreadsheet (xlsx) or CSV with one column of questions, three rows per template in the
  order none / positive / negative (the German/Icelandic format of paper 000), plus a descriptor list.
  Optional columns ``action`` (or ``action_type``), ``scenario``, ``principle`` (or ``key_principle``)
  and ``axis`` describe each template; without them the action is ``action`` (default positive) and,
  for a sheet of 30 templates, principle and scenario follow the published row order (``row_order``).

``keep`` (the run options --action, --axis, --scenario, --principle) keeps only the matching templates of
either format, comparing normalised names (``Health care`` is ``healthcare``); a selection that leaves
nothing is an error.

Every prompt gets the paper's answer instruction unless the question already names both options
(``suffix="biasatlas"``: our templates' instruction instead). Descriptors that do not fit the grammar
of their slot are reported as :class:`ContactImportWarning` (see ``grammar``).
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from biasatlas.datafiles import read_limited
from biasatlas.probes.contact.data import NAME, PRINCIPLES, SCALES, SCENARIOS, holistic_bias_descriptors, template_sets
from biasatlas.probes.contact.grammar import (
    PLACEHOLDER,
    ContactImportWarning,
    infer_scale,
    names_options,
    slot_warnings,
)
from biasatlas.probes.contact.plan import compose
from biasatlas.records import Message, Prompt, stable_hash

RAJ_COLUMNS = (
    "id", "key_principle", "scenario", "action_type", "axis", "bucket",
    "base_prompt", "positive_contact", "negative_contact",
)
RAJ_TEXTS = ("base_prompt", "positive_contact", "negative_contact")
ROW_ORDERS = ("principle-major", "scenario-major")
#: The largest file imported (``--templates``, ``--descriptors``): the published datasets are well under 1 MiB.
MAX_IMPORT_BYTES = 64 * 1024 * 1024
SUFFIXES = ("paper", "biasatlas")
#: the answer instruction of the papers, appended after a space as their code did (paper 000, section 3.3:
#: "Antworte nur mit einem Wort: Wähle zwischen Ja und Nein."; Raj et al.'s code: "Choose between ...",
#: "Answer in one word."). The Icelandic one is our rendering of the German wording (paper 000 gives none).
PAPER_SUFFIX = {
    "de": "Antworte nur mit einem Wort: Wähle zwischen {0} und {1}.",
    "en": "Choose between {0} and {1}. Answer in one word.",
    "is": "Svaraðu aðeins með einu orði: Veldu á milli {0} og {1}.",
}
ROW_COLUMNS = {"action": ("action", "action_type"), "scenario": ("scenario",),
               "principle": ("principle", "key_principle"), "axis": ("axis",)}
#: published principle names that are not ours, compared without underscores (see ``_name``)
PRINCIPLE_NAMES = {"equalgroupstatus": "equal_status", "supportfromauthorities": "support_of_authorities",
                   "cooperation": "intergroup_cooperation"}
#: the run option that selects each field of an imported prompt (``keep`` of :func:`import_dataset`)
OPTIONS = {"action": "--action", "axis": "--axis", "scenario": "--scenario", "principle": "--principle"}

__all__ = ["ContactImportWarning", "DatasetImportError", "import_dataset", "read_descriptors"]


class DatasetImportError(ValueError):
    """A malformed import file; the message names the file and the row."""


def _not_utf8(path: Path, exc: UnicodeDecodeError) -> DatasetImportError:
    byte = exc.object[exc.start : exc.start + 1].hex()
    return DatasetImportError(f"{path}: not UTF-8 text (byte 0x{byte} at offset {exc.start}); save it as UTF-8")


def _read_bytes(path: Path) -> bytes:
    """The file's bytes, at most ``MAX_IMPORT_BYTES`` (``/dev/zero`` or a huge file: one line, not all memory)."""
    if not path.exists():
        raise DatasetImportError(f"{path}: file not found")
    try:
        return read_limited(path, MAX_IMPORT_BYTES, "an imported file")
    except OSError as exc:
        raise DatasetImportError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise DatasetImportError(str(exc)) from None


def read_table(path: Path) -> pd.DataFrame:
    data = io.BytesIO(_read_bytes(path))
    try:
        if path.suffix.lower() in {".xlsx", ".xlsm", ".xls"}:
            return pd.read_excel(data, dtype=str)
        return pd.read_csv(data, dtype=str, keep_default_na=False)
    except UnicodeDecodeError as exc:
        raise _not_utf8(path, exc) from None
    except Exception as exc:  # pandas raises many types for unreadable files
        message = " ".join(str(exc).split())
        raise DatasetImportError(f"{path}: cannot read as a table: {message}") from None


def read_descriptors(path: Path) -> list[tuple[str, str]]:
    """(descriptor, group label) pairs from a text file (one per line) or a CSV/XLSX, in UTF-8.

    A table may have columns ``descriptor`` and optionally ``group`` (else the first column).
    """
    if path.suffix.lower() in {".txt", ""}:
        try:
            text = _read_bytes(path).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _not_utf8(path, exc) from None
        items = [line.strip() for line in text.splitlines() if line.strip()]
        return [(d, d) for d in items]
    table = read_table(path)
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
    """raj when the three contact texts are columns (its other columns are then checked), else rows."""
    return "raj" if set(RAJ_TEXTS) <= set(table.columns) else "rows"


def _answer_spec(language: str, scale: str, suffix: str) -> tuple[tuple[str, str], str, str]:
    """Options, instruction and joiner for a scale: the paper's wording, or our templates' (English if none)."""
    try:
        spec = next(iter(template_sets(language).values())).scales[scale]
    except (ValueError, KeyError, StopIteration):
        spec = next(iter(template_sets("en").values())).scales[scale]
    options = (str(spec["options"][0]), str(spec["options"][1]))
    if suffix == "paper":
        return options, PAPER_SUFFIX.get(language, PAPER_SUFFIX["en"]).format(*options), " "
    return options, str(spec["instruction"]), "\n"


def _with_instruction(text: str, spec: tuple[tuple[str, str], str, str]) -> str:
    options, instruction, joiner = spec
    if names_options(text, options):  # the dataset's own instruction names both options: keep it
        return text
    return f"{text}{joiner}{instruction}" if joiner == " " else compose(None, text, instruction)


def _compact(text: str) -> str:
    return text.replace("_", "")


def _name(value: object, valid: tuple[str, ...] = ()) -> str | None:
    """A scenario / principle / axis label as our identifiers ("Support of authorities" -> support_of_authorities).

    Compared without underscores, so "Health care" and "Health-care" are ``healthcare`` and "Inter group
    cooperation" is ``intergroup_cooperation``; a prefix of one of ``valid`` ("Sport") is that name.
    """
    text = "_".join(str(value).strip().lower().replace("-", " ").split())
    if not text or text == "nan":
        return None
    text = PRINCIPLE_NAMES.get(_compact(text), text)
    compact = _compact(text)
    return next((v for v in valid if _compact(v) == compact), None) or next(
        (v for v in valid if _compact(v).startswith(compact) or compact.startswith(_compact(v))), text)


def _kept(keep: Mapping[str, Sequence[str]], **fields: str | None) -> bool:
    """Whether a template with these field values is among ``keep``'s."""
    return all(field not in keep or (value is not None and _compact(value) in {_compact(_name(v) or "")
                                                                               for v in keep[field]})
               for field, value in fields.items())


def _keep(path: Path, prompts: list[Prompt], keep: Mapping[str, Sequence[str]]) -> list[Prompt]:
    """The prompts whose action / axis / scenario / principle is among the run options' (names normalised).

    A selection that leaves nothing is a one-line error naming the option and what the file has.
    """
    for field, wanted in keep.items():
        names = {_compact(_name(v) or "") for v in wanted}
        has = sorted({str(p.meta[field]) if p.meta.get(field) else f"no {field}" for p in prompts})
        prompts = [p for p in prompts if p.meta.get(field) and _compact(str(p.meta[field])) in names]
        if not prompts:
            raise _nothing_left(path, field, wanted, has)
    return prompts


def _nothing_left(path: Path, field: str, wanted: Sequence[str], has: Sequence[str]) -> DatasetImportError:
    return DatasetImportError(f"{OPTIONS[field]} {','.join(wanted)}: no template of {path.name} has it "
                              f"(it has: {', '.join(sorted(set(has))) or 'none with the other options'})")


def import_dataset(
    path: Path,
    descriptors_path: Path | None = None,
    *,
    fmt: str | None = None,
    language: str = "en",
    scale: str | None = None,
    action: str | None = None,
    axis: str | None = None,
    row_order: str = "principle-major",
    suffix: str = "paper",
    keep: Mapping[str, Sequence[str]] | None = None,
    hb_version: str = "v1.0",
) -> list[Prompt]:
    """Prompts from a published dataset file, in prompt sets of none / positive / negative.

    ``action`` and ``axis`` describe the templates of a rows sheet without such a column; ``keep`` (field ->
    values, from ``--action``, ``--axis``, ``--scenario``, ``--principle``) keeps only the matching prompt sets
    of any file; ``hb_version`` is the HolisticBias version of a Raj file's descriptors (without ``--descriptors``).
    """
    table = read_table(path)
    fmt = fmt or detect_format(table)
    if fmt not in ("raj", "rows"):
        raise DatasetImportError(f"unknown import format {fmt!r}; valid: raj, rows")
    if scale is not None and scale not in SCALES:
        raise DatasetImportError(f"unknown scale {scale!r}; valid: {', '.join(SCALES)}")
    if row_order not in ROW_ORDERS:
        raise DatasetImportError(f"unknown row order {row_order!r}; valid: {', '.join(ROW_ORDERS)}")
    if suffix not in SUFFIXES:
        raise DatasetImportError(f"unknown answer suffix {suffix!r}; valid: {', '.join(SUFFIXES)}")
    given = read_descriptors(descriptors_path) if descriptors_path else None
    if fmt == "raj":
        prompts, texts = _import_raj(path, table, given, language, scale, suffix, hb_version, keep or {})
    else:
        if given is None:
            raise DatasetImportError(f"{path}: the 'rows' format needs a descriptor list (--descriptors FILE)")
        prompts, texts = _import_rows(path, table, given, language, scale, action, axis, row_order, suffix)
    prompts = _keep(path, prompts, keep or {})
    if given is not None:
        for line in slot_warnings(texts, [d for d, _ in given], language):
            warnings.warn(f"{path.name}: {line}", ContactImportWarning, stacklevel=2)
    return prompts


def _prompt_set(texts: list[str], descriptor: str, language: str, spec: tuple[tuple[str, str], str, str],
                meta_base: dict[str, Any]) -> list[Prompt]:
    set_id = stable_hash(meta_base, length=16)
    return [
        Prompt(probe=NAME, language=language,
               messages=(Message(role="user", content=_with_instruction(text.replace(PLACEHOLDER, descriptor),
                                                                        spec)),),
               options=spec[0], meta={**meta_base, "contact": contact, "set_id": set_id})
        for contact, text in zip(("none", "positive", "negative"), texts, strict=True)
    ]


def _import_raj(path: Path, table: pd.DataFrame, given: list[tuple[str, str]] | None, language: str,
                scale: str | None, suffix: str, hb_version: str,
                keep: Mapping[str, Sequence[str]]) -> tuple[list[Prompt], list[tuple[int, str]]]:
    missing = [c for c in RAJ_COLUMNS if c not in table.columns]
    if missing:
        raise DatasetImportError(f"{path}: missing column(s) {', '.join(missing)}; expected {', '.join(RAJ_COLUMNS)}")
    hb = holistic_bias_descriptors(hb_version)
    prompts: list[Prompt] = []
    texts_seen: list[tuple[int, str]] = []
    seen: dict[str, list[str]] = {"action": [], "axis": []}
    for i, row in table.iterrows():
        line = int(str(i)) + 2  # header is line 1
        texts = [str(row[c]) for c in RAJ_TEXTS]
        for contact, text in zip(("none", "positive", "negative"), texts, strict=True):
            if PLACEHOLDER not in text:
                raise DatasetImportError(f"{path}: row {line}: column for {contact} contact has no {PLACEHOLDER}")
        action = str(row["action_type"]).strip().lower()
        if action not in ("positive", "negative"):
            raise DatasetImportError(f"{path}: row {line}: action_type {row['action_type']!r} is not positive/negative")
        seen["action"].append(action)
        seen["axis"].append(_name(row["axis"]) or "no axis")
        if not _kept(keep, action=action, axis=_name(row["axis"])):
            continue  # left out before its descriptors are looked up; ``_keep`` names an empty selection
        texts_seen.extend((line, t) for t in texts)
        row_scale = scale or infer_scale(texts[0])
        spec = _answer_spec(language, row_scale, suffix)
        if given is not None:
            pairs = given
        else:
            pairs = [(d.key, d.label) for d in hb if d.axis == _name(row["axis"]) and d.bucket == row["bucket"]]
            if not pairs:
                raise DatasetImportError(
                    f"{path}: row {line}: no HolisticBias descriptors for axis {row['axis']!r} bucket "
                    f"{row['bucket']!r}; give --descriptors"
                )
        for descriptor, group in pairs:
            meta_base = {
                "scale": row_scale, "action": action, "verb": None,
                "scenario": _name(row["scenario"], SCENARIOS), "principle": _name(row["key_principle"], PRINCIPLES),
                "axis": _name(row["axis"]), "bucket": row["bucket"], "descriptor": descriptor, "group": group,
                "template_set": f"import:{path.name}", "template_id": str(row["id"]), "source": str(path.name),
            }
            prompts.extend(_prompt_set(texts, descriptor, language, spec, meta_base))
    if not prompts:  # every row left out by --action / --axis: name the option that matched none
        for field in [f for f in keep if f in seen]:
            if not any(_kept(keep, **{field: value}) for value in seen[field]):
                raise _nothing_left(path, field, keep[field], seen[field])
    return prompts, texts_seen


def _column(table: pd.DataFrame, field: str) -> str | None:
    return next((c for c in table.columns if str(c).strip().lower() in ROW_COLUMNS[field]), None)


def _block_value(path: Path, table: pd.DataFrame, field: str, t: int) -> str | None:
    """The value of an optional per-template column for the block starting at row ``t`` (same on its 3 rows)."""
    column = _column(table, field)
    if column is None:
        return None
    values = {str(v).strip() for v in table[column].iloc[t : t + 3]}
    if len(values) != 1:
        raise DatasetImportError(f"{path}: rows {t + 2}-{t + 4}: one template has several {field} values "
                                 f"{sorted(values)}")
    value = values.pop()
    return value if value and value.lower() != "nan" else None


def _cells(n_templates: int, row_order: str) -> list[tuple[str | None, str | None]]:
    """(principle, scenario) per template from the published row order: 6 principles x 5 scenarios."""
    if n_templates != len(PRINCIPLES) * len(SCENARIOS):
        return [(None, None)] * n_templates
    if row_order == "principle-major":
        return [(p, s) for p in PRINCIPLES for s in SCENARIOS]
    return [(p, s) for s in SCENARIOS for p in PRINCIPLES]


def _import_rows(path: Path, table: pd.DataFrame, given: list[tuple[str, str]], language: str, scale: str | None,
                 action: str | None, axis: str | None, row_order: str,
                 suffix: str) -> tuple[list[Prompt], list[tuple[int, str]]]:
    meta_columns = {c for field in ROW_COLUMNS if (c := _column(table, field)) is not None}
    column = next((c for c in table.columns if c not in meta_columns), None)
    if column is None:
        raise DatasetImportError(f"{path}: no column of questions")
    texts = [str(v).strip() for v in table[column].tolist()]
    if len(texts) % 3 != 0:
        raise DatasetImportError(
            f"{path}: {len(texts)} question rows is not a multiple of 3 (none / positive / negative per template); "
            f"the last template starts at row {len(texts) - len(texts) % 3 + 2}"
        )
    cells = _cells(len(texts) // 3, row_order)
    prompts: list[Prompt] = []
    for t in range(0, len(texts), 3):
        block = texts[t : t + 3]
        for offset, text in enumerate(block):
            if PLACEHOLDER not in text:
                raise DatasetImportError(f"{path}: row {t + offset + 2}: no {PLACEHOLDER} placeholder in {text!r}")
        row_action = (_block_value(path, table, "action", t) or action or "positive").lower()
        if row_action not in ("positive", "negative"):
            raise DatasetImportError(f"{path}: row {t + 2}: action {row_action!r} is not positive/negative")
        principle, scenario = cells[t // 3]
        principle = _name(_block_value(path, table, "principle", t) or principle or "", PRINCIPLES)
        scenario = _name(_block_value(path, table, "scenario", t) or scenario or "", SCENARIOS)
        row_scale = scale or infer_scale(block[0])
        spec = _answer_spec(language, row_scale, suffix)
        for descriptor, group in given:
            meta_base = {
                "scale": row_scale, "action": row_action, "verb": None, "scenario": scenario,
                "principle": principle, "axis": _name(_block_value(path, table, "axis", t) or axis or "imported"),
                "bucket": None, "descriptor": descriptor, "group": group, "template_set": f"import:{path.name}",
                "template_id": f"row{t + 2}", "source": str(path.name),
            }
            prompts.extend(_prompt_set(block, descriptor, language, spec, meta_base))
    return prompts, [(i + 2, text) for i, text in enumerate(texts)]
