"""The table of every shared run option: each declared once (annotation for Typer, default).

:mod:`biasatlas.cli.options` adds them to each run command's signature and validates them into
:class:`~biasatlas.cli.options.RunOptions`.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Annotated, Any

import typer

MODE_HELP = "choice (score the options by log-probability) or generate; the probe's default if not given"

# name -> (annotation, default). Typer reads the Annotated metadata.
SHARED: dict[str, tuple[Any, Any]] = {
    "study": (
        Annotated[Path, typer.Option("--study", "-s", help="Study directory (created if missing).")],
        inspect.Parameter.empty,
    ),
    "model": (
        Annotated[str, typer.Option("--model", "-m", help="Model spec (see `biasatlas models`).")],
        "smollm2",
    ),
    "base_url": (
        Annotated[
            list[str] | None,
            typer.Option(
                "--base-url",
                metavar="URL[#N]",
                help="OpenAI-compatible server URL (or OPENAI_BASE_URL). Repeat it for a fleet (several servers of "
                "one model, named by --fleet); URL#N gives that server its own concurrency N (else --concurrency).",
            ),
        ],
        None,
    ),
    "fleet": (
        Annotated[
            str | None,
            typer.Option(
                "--fleet",
                metavar="NAME",
                help="Name of the fleet the --base-url servers form: the model's identity in the cache (not the "
                "hosts), so adding or removing a server keeps the answers. Needed with more than one --base-url.",
            ),
        ],
        None,
    ),
    "api_key_env": (
        Annotated[str, typer.Option("--api-key-env", help="Environment variable holding the API key.")],
        "OPENAI_API_KEY",
    ),
    "concurrency": (
        Annotated[
            int | None, typer.Option("--concurrency", help="Concurrent HTTP requests (of each server, in a fleet).")
        ],
        None,
    ),
    "http": (
        Annotated[
            list[str] | None,
            typer.Option(
                "--http",
                help="HTTP backend setting NAME=VALUE (repeatable): timeout, max_retries, rpm, tpm, "
                "price_prompt, price_completion (USD per million tokens), connect_timeout, top_logprobs.",
            ),
        ],
        None,
    ),
    "adapter": (
        Annotated[str | None, typer.Option("--adapter", help="LoRA adapter directory for a local model.")],
        None,
    ),
    "batch_size": (
        Annotated[int | None, typer.Option("--batch-size", help="Local model: prompts per forward pass.")],
        None,
    ),
    "dtype": (
        Annotated[
            str | None,
            typer.Option("--dtype", help="Local model weights' dtype: auto, float32, bfloat16, float16."),
        ],
        None,
    ),
    "structured": (
        Annotated[
            str | None,
            typer.Option("--structured", help="Generate mode over HTTP: auto (JSON answer with the options as an "
                         "enum where the server supports it, else free text, recorded) or off. Default: auto."),
        ],
        None,
    ),
    "choice_norm": (
        Annotated[
            str | None,
            typer.Option("--choice-norm", help="Choice mode: score an option by the sum of its token "
                         "log-probabilities (sum, default) or their mean per token (mean)."),
        ],
        None,
    ),
    "lang": (
        Annotated[
            list[str] | None,
            typer.Option("--lang", help="Language(s), comma-separated or repeated; the probe's default if not given."),
        ],
        None,
    ),
    "seed": (Annotated[int, typer.Option("--seed", help="Seed of the --limit draw and of sampling.")], 0),
    "samples": (
        Annotated[int | None, typer.Option("--samples", help="Answers per prompt, each stored (probe default: 1).")],
        None,
    ),
    "limit": (
        Annotated[
            int | None,
            typer.Option(
                "--limit",
                help="Ask about N prompts: a seeded draw stratified over the design cells; whole prompt "
                "sets where the probe pairs prompts (contact: 3 per set), so a little under N may be asked.",
            ),
        ],
        None,
    ),
    "mode": (Annotated[str | None, typer.Option("--mode", help=MODE_HELP)], None),
    "max_tokens": (
        Annotated[int | None, typer.Option("--max-tokens", help="Tokens to generate per answer (probe default).")],
        None,
    ),
    "temperature": (
        Annotated[float | None, typer.Option("--temperature", help="Sampling temperature (probe default).")],
        None,
    ),
    "plan_only": (
        Annotated[
            bool, typer.Option("--plan-only", help="Print the plan's size and factor counts as JSON; call no model.")
        ],
        False,
    ),
    "progress": (
        Annotated[
            bool | None,
            typer.Option("--progress/--no-progress", help="Progress: a bar on a terminal, else a line every "
                                                 "10 s (default: on)."),
        ],
        None,
    ),
}


# The judge's own server (an openai: judge only): an audit file's judge_model mapping has the same keys. Unset:
# the provider's defaults ($OPENAI_BASE_URL, else OpenAI's; OPENAI_API_KEY), never the answering model's.
JUDGE_SERVER: dict[str, tuple[Any, Any]] = {
    "judge_base_url": (
        Annotated[
            str | None,
            typer.Option("--judge-base-url", metavar="URL", help="The openai: judge's server (default: "
                         "$OPENAI_BASE_URL, else OpenAI's; never the answering model's --base-url)."),
        ],
        None,
    ),
    "judge_api_key_env": (
        Annotated[
            str | None,
            typer.Option("--judge-api-key-env", metavar="NAME", help="Environment variable holding the openai: "
                         "judge's API key (default: OPENAI_API_KEY)."),
        ],
        None,
    ),
    "judge_http": (
        Annotated[
            list[str] | None,
            typer.Option("--judge-http", metavar="NAME=VALUE", help="HTTP setting of the openai: judge "
                         "(repeatable; the names of --http)."),
        ],
        None,
    ),
    "judge_concurrency": (
        Annotated[
            int | None, typer.Option("--judge-concurrency", help="Concurrent HTTP requests to the openai: judge.")
        ],
        None,
    ),
}


# The options of a `biasatlas run PROBE` command only (`run_options(named=True)`): `debias` and `batch export`
# record their runs their own way.
NAMED: dict[str, tuple[Any, Any]] = {
    "name": (
        Annotated[
            str | None,
            typer.Option("--name", metavar="TEXT", help="Display name of the model in the study's summary, report "
                         "and exports (as an audit file's model name); default: the model's id."),
        ],
        None,
    ),
    "reader": (
        Annotated[
            str | None,
            typer.Option("--reader", metavar="rules|judge|both",
                         help="Who reads answers of free text (contact, samaritan): rules (default), judge (the "
                         "--judge-model reads every one) or both (the judge reads what the rules find unreadable "
                         "or read with low confidence). Default: the reading the study recorded, else rules."),
        ],
        None,
    ),
    "judge_model": (
        Annotated[
            str | None,
            typer.Option("--judge-model", metavar="SPEC", help="The judge of --reader judge|both: any model spec "
                         "(`biasatlas models`). It has its own server options (--judge-base-url, "
                         "--judge-api-key-env, --judge-http, --judge-concurrency), never the answering model's."),
        ],
        None,
    ),
    **JUDGE_SERVER,
}
