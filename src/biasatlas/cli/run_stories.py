"""`biasatlas run stories`, `biasatlas stories import|judge|ratings`, `biasatlas associations`."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from biasatlas.backends.base import Backend
from biasatlas.cli.app import app, run_app
from biasatlas.cli.common import (
    AdapterOpt,
    BaseUrlOpt,
    BatchOpt,
    ConcurrencyOpt,
    KeyEnvOpt,
    LimitOpt,
    ModelOpt,
    PlanOnlyOpt,
    console,
    execute,
    fail,
    open_backend,
    plan_summary,
    print_plan,
)
from biasatlas.records import GenerationSettings, Prompt, Request, Response
from biasatlas.store import DB_NAME, Store

# The probe modules (scipy, pandas) are imported inside the commands: every `biasatlas` call
# imports this module, and start-up time counts for fast HTTP runs.

stories_app = typer.Typer(help="Story probe extras: import published stories, judge harm, human ratings.",
                          no_args_is_help=True)
app.add_typer(stories_app, name="stories")

StudyReq = Annotated[Path, typer.Option("--study", "-s", help="Study directory.")]


@run_app.command("stories")
def run_stories(
    study: StudyReq,
    model: ModelOpt = "smollm2",
    lang: Annotated[
        list[str] | None, typer.Option("--lang", help="Language(s): en fr es it pt nl uk ar hi zh.")
    ] = None,
    stories_per_prompt: Annotated[int, typer.Option("--stories-per-prompt", help="Stories (samples) per prompt.")] = 1,
    extractor: Annotated[
        list[str] | None, typer.Option("--extractor", help="Extractor model(s); default: the generator.")
    ] = None,
    temperature: Annotated[float, typer.Option("--temperature", help="Story sampling temperature.")] = 1.0,
    max_tokens: Annotated[int, typer.Option("--max-tokens", help="Story length limit in tokens.")] = 400,
    extract_max_tokens: Annotated[int, typer.Option("--extract-max-tokens", help="Extractor answer limit.")] = 600,
    limit: LimitOpt = None,
    seed: Annotated[int, typer.Option("--seed", help="Sampling seed.")] = 0,
    no_extract: Annotated[bool, typer.Option("--no-extract", help="Generate stories only.")] = False,
    plan_only: PlanOnlyOpt = False,
    batch_size: BatchOpt = None,
    adapter: AdapterOpt = None,
    base_url: BaseUrlOpt = None,
    api_key_env: KeyEnvOpt = "OPENAI_API_KEY",
    concurrency: ConcurrencyOpt = None,
) -> None:
    """Generate stories about a protagonist with one given attribute, then extract their profiles."""
    from biasatlas.probes.stories import probe as stories
    from biasatlas.probes.stories.seeds import SeedError, load_seeds
    langs = [v.strip() for item in (lang or ["en"]) for v in item.split(",") if v.strip()]
    prompts = []
    try:
        for code in langs:
            prompts.extend(stories.build_prompts(load_seeds(code), limit))
    except SeedError as exc:
        fail(str(exc))
    if stories_per_prompt < 1:
        fail("--stories-per-prompt must be at least 1")
    if plan_only:
        plan = plan_summary(prompts, ["base_attribute", "scenario_group"], stories_per_prompt)
        plan["extractors"] = extractor or [model]
        plan["extraction_requests_at_most"] = plan["requests"] * len(plan["extractors"])
        print_plan(plan)
        return
    options: dict[str, Any] = dict(batch_size=batch_size, adapter=adapter, base_url=base_url,
                                   api_key_env=api_key_env, concurrency=concurrency)
    backend = open_backend(model, **options)
    generator_id = backend.id
    # the generator doubles as the default extractor: keep it loaded across both steps
    reuse = not no_extract and model in (extractor or [model])
    gen_backend: Backend = _KeepOpen(backend) if reuse else backend
    settings = GenerationSettings(max_tokens=max_tokens, temperature=temperature, seed=seed)
    try:
        execute(prompts, gen_backend, study, settings, samples=stories_per_prompt,
                config={"languages": langs, "limit": limit})
        if not no_extract:
            _extract(study, prompts, generator_id, model, backend, extractor or [model], extract_max_tokens, options)
    finally:
        if reuse:  # otherwise execute() has closed it already
            backend.close()


class _KeepOpen:
    """A backend whose close() is deferred (execute() closes what it is given)."""

    def __init__(self, inner: Backend) -> None:
        self.inner = inner
        self.id = inner.id

    def generate(self, requests: Sequence[Request]) -> Iterable[Response]:
        return self.inner.generate(requests)

    def score_choices(self, requests: Sequence[Request]) -> Iterable[Response]:
        return self.inner.score_choices(requests)

    def close(self) -> None:
        pass


def _extract(
    study: Path,
    prompts: list[Prompt],
    generator_id: str,
    model: str,
    backend: Backend,
    extractors: list[str],
    max_tokens: int,
    options: dict[str, Any],
) -> None:
    """Second plan: one extraction request per usable story of this run, per extractor."""
    from biasatlas.probes.stories import probe as stories
    with Store(study) as store:
        frame = stories.story_rows(store)
    wanted = {p.id for p in prompts}
    mine = frame[(frame["model"] == generator_id) & frame["prompt_id"].isin(wanted)]
    console.print(
        f"stories: {int((mine['status'] == 'answered').sum())} answered, {int(mine['refusal'].sum())} refusals, "
        f"{int(mine['empty'].sum())} empty (refusals and empty stories are not extracted)"
    )
    ex_prompts = stories.extraction_prompts(mine)
    if not ex_prompts:
        console.print("[yellow]no story to extract[/]")
        return
    for spec in extractors:
        ex_backend: Backend = _KeepOpen(backend) if spec == model else open_backend(spec, **options)
        execute(ex_prompts, ex_backend, study, GenerationSettings(max_tokens=max_tokens, temperature=0.0),
                config={"step": "extraction", "generator": generator_id})


@stories_app.command("import")
def import_cmd(
    stories_file: Annotated[Path, typer.Option("--stories", help="Stories table (CSV or Parquet).")],
    study: StudyReq,
    seeds: Annotated[Path | None, typer.Option("--seeds", help="The published seeds folder, to validate.")] = None,
) -> None:
    """Import published StereoTales stories (and their extractions) into a study."""
    from biasatlas.probes.stories.importer import import_stories
    from biasatlas.probes.stories.seeds import SeedError

    try:
        counts = import_stories(stories_file, study, seeds)
    except (ValueError, SeedError) as exc:
        fail(str(exc))
        return
    sys.stdout.write(json.dumps(counts, indent=2, ensure_ascii=False) + "\n")


@stories_app.command("judge")
def judge_cmd(
    study: StudyReq,
    judge: Annotated[list[str] | None, typer.Option("--judge", help="Judge model(s).")] = None,
    k: Annotated[int, typer.Option("--k", help="Ratings per association and judge.")] = 3,
    temperature: Annotated[float, typer.Option("--temperature", help="Judge sampling temperature.")] = 0.7,
    max_tokens: Annotated[int, typer.Option("--max-tokens")] = 24,
    per_language: Annotated[
        bool, typer.Option("--per-language", help="Also judge per-language associations.")
    ] = False,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    batch_size: BatchOpt = None,
    base_url: BaseUrlOpt = None,
    api_key_env: KeyEnvOpt = "OPENAI_API_KEY",
    concurrency: ConcurrencyOpt = None,
) -> None:
    """Rate every association found for harm (1-5) and realism with LLM judges, k times each."""
    from biasatlas.probes.stories import probe as stories
    from biasatlas.probes.stories import harm as stories_harm
    store = _open(study)
    profiles, _ = stories.load_profiles(store)
    store.close()
    if profiles.empty:
        fail("the study holds no extracted story profiles")
    keys = set()
    for per in ([False, True] if per_language else [False]):
        res = stories.associations(profiles, per)
        keys |= {stories_harm.association_key(*r) for r in res.associations[
            ["base_attribute", "base_value", "compared_attribute", "compared_value"]].itertuples(index=False)}
    if not keys:
        console.print("no association to judge")
        return
    prompts = stories_harm.judge_prompts(sorted(keys), seed)
    for spec in judge or ["smollm2"]:
        backend = open_backend(spec, batch_size=batch_size, base_url=base_url, api_key_env=api_key_env,
                               concurrency=concurrency)
        execute(prompts, backend, study, GenerationSettings(max_tokens=max_tokens, temperature=temperature, seed=seed),
                samples=k, config={"step": "harm-judge"})


@stories_app.command("ratings")
def ratings_cmd(
    csv: Annotated[Path, typer.Option("--csv", help="CSV with columns association, rater, harm, realism.")],
    study: StudyReq,
) -> None:
    """Import human harm ratings of associations (keys like 'income_level=low -> education=basic')."""
    from biasatlas.probes.stories import harm as stories_harm
    try:
        counts = stories_harm.import_human_ratings(study, csv)
    except (ValueError, OSError) as exc:
        fail(str(exc))
        return
    sys.stdout.write(json.dumps(counts, indent=2) + "\n")


@app.command("associations")
def associations_cmd(
    study: StudyReq,
    per_language: Annotated[bool, typer.Option("--per-language", help="Also per model × language.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout.")] = False,
    alpha: Annotated[float, typer.Option("--alpha")] = 0.05,
    resamples: Annotated[int, typer.Option("--resamples", help="Monte Carlo resamples (reference).")] = 500_000,
    strategy: Annotated[
        str, typer.Option("--strategy", help="sequential (fast, same decisions) or reference.")
    ] = "sequential",
    seed: Annotated[int, typer.Option("--seed")] = 42,
    workers: Annotated[int, typer.Option("--workers", help="Processes.")] = 1,
    min_lift: Annotated[float, typer.Option("--min-lift")] = 2.0,
    groups: Annotated[Path | None, typer.Option("--groups", help="Marked/unmarked groups YAML.")] = None,
) -> None:
    """Mine associations between the prompted attribute and the extracted ones (two-step procedure)."""
    from biasatlas.probes.stories import probe as stories
    from biasatlas.probes.stories import harm as stories_harm
    from biasatlas.stats.associations import AssociationConfig
    if strategy not in ("sequential", "reference"):
        fail(f"unknown strategy {strategy!r}; valid: sequential, reference")
    config = AssociationConfig(alpha=alpha, resamples=resamples, strategy=strategy,  # type: ignore[arg-type]
                               seed=seed, workers=workers, min_lift=min_lift)
    store = _open(study)
    try:
        profiles, counts = stories.load_profiles(store)
        if profiles.empty:
            fail("the study holds no extracted story profiles (run `biasatlas run stories` or `stories import`)")
        result: dict[str, Any] = {"counts": counts, "method": stories._method_text(config)}
        glob = stories.associations(profiles, False, config)
        result["global"] = {"tables": stories._table_counts(glob), "timings_s": _round(glob.timings),
                            "associations": stories.association_records(glob)}
        if per_language:
            per = stories.associations(profiles, True, config)
            block: dict[str, Any] = {"tables": stories._table_counts(per), "timings_s": _round(per.timings),
                                     "associations": stories.association_records(per)}
            sets = stories.language_sets(per)
            if sets:
                from biasatlas.stats.associations import jaccard_matrix

                block["jaccard"] = jaccard_matrix(sets).round(4).to_dict()
            labels = stories.harm_labels_for(store)
            if len(labels):
                marked = stories_harm.marked_groups(groups) if groups else None
                block["specificity"] = stories_harm.language_specificity(per.associations, labels, marked)
            result["per_language"] = block
    finally:
        store.close()
    if as_json:
        sys.stdout.write(json.dumps(result, indent=2, ensure_ascii=False, default=str) + "\n")
        return
    out = Console()
    out.print(f"stories: {counts['stories']}; profiles: {counts.get('profiles')}")
    out.print(f"extraction: {counts['extraction'].get('answers')}")
    out.print(f"tables: {result['global']['tables']}")
    stories.print_associations(result["global"]["associations"], out, "Associations (per model)")
    if per_language:
        out.print(f"per-language tables: {result['per_language']['tables']}")
        stories.print_associations(result["per_language"]["associations"], out, "Associations per language")


def _round(timings: dict[str, float]) -> dict[str, float]:
    return {k: round(v, 3) for k, v in timings.items()}


def _open(study: Path) -> Store:
    if not (study / DB_NAME).exists():
        fail(f"no study at {study} (expected {study / DB_NAME})")
    return Store(study)
