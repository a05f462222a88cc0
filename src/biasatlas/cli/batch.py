"""`biasatlas batch export` / `batch import`: a plan as OpenAI Batch files, and their answers stored back.

The files run on the OpenAI Batch API, vLLM's ``run_batch`` and Ray Data over vLLM (docs/scale.md).
"""

from __future__ import annotations

import json
import sys
import typing
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from biasatlas.cli.app import app
from biasatlas.cli.common import StudyOpt, check_study, console, fail, require_study, resume_command
from biasatlas.cli.options import RunOptions, run_options
from biasatlas.cli.outputs import check_output_dir

batch_app = typer.Typer(
    help="Batch files: export a plan's requests (OpenAI Batch / vLLM run_batch / Ray Data), import the answers.",
    no_args_is_help=True,
)
app.add_typer(batch_app, name="batch")

DEFAULT_MAX_LINES = 50_000  # the OpenAI Batch API's limit per file
SHOWN_BAD = 20  # unreadable lines named one by one


def probe_values(probe: Any, items: list[str] | None) -> dict[str, Any]:
    """``--set NAME=VALUE`` as probe config fields; list fields take comma-separated values."""
    from biasatlas.probes.base import ProbeConfig

    values: dict[str, Any] = {}
    fields = probe.config_model.model_fields
    for item in items or []:
        name, sep, value = item.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or name not in fields or name in ProbeConfig.model_fields:
            own = sorted(set(fields) - set(ProbeConfig.model_fields))
            fail(f"--set {item!r}: want NAME=VALUE with NAME one of {', '.join(own) or '(none)'} "
                 "(the shared run options have options of their own)")
        annotation = fields[name].annotation
        is_list = typing.get_origin(annotation) is list or any(
            typing.get_origin(a) is list for a in typing.get_args(annotation)
        )
        values[name] = [v.strip() for v in value.split(",") if v.strip()] if is_list else value.strip()
    return values


def http_options(opts: RunOptions) -> Any:
    """The OpenAIOptions of ``--base-url``, ``--structured``, ``--choice-norm`` and ``--http``."""
    from biasatlas.backends.base import BackendError
    from biasatlas.backends.openai_compat import OpenAIOptions, parse_settings

    b = opts.backend
    values: dict[str, Any] = {"base_url": b.base_url, "endpoints": b.endpoints or None, "fleet": b.fleet,
                              "structured": b.structured, "choice_norm": b.choice_norm}
    try:
        values.update(parse_settings(b.http))
        return OpenAIOptions(**{k: v for k, v in values.items() if v is not None})
    except BackendError as exc:
        fail(str(exc))
    except ValueError as exc:
        fail(f"invalid backend option: {str(exc).splitlines()[0]}")


