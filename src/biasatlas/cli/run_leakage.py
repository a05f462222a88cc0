"""`biasatlas run leakage` and the `biasatlas leakage aggregate | fit | export` commands."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.console import Console
from rich.table import Table

from biasatlas.backends.base import Backend, BackendError
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
    StudyOpt,
    execute,
    fail,
    open_backend,
    plan_summary,
    print_plan,
)
from biasatlas.probes.leakage.data import LANGUAGES, LeakageDataError, check_language
from biasatlas.records import GenerationSettings

leakage_app = typer.Typer(help="Stereotype leakage: human tables, leakage fits, matrices.", no_args_is_help=True)
app.add_typer(leakage_app, name="leakage")

MASKED_PREFIXES = ("masked:", "span:")


def _languages(value: str) -> list[str]:
    langs = [v.strip() for v in value.split(",") if v.strip()]
    try:
        return [check_language(lang) for lang in langs]
    except LeakageDataError as exc:
        fail(str(exc))
        raise


@run_app.command("leakage")
def run_leakage(
    study: StudyOpt,
    model: ModelOpt = "smollm2",
    lang: Annotated[str, typer.Option("--lang", help="Comma-separated languages: en,ru,zh,hi.")] = "en,ru,zh,hi",
    mode: Annotated[
        Literal["choice", "generate"],
        typer.Option("--mode", help="choice: option log-probabilities; generate: sampled answers, matched."),
    ] = "choice",
    samples: Annotated[
        int | None, typer.Option("--samples", min=1, help="Samples per prompt in generate mode (default 10).")
    ] = None,
    temperature: Annotated[float, typer.Option("--temperature", min=0.0, help="Sampling temperature.")] = 1.0,
    max_tokens: Annotated[int, typer.Option("--max-tokens", min=1, help="Tokens to generate.")] = 12,
    groups: Annotated[
        str | None, typer.Option("--groups", help="Comma-separated group ids (default: all 30).")
    ] = None,
    orders: Annotated[
        Literal["both", "one"], typer.Option("--orders", help="Present each trait pair in both orders or one.")
    ] = "both",
    seed: Annotated[int, typer.Option("--seed", help="Sampling seed.")] = 0,
    limit: LimitOpt = None,
    plan_only: PlanOnlyOpt = False,
    batch_size: BatchOpt = None,
    adapter: AdapterOpt = None,
    base_url: BaseUrlOpt = None,
    api_key_env: KeyEnvOpt = "OPENAI_API_KEY",
    concurrency: ConcurrencyOpt = None,
) -> None:
    """Ask a model the leakage probe's prompts (theme choice for generative models; ILPS templates for
    `masked:PATH` / `span:PATH` models) and store the answers in the study."""
    from biasatlas.probes.leakage.probe import FACTORS, build_prompts

    languages = _languages(lang)
    masked = model.startswith(MASKED_PREFIXES)
    method: Literal["theme", "ilps"] = "ilps" if masked else "theme"
    if masked and mode == "generate":
        fail("masked and span-filling models are scored, not sampled: drop --mode generate")
    group_names = [g for g in (groups or "").split(",") if g.strip()] or None
    try:
        prompts = build_prompts(languages, method=method, group_names=group_names, orders=orders)
    except LeakageDataError as exc:
        fail(str(exc))
        raise
    if limit is not None:
        prompts = prompts[:limit]
    n_samples = (samples or 10) if mode == "generate" else 1
    if mode == "choice" and samples not in (None, 1):
        fail("--samples applies to --mode generate; choice mode is deterministic (one score per prompt)")
    if plan_only:
        print_plan(plan_summary(prompts, FACTORS, samples=n_samples))
        return
    settings = GenerationSettings(
        mode="choice" if mode == "choice" else "generate",
        max_tokens=max_tokens,
        temperature=temperature if mode == "generate" else 0.0,
        seed=seed,
    )
    if masked:
        from biasatlas.backends.masked import MaskedOptions, make_masked_backend

        try:
            backend: Backend = make_masked_backend(
                model, MaskedOptions(batch_size=batch_size) if batch_size else MaskedOptions()
            )
        except BackendError as exc:
            fail(str(exc))
            raise
    else:
        backend = open_backend(model, batch_size=batch_size, adapter=adapter, base_url=base_url,
                               api_key_env=api_key_env, concurrency=concurrency)
    execute(
        prompts, backend, study, settings, samples=n_samples,
        config={"probe": "leakage", "method": method, "languages": languages, "groups": group_names,
                "orders": orders, "limit": limit},
    )


# ---- leakage aggregate ---------------------------------------------------------------------------------------
@leakage_app.command("aggregate")
def aggregate_cmd(
    ratings: Annotated[Path, typer.Argument(help="Per-annotator ratings JSON: {annotator: {group: {'l - r': s}}}.")],
    lang: Annotated[str, typer.Option("--lang", help="Language of the ratings (en, ru, zh, hi).")],
    out: Annotated[Path, typer.Option("--out", help="Output CSV (the shared tables' layout; 999 = missing).")],
    min_raters: Annotated[int, typer.Option("--min-raters", min=1, help="Fewer raters -> missing cell.")] = 1,
    name_map: Annotated[
        Path | None, typer.Option("--name-map", help="JSON/YAML {name in ratings: group id}, added to the defaults.")
    ] = None,
) -> None:
    """Aggregate raw per-annotator ratings into a traits × groups table of mean pole strengths."""
    from biasatlas.probes.leakage.human import aggregate_file, write_table

    _languages(lang)
    try:
        table, counts = aggregate_file(ratings, min_raters=min_raters, name_map_path=name_map)
    except LeakageDataError as exc:
        fail(str(exc))
        raise
    write_table(table, out)
    rated = counts[counts > 0]
    Console(stderr=True).print(
        f"{out}: {int(table.notna().sum().sum())} of {table.size} cells from {len(rated)} rated groups "
        f"(raters per group: min {int(rated.min()) if len(rated) else 0}, "
        f"max {int(rated.max()) if len(rated) else 0}); "
        f"min raters {min_raters}"
    )


# ---- leakage fit -----------------------------------------------------------------------------------------------
def _parse_mono(values: list[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values or []:
        match = re.fullmatch(r"\s*(\w+)\s*=\s*(.+)", value)
        if not match:
            fail(f"--mono takes LANG=SOURCE (a CSV matrix or a model of the study), got {value!r}")
            raise AssertionError  # unreachable
        out[match.group(1)] = match.group(2).strip()
    return out


@leakage_app.command("fit")
def fit_cmd(
    study: StudyOpt,
    human: Annotated[
        Path | None, typer.Option("--human", help="Directory of aggregated_data_{EN,RU,ZH,HI}.csv (default: bundled).")
    ] = None,
    zero_fill: Annotated[
        bool, typer.Option("--zero-fill", help="Replicate the paper: missing human cells count as 0.")
    ] = False,
    mono: Annotated[
        list[str] | None, typer.Option("--mono", help="LANG=CSV or LANG=MODEL: monolingual model scores (repeatable).")
    ] = None,
    alpha: Annotated[float, typer.Option("--alpha", min=0.0, max=1.0, help="Significance level.")] = 0.05,
    correction: Annotated[str, typer.Option("--correction", help="bh, by, holm, bonferroni or none.")] = "bh",
    top_k: Annotated[int, typer.Option("--top-k", min=1, help="Model's top traits per group for the finder.")] = 5,
    figure: Annotated[Path | None, typer.Option("--figure", help="Write the flows figure (PNG) here.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout.")] = False,
) -> None:
    """Fit the leakage model per model and target language; print coefficients, flows and examples."""
    from biasatlas.probes.leakage.probe import print_summary, summary_from
    from biasatlas.probes.leakage.analysis import analyse
    from biasatlas.probes.leakage.model import flows_figure
    from biasatlas.store import DB_NAME, Store

    if not (study / DB_NAME).exists():
        fail(f"no study at {study} (expected {study / DB_NAME}); run `biasatlas run leakage` first")
    store = Store(study)
    try:
        analysis = analyse(store, human_dir=human, zero_fill=zero_fill, mono=_parse_mono(mono), alpha=alpha,
                           correction=correction, top_k=top_k)
    except (LeakageDataError, ValueError) as exc:
        fail(str(exc))
        raise
    finally:
        store.close()
    if not analysis.variants:
        fail(f"the study {study} holds no leakage answers yet")
    if figure is not None:
        fig = flows_figure(analysis.flows, analysis.variants)
        figure.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(figure, dpi=120, bbox_inches="tight")
    summary = summary_from(analysis)
    if as_json:
        sys.stdout.write(json.dumps(summary, indent=2, ensure_ascii=False, default=str) + "\n")
        return
    print_summary(summary, Console())


# ---- leakage export --------------------------------------------------------------------------------------------
@leakage_app.command("export")
def export_cmd(
    study: StudyOpt,
    out: Annotated[Path, typer.Option("--out", help="Directory for one CSV per model and language.")],
) -> None:
    """Write each model's association matrices in the human tables' layout (usable as --mono input)."""
    from biasatlas.probes.leakage.human import write_table
    from biasatlas.probes.leakage.scores import association_cells, matrix
    from biasatlas.store import DB_NAME, Store

    if not (study / DB_NAME).exists():
        fail(f"no study at {study} (expected {study / DB_NAME})")
    store = Store(study)
    try:
        cells = association_cells(store.frame(probe="leakage"))
    finally:
        store.close()
    if cells.empty:
        fail(f"the study {study} holds no leakage answers yet")
    table = Table(title="Exported matrices")
    table.add_column("file")
    table.add_column("cells")
    for variant in sorted(cells["variant"].unique()):
        for lang in LANGUAGES:
            m = matrix(cells, variant, lang)
            if m.notna().sum().sum() == 0:
                continue
            name = re.sub(r"[^A-Za-z0-9._-]+", "_", variant).strip("_") + f"_{lang.upper()}.csv"
            write_table(m, out / name)
            table.add_row(str(out / name), str(int(m.notna().sum().sum())))
    Console().print(table)
