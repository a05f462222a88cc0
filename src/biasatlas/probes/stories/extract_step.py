"""The extraction step: one extraction prompt per usable story, asked of every extractor model."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from biasatlas.probes.stories.extract import extraction_text, json_schema, vocabularies
from biasatlas.probes.stories.plan import EXTRACT_PROBE
from biasatlas.probes.stories.read import story_rows
from biasatlas.probes.stories.seeds import load_seeds
from biasatlas.records import GenerationSettings, Message, Prompt
from biasatlas.store import Store

if TYPE_CHECKING:
    from biasatlas.backends.base import Backend
    from biasatlas.backends.options import BackendOptions
    from biasatlas.runner import RunTotals


def extraction_prompts(stories: pd.DataFrame, template: str | None = None) -> list[Prompt]:
    """One extraction prompt per usable story (answered, not empty, not a refusal)."""
    english = load_seeds("en")
    prompts = []
    usable = stories[(stories["status"] == "answered") & ~stories["refusal"] & ~stories["empty"]]
    for row in usable.itertuples(index=False):
        dims = vocabularies(english, exclude=[str(row.base_attribute)])
        text = extraction_text(template or english.extraction_template, str(row.text), dims)
        prompts.append(
            Prompt(
                probe=EXTRACT_PROBE,
                language=str(row.language),
                messages=(Message(role="user", content=text),),
                meta={
                    "story_prompt_id": row.prompt_id,
                    "story_sample": int(str(row.sample_index)),
                    "generator": row.model,
                    "base_attribute": row.base_attribute,
                    "base_value": row.base_value,
                    "scenario_key": row.scenario_key,
                    # sent as response_format by servers that support JSON schemas
                    "response_schema": json_schema(dims),
                },
            )
        )
    return prompts


def story_counts(stories: pd.DataFrame) -> dict[str, int]:
    """Answered, refusal, empty and cut stories of a frame from :func:`story_rows`."""
    if stories.empty:
        return {"answered": 0, "refusals": 0, "empty": 0, "cut_at_limit": 0}
    answered = stories["status"] == "answered"
    cut = answered & (stories["finish_reason"] == "length") if "finish_reason" in stories.columns else answered & False
    return {
        "answered": int(answered.sum()),
        "refusals": int(stories["refusal"].sum()),
        "empty": int(stories["empty"].sum()),
        # stories that ended at the token limit: cut mid-story, yet extracted like the others
        "cut_at_limit": int(cut.sum()),
    }


def run_extraction(
    study: str | Path,
    prompts: Sequence[Prompt],
    generator: Backend,
    generator_spec: BackendOptions,
    extractors: Sequence[str],
    max_tokens: int,
    *,
    progress: bool = False,
    on_totals: Callable[[RunTotals], None] | None = None,
) -> tuple[dict[str, int], list[RunTotals]]:
    """Extract the profiles of the stories ``generator`` wrote for ``prompts``, with each extractor.

    An extractor named like the generator's model spec reuses the open generator (it stays
    loaded); any other is opened with the generator's backend options and closed after its step.
    Refusals and empty stories are not extracted. Returns the stories' counts and one RunTotals
    per extractor (none when no story is usable).
    """
    from biasatlas.runner import run_plan

    with Store(study) as store:
        frame = story_rows(store)
        if frame.empty:
            return story_counts(frame), []
        wanted = {p.id for p in prompts}
        mine = frame[(frame["model"] == generator.id) & frame["prompt_id"].isin(wanted)]
        counts = story_counts(mine)
        ex_prompts = extraction_prompts(mine)
        counts["to_extract"] = len(ex_prompts)
        if not ex_prompts:
            return counts, []
        settings = GenerationSettings(max_tokens=max_tokens, temperature=0.0)
        config: dict[str, Any] = {"step": "extraction", "generator": generator.id}
        done: list[RunTotals] = []
        for spec in extractors:
            same = spec == generator_spec.model
            backend = generator if same else generator_spec.model_copy(update={"model": spec}).open()
            try:
                totals = run_plan(ex_prompts, backend, store, settings, config=config, progress=progress)
            finally:
                if not same:
                    backend.close()
            answers = store.frame(probe=EXTRACT_PROBE, run_ids=[totals.run_id])
            totals.info["cut_at_limit"] = story_counts(answers.assign(refusal=False, empty=False))["cut_at_limit"]
            done.append(totals)
            if on_totals is not None:
                on_totals(totals)
    return counts, done
