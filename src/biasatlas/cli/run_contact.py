"""`biasatlas run contact`: our templates, or an imported published dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError

from biasatlas.cli.app import run_app
from biasatlas.cli.common import (
    AdapterOpt,
    BaseUrlOpt,
    BatchOpt,
    ConcurrencyOpt,
    HttpOpt,
    KeyEnvOpt,
    LimitOpt,
    ModelOpt,
    PlanOnlyOpt,
    execute,
    fail,
    open_backend,
    plan_summary,
    print_plan,
)
from biasatlas.probes.contact import probe as contact
from biasatlas.probes.contact.data import ContactDataError
from biasatlas.records import GenerationSettings


def _split(values: list[str] | None) -> list[str] | None:
    """Accept both repeated options and comma-separated lists."""
    if not values:
        return None
    return [v.strip() for item in values for v in item.split(",") if v.strip()]


@run_app.command("contact")
def run_contact(
    study: Annotated[Path, typer.Option("--study", "-s", help="Study directory (created if missing).")],
    model: ModelOpt = "smollm2",
    lang: Annotated[str, typer.Option("--lang", help="Language of the templates: en, de, is.")] = "en",
    axis: Annotated[list[str] | None, typer.Option("--axis", help="Axis (repeat or comma-separate).")] = None,
    scale: Annotated[
        list[str] | None, typer.Option("--scale", help="certainty, likelihood, frequency or all.")
    ] = None,
    action: Annotated[
        list[str] | None,
        typer.Option("--action", help="positive, negative or all (default: all for en, positive for de/is)."),
    ] = None,
    scenario: Annotated[list[str] | None, typer.Option("--scenario", help="Scenario filter.")] = None,
    principle: Annotated[list[str] | None, typer.Option("--principle", help="Key principle filter.")] = None,
    template_set: Annotated[str, typer.Option("--template-set", help="Template set (en: a or b).")] = "a",
    hb_version: Annotated[str, typer.Option("--holistic-bias-version", help="v1.0 or v1.1.")] = "v1.0",
    mode: Annotated[str, typer.Option("--mode", help="choice (log-probabilities) or generate.")] = "choice",
    max_tokens: Annotated[int, typer.Option("--max-tokens", help="Generate mode: tokens to generate.")] = 10,
    temperature: Annotated[float, typer.Option("--temperature", help="Generate mode temperature.")] = 0.0,
    samples: Annotated[int, typer.Option("--samples", help="Samples per prompt (generate mode).")] = 1,
    limit: LimitOpt = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the --limit draw and of sampling.")] = 0,
    templates: Annotated[
        Path | None, typer.Option("--templates", help="Import a published contact dataset (CSV/XLSX).")
    ] = None,
    descriptors: Annotated[
        Path | None, typer.Option("--descriptors", help="Descriptor list for an imported dataset.")
    ] = None,
    fmt: Annotated[
        str | None, typer.Option("--format", help="Import format: raj (CSV) or rows (3 rows per template).")
    ] = None,
    plan_only: PlanOnlyOpt = False,
    batch_size: BatchOpt = None,
    adapter: AdapterOpt = None,
    base_url: BaseUrlOpt = None,
    api_key_env: KeyEnvOpt = "OPENAI_API_KEY",
    concurrency: ConcurrencyOpt = None,
    http: HttpOpt = None,
) -> None:
    """Ask yes/no-style contact questions under no / positive / negative contact framing."""
    if mode not in ("choice", "generate"):
        fail(f"unknown mode {mode!r}; valid: choice, generate")
    try:
        if templates is not None:
            from biasatlas.probes.contact.importer import import_dataset

            scales = _split(scale)
            first_scale = scales[0] if scales else None
            prompts = import_dataset(templates, descriptors, fmt=fmt, language=lang, scale=first_scale)
            if limit is not None:
                prompts = prompts[: 3 * limit]
        else:
            config = contact.ContactConfig(
                language=lang,
                axes=_split(axis),
                scales=_split(scale) or ["certainty"],
                actions=_split(action) if _split(action) != ["all"] else ["positive", "negative"],
                scenarios=_split(scenario),
                principles=_split(principle),
                template_set=template_set,
                hb_version=hb_version,
                limit=limit,
                seed=seed,
            )
            prompts = contact.build_prompts(config)
    except ValidationError as exc:
        fail("; ".join(str(e["msg"]).removeprefix("Value error, ") for e in exc.errors()))
        return
    except (ValueError, ContactDataError) as exc:
        fail(str(exc))
        return
    settings = GenerationSettings(mode=mode, max_tokens=max_tokens, temperature=temperature, seed=seed)  # type: ignore[arg-type]
    if plan_only:
        plan = plan_summary(prompts, contact.FACTORS, samples)
        plan["prompt_sets"] = len({p.meta["set_id"] for p in prompts})
        print_plan(plan)
        return
    backend = open_backend(
        model, batch_size=batch_size, adapter=adapter, base_url=base_url, api_key_env=api_key_env,
        concurrency=concurrency, http=http,
    )
    execute(
        prompts,
        backend,
        study,
        settings,
        samples=samples,
        config={"probe": "contact", "language": lang, "model": model, "templates": str(templates or "")},
    )
