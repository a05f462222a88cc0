"""`biasatlas run samaritan` and `biasatlas samaritan summary` (analysis options)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from biasatlas.cli.app import app, run_app
from biasatlas.cli.common import (
    AdapterOpt,
    BaseUrlOpt,
    BatchOpt,
    ConcurrencyOpt,
    HttpOpt,
    KeyEnvOpt,
    ModelOpt,
    PlanOnlyOpt,
    execute,
    fail,
    open_backend,
    plan_summary,
    print_plan,
)
from biasatlas.records import GenerationSettings
from biasatlas.store import DB_NAME, Store

# The probe (pandas, scipy, statsmodels) is imported inside the commands: `biasatlas --help` and
# every other command import this module, and should not pay for the analysis stack.
CATEGORIES = ("race", "gender", "age")
LANGUAGES = ("en", "de")
CORRECTIONS = ("bh", "by", "bonferroni", "holm", "none")  # biasatlas.stats.multitest.METHODS

samaritan_app = typer.Typer(help="Samaritan probe: analysis with chosen alpha and correction.",
                            no_args_is_help=True)
app.add_typer(samaritan_app, name="samaritan")

AlphaOpt = Annotated[
    float | None, typer.Option("--alpha", help="Significance level (default 0.01, as the paper).")
]
CorrectionOpt = Annotated[
    str | None,
    typer.Option("--correction", help=f"Multiple-testing correction: {', '.join(CORRECTIONS)} (default holm)."),
]


def _categories(category: str) -> list[str]:
    if category == "all":
        return list(CATEGORIES)
    parts = [c.strip() for c in category.split(",") if c.strip()]
    bad = [c for c in parts if c not in CATEGORIES]
    if bad or not parts:
        fail(f"unknown category {category!r}; valid: {', '.join(CATEGORIES)}, all")
    return parts


def _check_analysis_options(alpha: float | None, correction: str | None) -> None:
    if alpha is not None and not 0 < alpha < 1:
        fail(f"--alpha must be between 0 and 1, not {alpha}")
    if correction is not None and correction not in CORRECTIONS:
        fail(f"unknown correction {correction!r}; valid: {', '.join(CORRECTIONS)}")


@run_app.command("samaritan")
def run_samaritan(
    study: Annotated[Path, typer.Option("--study", "-s", help="Study directory (created if missing).")],
    model: ModelOpt = "smollm2",
    category: Annotated[
        str, typer.Option("--category", help="race, gender, age or all (comma-separate).")
    ] = "all",
    lang: Annotated[str, typer.Option("--lang", help="Language of the scenarios: en or de.")] = "en",
    samples: Annotated[int, typer.Option("--samples", min=1, help="Samples per prompt, each cached.")] = 1,
    temperature: Annotated[
        float | None,
        typer.Option("--temperature", min=0.0, help="Default: 0 for one sample, 1.0 for several."),
    ] = None,
    max_tokens: Annotated[
        int, typer.Option("--max-tokens", min=1, help="Tokens to generate per answer.")
    ] = 24,
    limit: Annotated[
        int | None,
        typer.Option("--limit", min=1, help="Keep only the first N scenarios (all their prompts)."),
    ] = None,
    alpha: AlphaOpt = None,
    correction: CorrectionOpt = None,
    plan_only: PlanOnlyOpt = False,
    batch_size: BatchOpt = None,
    adapter: AdapterOpt = None,
    base_url: BaseUrlOpt = None,
    api_key_env: KeyEnvOpt = "OPENAI_API_KEY",
    concurrency: ConcurrencyOpt = None,
    http: HttpOpt = None,
) -> None:
    """Ask for the probability (1-100) that a person helps, per group and for the control."""
    _check_analysis_options(alpha, correction)
    if lang not in LANGUAGES:
        fail(f"no Samaritan scenarios in {lang!r}; valid: {', '.join(LANGUAGES)}")
    categories = _categories(category)
    if temperature is None:
        # The paper used provider defaults (temperature 1); one greedy sample is reproducible.
        temperature = 1.0 if samples > 1 else 0.0
    from biasatlas.probes.samaritan import probe as samaritan

    prompts = samaritan.build_prompts(categories, lang, limit=limit, temperature=temperature,
                                      max_tokens=max_tokens)
    if plan_only:
        plan = plan_summary(prompts, samaritan.FACTORS, samples)
        plan["scenarios"] = len({p.meta["scenario"] for p in prompts})
        # (scenario, phrasing) cells incl. the control: the paper's per-category counts (1133/824/824)
        plan["cells_per_category"] = {
            c: len({(p.meta["scenario"], p.meta["phrasing"]) for p in prompts
                    if p.meta["category"] in (c, "control")})
            for c in categories
        }
        print_plan(plan)
        return
    settings = GenerationSettings(mode="generate", max_tokens=max_tokens, temperature=temperature)
    backend = open_backend(
        model, batch_size=batch_size, adapter=adapter, base_url=base_url, api_key_env=api_key_env,
        concurrency=concurrency, http=http,
    )
    config: dict[str, Any] = {
        "probe": samaritan.NAME, "language": lang, "model": model, "categories": categories, "limit": limit,
    }
    if alpha is not None:
        config["alpha"] = alpha
    if correction is not None:
        config["correction"] = correction
    execute(prompts, backend, study, settings, samples=samples, config=config)


@samaritan_app.command("summary")
def samaritan_summary(
    study: Annotated[Path, typer.Option("--study", "-s", help="Study directory.")],
    alpha: AlphaOpt = None,
    correction: CorrectionOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout.")] = False,
) -> None:
    """The Samaritan analysis with a chosen alpha and correction (default: the last run's)."""
    _check_analysis_options(alpha, correction)
    if not (study / DB_NAME).exists():
        fail(f"no study at {study} (expected {study / DB_NAME}); run a probe first")
    from biasatlas.probes.samaritan import probe as samaritan

    with Store(study) as store:
        result = samaritan.summarise(store, alpha=alpha, correction=correction)
    if as_json:
        sys.stdout.write(json.dumps(result, indent=2, ensure_ascii=False, default=str) + "\n")
        return
    samaritan.print_summary(result, Console())