@batch_app.command("export")
@run_options
def export(
    opts: RunOptions,
    probe_name: Annotated[str, typer.Argument(metavar="PROBE", help="The probe to plan (as in `biasatlas run`).")],
    out: Annotated[Path, typer.Option("--out", help="Directory for the batch input files (created if missing).")],
    max_lines: Annotated[
        int, typer.Option("--max-lines", help="Requests per file at most (OpenAI's Batch API takes 50,000).")
    ] = DEFAULT_MAX_LINES,
    settings: Annotated[
        list[str] | None,
        typer.Option("--set", help="Probe-specific option NAME=VALUE (repeatable), e.g. scales=certainty,likelihood."),
    ] = None,
) -> None:
    """Plan PROBE as `biasatlas run PROBE` would, record the plan in the study, and write every request the
    study does not hold yet as OpenAI Batch input JSONL (custom_id = the cache key, body = the exact request)."""
    from biasatlas.backends.base import BackendError
    from biasatlas.batch.export import export_batch
    from biasatlas.lock import StudyLockedError
    from biasatlas.probes import PROBE_MODULES, load_probe
    from biasatlas.probes.base import CLI_COMMAND, Probe, ProbeConfigError
    from biasatlas.store import StoreError

    if probe_name not in PROBE_MODULES:
        fail(f"unknown probe {probe_name!r}; valid: {', '.join(PROBE_MODULES)}")
    if max_lines < 1:
        fail(f"--max-lines {max_lines}: must be at least 1")
    kind, _, model = opts.backend.model.partition(":")
    if kind != "openai" or not model:
        fail(f"--model {opts.backend.model!r}: batch files are for OpenAI-compatible servers, use openai:NAME")
    probe = load_probe(probe_name)
    if type(probe).run is not Probe.run:
        fail(f"{probe_name} runs in more than one step (or asks several models); batch export covers one-step "
             "probes: use `biasatlas run` for it")
    CLI_COMMAND.set(resume_command())
    options = http_options(opts)
    try:
        config = probe.config(**opts.probe_values(), **probe_values(probe, settings))
        if opts.plan_only:
            sys.stdout.write(json.dumps(probe.plan_summary(probe.plan(config), config), indent=2) + "\n")
            return
        check_study(opts.study, write=True)
        result = export_batch(probe, config, model, options, opts.study, out, max_lines=max_lines)
    except (ProbeConfigError, BackendError, StoreError, StudyLockedError) as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot write the batch files to {out}: {exc.strerror or exc}")
    console.print(f"run {result.run_id} ({result.backend_id}): planned {result.planned}, cached {result.cached}, "
                  f"exported {result.exported} requests in {len(result.files)} files", markup=False)
    for path in result.files:
        console.print(f"  {path}", markup=False)
    estimate = (f"estimate: ~{result.prompt_tokens:,} prompt tokens, at most {result.completion_tokens:,} completion "
                "tokens")
    if result.cost_usd is None:
        console.print(f"{estimate}; no price given (--http price_prompt=USD --http price_completion=USD per million "
                      "tokens)", markup=False)
    else:
        console.print(f"{estimate}; cost at the batch price (half the --http prices): ~${result.cost_usd:.4f} "
                      f"(${result.cost_usd_live:.4f} one by one)", markup=False)


@batch_app.command("import")
def import_(
    study: StudyOpt,
    files: Annotated[list[Path], typer.Argument(metavar="FILE...", help="OpenAI Batch output JSONL files.")],
    as_json: Annotated[bool, typer.Option("--json", help="The counts as JSON on stdout.")] = False,
) -> None:
    """Store the answers of OpenAI Batch output files (any order, partial files fine; importing twice stores
    nothing new). Lines of another study are counted, never stored; unreadable lines are reported."""
    from biasatlas.batch.importer import import_batch
    from biasatlas.lock import StudyLockedError
    from biasatlas.store import StoreError

    require_study(study, write=True, first="run `biasatlas batch export` first")
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        fail(f"no such file: {missing[0]}")
    try:
        result = import_batch(study, files)
    except (StoreError, StudyLockedError) as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot read the batch files: {exc.strerror or exc}")
    for bad in result.bad[:SHOWN_BAD]:
        console.print(f"warning: {bad}", markup=False)
    if len(result.bad) > SHOWN_BAD:
        console.print(f"warning: {len(result.bad) - SHOWN_BAD} more unreadable lines (--json lists them all)",
                      markup=False)
    if result.unknown:
        named = "1 line names a request" if result.unknown == 1 else f"{result.unknown} lines name requests"
        console.print(f"warning: {named} no batch export of this study wrote (another study or plan?), not stored: "
                      f"{', '.join(result.unknown_ids)}", markup=False)
    read = result.lines + len(result.bad)  # every line, so that the parts below add up to it
    console.print(f"read {read} lines: {result.answers} answers and {result.errors} errors stored, "
                  f"{result.already} held already, {result.duplicates} duplicates, {result.unknown} unknown, "
                  f"{len(result.bad)} unreadable", markup=False)
    for run_id, counts in result.runs.items():
        console.print(f"run {run_id}: answered {counts['answered']} of {counts['planned']}, failed {counts['failed']}, "
                      f"pending {counts['pending']}", markup=False)
    if as_json:
        sys.stdout.write(json.dumps(result.as_dict(), indent=2) + "\n")


ENGINES = ("ray", "ray-vllm")


InOpt = Annotated[Path, typer.Option(
    "--in", help="Batch input: a folder of *.jsonl (as `batch export` wrote) or one file.")]
AnswersOpt = Annotated[Path, typer.Option(
    "--out", help="Folder for the answers (OpenAI Batch output JSONL; created if missing).")]
