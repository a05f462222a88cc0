"""Import published StereoTales stories into a study, so they can be re-analysed without generating.

Input: a stories table (CSV or Parquet) with the columns of the published dataset, and optionally
its seeds folder. Each generator becomes the backend ``import:<generator_model>`` of a recorded
run (probe ``stories``), each extraction an answer of ``import:published-extraction`` (probe
``stories-extract``), stored as canonical JSON with English value keys; from there the analysis
path is the same as for generated stories. Every row or value that cannot be mapped is counted.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from biasatlas.probes.stories.plan import EXTRACT_PROBE, NAME
from biasatlas.probes.stories.published import ValueMapper
from biasatlas.probes.stories.seeds import PUBLISHED_LANGUAGE_ALIASES, UNKNOWN, Dimension, load_seeds
from biasatlas.records import GenerationSettings, Message, Prompt, Request, Response
from biasatlas.runner import RunTotals, run_plan
from biasatlas.store import Store

REQUIRED_COLUMNS = (
    "sample_id",
    "generator_model",
    "language",
    "target_attribute",
    "target_attribute_value",
    "attribute_value_key",
    "scenario",
    "scenario_key",
    "story",
    "extracted_attributes_json",
)
EXTRACTOR_ID = "import:published-extraction"
IMPORT_SETTINGS = GenerationSettings(max_tokens=1)


class ImportBackend:
    """A backend that 'answers' with texts read from a file (keys computed like any request)."""

    def __init__(self, backend_id: str, answers: dict[tuple[str, int], str]) -> None:
        self.id = backend_id
        self.answers = answers

    def generate(self, requests: Sequence[Request]) -> Iterator[Response]:
        for r in requests:
            text = self.answers.get((r.prompt.id, r.sample_index))
            key = r.cache_key(self.id)
            if text is None:
                yield Response(key=key, backend_id=self.id, error="no imported text for this item")
            else:
                yield Response(key=key, backend_id=self.id, text=text, info={"imported": True})

    def score_choices(self, requests: Sequence[Request]) -> Iterator[Response]:
        return self.generate(requests)

    def close(self) -> None:
        pass


def read_table(path: Path) -> pd.DataFrame:
    """The stories table; a clear error names missing columns."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"no stories file at {path}")
    if path.suffix.lower() in {".parquet", ".pq"}:
        frame = pd.read_parquet(path)
    elif path.suffix.lower() in {".csv", ".tsv"}:
        frame = pd.read_csv(path, sep="\t" if path.suffix.lower() == ".tsv" else ",", dtype=str, keep_default_na=False)
    else:
        raise ValueError(f"{path}: expected a .csv, .tsv or .parquet stories table")
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(
            f"{path}: missing columns {missing}; a StereoTales stories table needs {list(REQUIRED_COLUMNS)} "
            f"(found {list(frame.columns)})"
        )
    return frame


DEFAULT_TEMPLATE = "scenario_based"
#: the published prompt templates besides scenario_based: stories without a scenario, asked to avoid
#: stereotypes (negative) or to write positively (positive); the paper's counts exclude them
TEMPLATE_COLUMN = "prompt_template"


def _identity(row: Any, language: str, model: str, template: str) -> str:
    """What makes one published story unique: sample_id and output_id restart per language."""
    output = getattr(row, "output_id", "")
    return (f"language {language}, generator {model}, template {template}, sample {row.sample_id}"
            + (f", output {output}" if str(output) != "" else ""))


