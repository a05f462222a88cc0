"""`biasatlas run stories`, `biasatlas stories import|judge|ratings`, `biasatlas associations`."""

from __future__ import annotations

import functools
import inspect
import json
import sys
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from biasatlas.backends.options import BackendOptions
from biasatlas.cli.app import app, run_app
from biasatlas.cli.common import (
    AlphaOpt,
    CorrectionOpt,
    StudyOpt,
    check_analysis_options,
    console,
    execute,
    fail,
    open_backend,
    run_probe_command,
)
from biasatlas.cli.option_table import SHARED
from biasatlas.cli.options import RunOptions, build_options, run_options, split_values
from biasatlas.cli.stories import open_store, stories_app
from biasatlas.records import GenerationSettings

# The probe modules (scipy, pandas) are imported inside the commands: every `biasatlas` call
# imports this module, and start-up time counts for fast HTTP runs.


@run_app.command("stories")
@run_options(named=True)
def run_stories(
    extractor: Annotated[
        list[str] | None,
        typer.Option("--extractor", help="Extractor model(s), comma-separated or repeated; default: the generator "
                     "(kept loaded for both steps). Other extractors take the generator's backend options."),
    ] = None,
    extract_max_tokens: Annotated[
        int | None, typer.Option("--extract-max-tokens", min=1, help="Extractor answer limit in tokens "
                                 "(default 3072).")
    ] = None,
    no_extract: Annotated[bool, typer.Option("--no-extract", help="Generate stories only.")] = False,
    seeds: Annotated[
        Path | None, typer.Option("--seeds", help="A seeds folder (the published StereoTales layout or ours) "
                                  "instead of the bundled seeds; its values are mapped to the bundled keys.")
    ] = None,
    stories_per_prompt: Annotated[
        int | None, typer.Option("--stories-per-prompt", help="Deprecated: use --samples.", hidden=True)
    ] = None,
    design: Annotated[
        str | None,
        typer.Option("--design", help="paper: StereoTales' design (its ten languages, one story a prompt, three "
                                      "--extractor models and their majority vote); printed, and --plan-only "
                                      "gives the paper's counts."),
    ] = None,
    *,
    opts: RunOptions,
) -> None:
    """Generate stories about a protagonist with one given attribute, then extract their profiles.

    Defaults: --samples 1 story per prompt, --max-tokens 2048, --temperature 1.0, --mode generate
    (the only mode). --limit N draws N prompts spread over language × prompted attribute ×
    scenario group. The extraction step asks each extractor (greedy, --extract-max-tokens) about
    every usable story of this run; refusals and empty stories are not extracted.
    """
    if stories_per_prompt is not None:
        if stories_per_prompt < 1:
            fail(f"--stories-per-prompt {stories_per_prompt}: must be at least 1")
        if opts.samples is not None and opts.samples != stories_per_prompt:
            fail(f"--stories-per-prompt {stories_per_prompt} contradicts --samples {opts.samples}; "
                 "use --samples only (--stories-per-prompt is deprecated)")
        console.print("[yellow]note[/]: --stories-per-prompt is deprecated; use --samples")
        opts.samples = stories_per_prompt
    # default: the generator extracts its own
    extractors = split_values(extractor, "--extractor") or [opts.backend.model]
    specific: dict[str, Any] = {"extractors": extractors, "extract": not no_extract}
    if seeds is not None:
        specific["seeds"] = str(seeds)
    if extract_max_tokens is not None:
        specific["extract_max_tokens"] = extract_max_tokens
    if design is not None:
        from biasatlas.cli.design import say_design

        # the generator alone is not the paper's ensemble: only the extractors given count
        specific["extractors"] = split_values(extractor, "--extractor") or None
        say_design("stories", design, {**opts.probe_values(), **specific})
        specific["design"] = design
    steps = run_probe_command("stories", opts, **specific)
    counts = steps[0].info.get("stories") if steps else None
    if counts is not None:
        console.print(
            f"stories: {counts['answered']} answered, {counts['refusals']} refusals, {counts['empty']} empty "
            "(refusals and empty stories are not extracted)"
        )
        if counts.get("cut_at_limit"):
            console.print(f"[yellow]warning[/]: {counts['cut_at_limit']} of {counts['answered']} stories hit the "
                          "token limit (raise --max-tokens)")
        cut = sum(step.info.get("cut_at_limit", 0) for step in steps[1:])
        if cut:
            console.print(f"[yellow]warning[/]: {cut} extraction answers hit the token limit "
                          "(raise --extract-max-tokens)")
        if not counts.get("to_extract"):
            console.print("[yellow]no story to extract[/]")
        from biasatlas.probes.stories.probe import extraction_warnings

        for warning in extraction_warnings(extractors, opts.backend.model):
            console.print(f"[yellow]warning[/]: {warning}")