EngineOpt = Annotated[str, typer.Option(
    "--engine", help="ray (HTTP to --base-url servers through Ray Data) or ray-vllm (Ray Data's vLLM stage).")]
UrlsOpt = Annotated[list[str] | None, typer.Option(
    "--base-url", help="OpenAI-compatible server URL (repeat it for several: lines are spread over them).")]
AddressOpt = Annotated[str | None, typer.Option(
    "--address", help="Existing Ray cluster (ray://HOST:10001, or auto); without it a local Ray starts.")]
ActorsOpt = Annotated[int, typer.Option(
    "--actors", help="Ray actors asking in parallel (a local Ray gets as many CPUs).")]
ConcurrencyOpt = Annotated[int, typer.Option(
    "--concurrency", help="Requests each server gets at once at most (shared by the actors).")]
TimeoutOpt = Annotated[float, typer.Option("--timeout", help="Seconds one attempt may take.")]
RetriesOpt = Annotated[int, typer.Option(
    "--max-retries", help="Attempts per line for transient failures (429, 5xx, timeouts, dropped connections).")]
KeyEnvOpt = Annotated[str, typer.Option(
    "--api-key-env", help="Environment variable holding the API key (read by each actor, never written).")]
SourceOpt = Annotated[str | None, typer.Option(
    "--model-source", help="ray-vllm: the model vLLM loads (hub id or path).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="The counts as JSON on stdout.")]
MaxWaitOpt = Annotated[float | None, typer.Option(
    "--max-wait", help="Seconds a server may go without an answer while its requests fail before the job gives "
    "it up (default: 60 until its first answer, 180 after; a server answering most requests is never given up).")]


@batch_app.command("run")
def run(
    inputs: InOpt,
    out: AnswersOpt,
    engine: EngineOpt = "ray",
    base_urls: UrlsOpt = None,
    address: AddressOpt = None,
    actors: ActorsOpt = 2,
    concurrency: ConcurrencyOpt = 16,
    timeout: TimeoutOpt = 120.0,
    max_retries: RetriesOpt = 6,
    api_key_env: KeyEnvOpt = "OPENAI_API_KEY",
    model_source: SourceOpt = None,
    max_wait: MaxWaitOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Answer batch input files through Ray Data, writing OpenAI Batch output files that `batch import` reads.

    Lines answered in --out already are skipped: after a kill, run the same command again and it asks only
    the missing lines; then `biasatlas batch import --study DIR OUT/*.jsonl`. A server that stops answering
    is given up within about a minute (exit 4). Exit codes: 0 every line answered, 1 some lines failed or were
    unreadable, 4 stopped early, 130 interrupted, 2 bad input. Needs the \\[ray] extra."""
    if engine not in ENGINES:
        fail(f"--engine {engine!r}: valid: {', '.join(ENGINES)}")
    try:
        import ray  # noqa: F401
    except ImportError:
        fail("the Ray engine needs Ray Data: pip install 'biasatlas[ray]'")
    from biasatlas.batch.ray_engine import RayInterrupted, input_files
    from biasatlas.batch.ray_session import RayStartError, check_address

    check_output_dir(out)  # a study's database given as --out stays the database
    if address:
        try:  # before anything is read: a cluster that is not there is one line in seconds
            check_address(address)
        except RayStartError as exc:
            fail(str(exc))
    files = input_files(inputs)
    if not files:
        fail(f"no batch input at {inputs} (expected *.jsonl files written by `biasatlas batch export`)")
    if actors < 1 or concurrency < 1 or max_retries < 0 or timeout <= 0 or (max_wait is not None and max_wait <= 0):
        fail("--actors and --concurrency must be at least 1, --max-retries at least 0, --timeout and --max-wait "
             "above 0")
    urls = _endpoints(base_urls) if engine == "ray" else []
    if engine == "ray-vllm" and not model_source:
        fail("--engine ray-vllm needs --model-source (the model vLLM loads on the cluster)")
    try:
        out.mkdir(parents=True, exist_ok=True)
        if engine == "ray-vllm":
            result = _run_vllm(files, out, str(model_source), address, actors)
        else:
            result = _run_http(files, out, urls, address=address, actors=actors, concurrency=concurrency,
                               timeout=timeout, max_retries=max_retries, key_env=api_key_env, max_wait=max_wait)
    except RayStartError as exc:
        fail(str(exc))
    except RayInterrupted as exc:
        _interrupted(exc.run, out)
    except OSError as exc:
        fail(f"cannot read the batch input or write the answers in {out}: {exc.strerror or exc}")
    _print_result(result, out, as_json)


def _endpoints(base_urls: list[str] | None) -> list[str]:
    """The --base-url servers, checked (one line, exit 2, before anything is written)."""
    from biasatlas.backends.http.setup import safe_url

    urls = [u.rstrip("/") for u in base_urls or []]
    bad = [u for u in urls if not u.startswith(("http://", "https://"))]
    if not urls or bad:
        fail("--engine ray needs --base-url http(s)://HOST/v1 (repeat it for several servers)"
             + (f"; not a URL: {safe_url(bad[0])!r}" if bad else ""))
    return urls


def _run_vllm(files: list[Path], out: Path, model_source: str, address: str | None, actors: int) -> Any:
    from biasatlas.batch.ray_vllm import run_vllm

    try:
        return run_vllm(files, out, model_source, address=address, replicas=actors)
    except (ImportError, ValueError) as exc:
        fail(str(exc))


def _run_http(files: list[Path], out: Path, urls: list[str], **options: Any) -> Any:
    from biasatlas.batch.ray_engine import ProgressLine, count_lines, run_ray

    progress = ProgressLine(total=count_lines(files))
    try:
        return run_ray(files, out, urls, progress=progress, **options)
    finally:
        progress.close()


def _interrupted(result: Any, out: Path) -> None:
    """Ctrl-C or SIGTERM: what is kept, the resume command, exit 130 (as every run)."""
    from biasatlas.cli.common import EXIT_INTERRUPTED
    from biasatlas.cli.interrupts import interrupted_told

    console.print(f"[yellow]interrupted[/]: {result.answered} lines answered in this job, "
                  f"{result.answered + result.skipped} in all, kept in {escape(str(out))}. "
                  f"Resume: {escape(resume_command())}")
    interrupted_told()
    raise typer.Exit(EXIT_INTERRUPTED)


def _print_result(result: Any, out: Path, as_json: bool) -> None:
    from biasatlas.cli.common import EXIT_STOPPED

    for bad in result.unreadable_lines[:SHOWN_BAD]:
        console.print(f"warning: {bad}", markup=False)
    if len(result.unreadable_lines) > SHOWN_BAD:
        console.print(f"warning: {len(result.unreadable_lines) - SHOWN_BAD} more unreadable lines (--json lists "
                      "them all)", markup=False)
    shared = f" ({result.shared} with the answer of a line asking the same body)" if result.shared else ""
    console.print(f"ray: {result.lines} lines: {result.answered} answered{shared}, {result.skipped} answered "
                  f"before, {result.duplicates} duplicates (asked once), {result.errors} failed, "
                  f"{result.unreadable} unreadable, {len(result.conflicts)} conflicting in {result.seconds:.1f} s "
                  f"(cluster {result.address})", markup=False)
    if result.conflicts:
        console.print(f"warning: {len(result.conflicts)} lines give a custom_id a second, different body (the "
                      f"first body was asked): {', '.join(dict.fromkeys(result.conflicts[:SHOWN_BAD]))}",
                      markup=False)
    for cause, n in sorted(result.causes.items()):
        console.print(f"  failed: {n} {cause}", markup=False)
    if as_json:
        sys.stdout.write(json.dumps(result.as_dict(), indent=2) + "\n")
    if result.stopped:
        console.print(f"[bold red]stopped[/]: {escape(result.stopped)}; {result.not_answered} lines not answered "
                      f"(every answer written is kept). Resume: {escape(resume_command())}")
        console.print(f"then: biasatlas batch import --study DIR {out}/*.jsonl", markup=False)
        raise typer.Exit(EXIT_STOPPED)
    console.print(f"next: biasatlas batch import --study DIR {out}/*.jsonl", markup=False)
    if result.errors or result.unreadable or result.conflicts:
        raise typer.Exit(1)