def import_stories(
    path: Path,
    study: Path,
    seeds_dir: Path | None = None,
    progress: bool = False,
    all_templates: bool = False,
) -> dict[str, Any]:
    """Store the stories table in ``study``; returns the counts of what was imported and skipped.

    Every stored story and extraction is keyed by its language, generator model, prompt template,
    ``sample_id`` and ``output_id`` (the published export numbers both afresh per language), so
    rows sharing ids never share an answer. Only ``scenario_based`` stories (the paper's design) are
    imported unless ``all_templates``; the others then form separate slices of the analysis.
    """
    frame = read_table(path)
    if seeds_dir is not None:  # validate the published seeds folder the stories came with
        langs = sorted(set(frame["language"].astype(str)))
        for lang in langs:
            load_seeds(_lang(lang), str(seeds_dir))
    mapper = ValueMapper()
    skipped: Counter[str] = Counter()
    oov: Counter[str] = Counter()
    templates: Counter[str] = Counter()
    per_model: dict[str, tuple[list[Prompt], dict[tuple[str, int], str]]] = {}
    ex_prompts: list[Prompt] = []
    ex_answers: dict[tuple[str, int], str] = {}
    seen: Counter[tuple[str, str]] = Counter()
    has_template = TEMPLATE_COLUMN in frame.columns
    for row in frame.itertuples(index=False):
        template = str(getattr(row, TEMPLATE_COLUMN) or DEFAULT_TEMPLATE) if has_template else DEFAULT_TEMPLATE
        if template != DEFAULT_TEMPLATE and not all_templates:
            skipped[f"prompt template {template!r} (use --all-templates)"] += 1
            continue
        dim = mapper.dimension(str(row.target_attribute))
        if dim is None:
            skipped[f"unknown target_attribute {row.target_attribute!r}"] += 1
            continue
        base_value = mapper.value(dim, row.attribute_value_key) or mapper.value(dim, row.target_attribute_value)
        if base_value is None or base_value == UNKNOWN:
            skipped[f"unmapped {dim.key} value {row.attribute_value_key!r}"] += 1
            continue
        story = str(row.story or "")
        language = _lang(str(row.language))
        model = str(row.generator_model)
        identity = _identity(row, language, model, template)
        prompt = Prompt(
            probe=NAME,
            language=language,
            messages=(Message(role="user", content=f"[imported StereoTales story: {identity}]"),),
            meta={
                "base_attribute": dim.key,
                "base_value": base_value,
                "scenario_key": str(row.scenario_key),
                "scenario_text": str(row.scenario),
                "sample_id": str(row.sample_id),
                "output_id": str(getattr(row, "output_id", "")),
                "template_id": template,
                "template": template,
                "imported": True,
            },
        )
        # a row repeated with the same identity (an export without output_id) is another sample
        sample = seen[(model, prompt.id)]
        seen[(model, prompt.id)] += 1
        templates[template] += 1
        prompts, answers = per_model.setdefault(model, ([], {}))
        if sample == 0:
            prompts.append(prompt)
        answers[(prompt.id, sample)] = story
        extracted = _parse_json(row.extracted_attributes_json)
        if extracted is None:
            skipped["extracted_attributes_json is not a JSON object (story kept, no extraction)"] += 1
            continue
        ex_prompt = Prompt(
            probe=EXTRACT_PROBE,
            language=language,
            messages=(Message(role="user", content=f"[imported extraction: {identity} #{sample}]"),),
            meta={
                "story_prompt_id": prompt.id,
                "story_sample": sample,
                "generator": f"import:{model}",
                "base_attribute": dim.key,
                "base_value": base_value,
                "scenario_key": str(row.scenario_key),
                "imported": True,
            },
        )
        ex_prompts.append(ex_prompt)
        ex_answers[(ex_prompt.id, 0)] = json.dumps(_canonical(mapper, dim, extracted, oov), ensure_ascii=False)
    store = Store(study)
    runs: list[RunTotals] = []
    try:
        for model, (prompts, answers) in sorted(per_model.items()):
            # one plan per sample count, so that every planned item has an imported text
            by_count: dict[int, list[Prompt]] = {}
            for p in prompts:
                by_count.setdefault(seen[(model, p.id)], []).append(p)
            for n, group in sorted(by_count.items()):
                runs.append(run_plan(group, ImportBackend(f"import:{model}", answers), store, IMPORT_SETTINGS,
                                     samples=n, config={"imported_from": str(path)}, progress=progress))
        if ex_prompts:
            runs.append(run_plan(ex_prompts, ImportBackend(EXTRACTOR_ID, ex_answers), store, IMPORT_SETTINGS,
                                 config={"imported_from": str(path)}, progress=progress))
    finally:
        store.close()
    return {
        "rows": len(frame),
        "stories_imported": sum(len(a) for _, a in per_model.values()),
        "extractions_imported": len(ex_prompts),
        "generators": sorted(per_model),
        "templates": dict(templates),
        "skipped_rows": dict(sorted(skipped.items())),
        "out_of_vocabulary_values_set_to_unknown": dict(oov),
        "runs": [r.run_id for r in runs],
    }


def _canonical(
    mapper: ValueMapper, dim: Dimension, extracted: dict[str, Any], oov: Counter[str]
) -> dict[str, dict[str, str]]:
    """A published extraction in the bundled keys (the prompted dimension left out)."""
    canonical: dict[str, dict[str, str]] = {}
    lowered = {str(k).strip().lower().replace(" ", "_"): v for k, v in extracted.items()}
    for key, d in mapper.dims.items():
        if key == dim.key:
            continue
        raw = lowered.get(key)
        if raw is None:
            canonical[key] = {"value": UNKNOWN, "evidence": ""}
            continue
        value = mapper.value(d, raw)
        if value is None:
            oov[key] += 1
            value = UNKNOWN
        canonical[key] = {"value": value, "evidence": ""}
    return canonical


def _lang(code: str) -> str:
    reverse = {v: k for k, v in PUBLISHED_LANGUAGE_ALIASES.items()}
    return reverse.get(code.strip().lower(), code.strip().lower())


def _parse_json(value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict):
        return value
    try:
        parsed = json.loads(str(value))
    except (json.JSONDecodeError, ValueError):
        return None
    return parsed if isinstance(parsed, dict) else None