# ---- stories judge: the backend options of every run, one backend per --judge --------------

JUDGE_BACKEND_OPTIONS = ("base_url", "fleet", "api_key_env", "concurrency", "http", "adapter", "batch_size", "dtype")


def _judge_backend(func: Callable[..., Any]) -> Callable[..., Any]:
    """Give a command the shared backend options (declared once, in cli/option_table.py SHARED) but
    --model; it receives them as ``backend: BackendOptions`` whose model each --judge replaces."""
    hints = typing.get_type_hints(func, include_extras=True)
    own = [
        p.replace(annotation=hints.get(p.name, p.annotation), kind=inspect.Parameter.KEYWORD_ONLY)
        for p in inspect.signature(func).parameters.values()
        if p.name != "backend"
    ]
    shared = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=SHARED[name][1], annotation=SHARED[name][0])
        for name in JUDGE_BACKEND_OPTIONS
    ]

    @functools.wraps(func)
    def wrapper(**kwargs: Any) -> Any:
        values = {name: kwargs.pop(name) for name in JUDGE_BACKEND_OPTIONS}
        backend = build_options({"study": Path(), "model": "smollm2", **values}).backend
        return func(backend=backend, **kwargs)

    parameters = own + shared
    wrapper.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in parameters}
    del wrapper.__wrapped__  # typer must read the new signature, not the wrapped one
    return wrapper


@stories_app.command("judge")
@_judge_backend
def judge_cmd(
    study: StudyOpt,
    judge: Annotated[
        list[str] | None, typer.Option("--judge", help="Judge model(s), comma-separated or repeated; default smollm2.")
    ] = None,
    k: Annotated[int, typer.Option("--k", min=1, help="Ratings per association and judge.")] = 3,
    temperature: Annotated[
        float, typer.Option("--temperature", min=0.0, max=5.0, help="Judge sampling temperature.")
    ] = 0.7,
    max_tokens: Annotated[int, typer.Option("--max-tokens", min=1, help="Judge answer limit in tokens.")] = 24,
    per_language: Annotated[
        bool, typer.Option("--per-language", help="Also judge per-language associations.")
    ] = False,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the question order and of sampling.")] = 0,
    *,
    backend: BackendOptions,
) -> None:
    """Rate every association found for harm (1-5) and realism with LLM judges, k times each."""
    from biasatlas.probes.stories import harm as stories_harm
    from biasatlas.probes.stories.analysis import associations
    from biasatlas.probes.stories.profiles import load_profiles

    store = open_store(study)
    profiles, _ = load_profiles(store)
    store.close()
    if profiles.empty:
        fail("the study holds no extracted story profiles")
    keys = set()
    for per in ([False, True] if per_language else [False]):
        res = associations(profiles, per)
        keys |= {stories_harm.association_key(*r) for r in res.associations[
            ["base_attribute", "base_value", "compared_attribute", "compared_value"]].itertuples(index=False)}
    if not keys:
        console.print("no association to judge")
        return
    prompts = stories_harm.judge_prompts(sorted(keys), seed)
    settings = GenerationSettings(max_tokens=max_tokens, temperature=temperature, seed=seed)
    for spec in split_values(judge, "--judge") or ["smollm2"]:
        model = open_backend(backend.model_copy(update={"model": spec}))
        execute(prompts, model, study, settings, samples=k, config={"step": "harm-judge"})


@stories_app.command("import")
def import_cmd(
    stories_file: Annotated[Path, typer.Option("--stories", help="Stories table (CSV or Parquet).")],
    study: StudyOpt,
    seeds: Annotated[Path | None, typer.Option("--seeds", help="The published seeds folder, to validate.")] = None,
    all_templates: Annotated[
        bool, typer.Option("--all-templates", help="Also the stories of the other prompt templates (neutral, "
                           "negative, positive), analysed as separate slices; default: scenario_based only.")
    ] = False,
    progress: Annotated[
        bool | None, typer.Option("--progress/--no-progress", help="Progress bars (default: on a terminal).")
    ] = None,
) -> None:
    """Import published StereoTales stories (and their extractions) into a study.

    Each story is keyed by language, generator, prompt template, sample_id and output_id (the
    published export numbers them afresh per language). Only scenario_based stories by default.
    """
    from biasatlas.probes.stories.importer import import_stories
    from biasatlas.probes.stories.seeds import SeedError

    show = sys.stderr.isatty() if progress is None else progress
    try:
        counts = import_stories(stories_file, study, seeds, progress=show, all_templates=all_templates)
    except (ValueError, SeedError) as exc:
        fail(str(exc))
        return
    sys.stdout.write(json.dumps(counts, indent=2, ensure_ascii=False) + "\n")


@stories_app.command("ratings")
def ratings_cmd(
    csv: Annotated[Path, typer.Option("--csv", help="CSV with columns association, rater, harm, realism.")],
    study: StudyOpt,
) -> None:
    """Import human harm ratings of associations (keys like 'income_level=low -> education=basic')."""
    from biasatlas.probes.stories import harm as stories_harm
    try:
        counts = stories_harm.import_human_ratings(study, csv)
    except (ValueError, OSError) as exc:
        fail(str(exc))
        return
    sys.stdout.write(json.dumps(counts, indent=2) + "\n")


STRATEGIES = ("sequential", "reference")


@app.command("associations")
def associations_cmd(
    study: StudyOpt,
    per_language: Annotated[bool, typer.Option("--per-language", help="Also per model × language.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout.")] = False,
    alpha: AlphaOpt = None,
    correction: CorrectionOpt = None,
    resamples: Annotated[int, typer.Option("--resamples", help="Monte Carlo resamples (reference).")] = 500_000,
    strategy: Annotated[
        str, typer.Option("--strategy", help="sequential (fast, same decisions) or reference.")
    ] = "sequential",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the Monte Carlo Fisher tests.")] = 42,
    workers: Annotated[int, typer.Option("--workers", help="Processes.")] = 1,
    min_lift: Annotated[float, typer.Option("--min-lift")] = 2.0,
    groups: Annotated[Path | None, typer.Option("--groups", help="Marked/unmarked groups YAML.")] = None,
    vote: Annotated[
        str, typer.Option("--vote", help="Extractors' majority: valid (n_valid // 2 + 1 of the readable "
                          "extractions, the paper's) or all (n // 2 + 1 of every extractor asked).")
    ] = "valid",
) -> None:
    """Mine associations between the prompted attribute and the extracted ones (two-step procedure).

    --alpha defaults to 0.05; --correction accepts bh only (the paper's: Benjamini-Hochberg across
    each prompted attribute's tables; the cells of a table always get Benjamini-Yekutieli).
    """
    from biasatlas.probes.stories import analysis as stories
    from biasatlas.probes.stories import harm as stories_harm
    from biasatlas.probes.stories.profiles import load_profiles
    from biasatlas.probes.stories.summary import print_associations
    from biasatlas.stats.associations import AssociationConfig, jaccard_matrix

    check_analysis_options(alpha, correction)
    error = stories.correction_error(correction)
    if error:
        fail(error)
    if strategy not in STRATEGIES:
        fail(f"--strategy {strategy!r}: valid: {', '.join(STRATEGIES)}")
    for option, value in (("--resamples", resamples), ("--workers", workers)):
        if value < 1:
            fail(f"{option} {value}: must be at least 1")
    config = AssociationConfig(alpha=0.05 if alpha is None else alpha, resamples=resamples,
                               strategy=strategy,  # type: ignore[arg-type]
                               seed=seed, workers=workers, min_lift=min_lift)
    if vote not in VOTES:
        fail(f"--vote {vote!r}: valid: {', '.join(VOTES)}")
    store = open_store(study)
    try:
        profiles, counts = load_profiles(store, vote=vote)
        if not counts.get("stories"):
            fail("the study holds no stories (run `biasatlas run stories` or `stories import`)")
        result: dict[str, Any] = {"counts": counts, "method": stories.method_text(config)}
        warnings = stories.warnings_of(counts)
        if warnings:
            result["warnings"] = warnings
        glob = stories.associations(profiles, False, config)
        result["global"] = _block(stories, glob, counts, config)
        if per_language:
            per = stories.associations(profiles, True, config)
            block = _block(stories, per, counts, config)
            sets = stories.language_sets(per)
            if sets:
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
    out.print(f"extraction: {counts['extraction'].get('answers')}; vote {counts.get('vote')}")
    for warning in result.get("warnings", []):
        out.print(f"[yellow]warning[/]: {warning}")
    out.print(f"tables: {result['global']['tables']}")
    print_associations(result["global"]["associations"], out, "Associations (per model)")
    if "empty_reason" in result["global"]:
        out.print(f"no association: {result['global']['empty_reason']}")
    if per_language:
        out.print(f"per-language tables: {result['per_language']['tables']}")
        print_associations(result["per_language"]["associations"], out, "Associations per language")


VOTES = ("valid", "all")


def _block(stories: Any, result: Any, counts: dict[str, Any], config: Any) -> dict[str, Any]:
    """Tables, timings, pooled associations (mean fraction/lift across models) and per-model rows."""
    block: dict[str, Any] = {"tables": stories.table_counts(result), "timings_s": _round(result.timings),
                             "associations": stories.association_records(result),
                             "per_model": stories.per_model_records(result)}
    if not block["associations"]:
        block["empty_reason"] = stories.empty_reason(result, counts, config)
    return block


def _round(timings: dict[str, float]) -> dict[str, float]:
    return {k: round(v, 3) for k, v in timings.items()}

