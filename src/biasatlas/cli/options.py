"""The one options object of every `biasatlas run PROBE` command (and `biasatlas debias`).

Each option is declared once, here. :func:`run_options` adds them to a command's signature and hands
the command a validated :class:`RunOptions` as its ``opts`` argument, so a new run command cannot
forget one, and an option means the same in every probe.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import typer
from pydantic import ValidationError

from biasatlas.backends.http.options import EndpointSpec
from biasatlas.backends.options import BackendOptions
from biasatlas.cli.option_table import NAMED, SHARED


@dataclass
class RunOptions:
    """The shared options of a run: where, which model and how, which languages, how many."""

    study: Path
    backend: BackendOptions
    languages: list[str] | None = None
    seed: int = 0
    samples: int | None = None
    limit: int | None = None
    mode: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    plan_only: bool = False
    progress: bool | None = None
    name: str | None = None
    reader: str | None = None  # None: the reading the study recorded (rules where none)
    judge_model: str | None = None
    #: the judge's backend options: its own server, key and HTTP settings (never the answering model's)
    judge: BackendOptions | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def probe_values(self) -> dict[str, Any]:
        """The fields every probe config takes (None = the probe's default)."""
        return {
            "languages": self.languages,
            "seed": self.seed,
            "samples": self.samples,
            "limit": self.limit,
            "mode": self.mode,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
        }


def split_values(values: list[str] | None, option: str = "the option") -> list[str] | None:
    """Accept both repeated options and comma-separated lists; a list given empty (``--lang ,``) is a usage
    error, not the default (issue 42)."""
    if not values:
        return None
    out = [v.strip() for item in values for v in item.split(",") if v.strip()]
    if not out:
        raise _bad(option, ",".join(values), "names nothing; give at least one value, or leave the option out")
    return out




def _bad(option: str, value: Any, rule: str) -> typer.BadParameter:
    return typer.BadParameter(f"{option} {value!r}: {rule}")


def _servers(
    given: str | list[str] | None, fleet: str | None, concurrency: int | None
) -> tuple[str | None, list[EndpointSpec], int | None]:
    """``--base-url`` (repeated, each ``URL`` or ``URL#N``) and ``--fleet`` as (base_url, endpoints, concurrency).

    One server without a fleet name is a plain base URL (its ``#N`` is its concurrency); a fleet
    name, or several servers, make a fleet, and several servers need a name.
    """
    from biasatlas.backends.http.options import check_fleet_name, parse_endpoint

    urls = [given] if isinstance(given, str) else list(given or [])
    if fleet is not None:
        try:
            check_fleet_name(fleet)
        except ValueError as exc:
            raise _bad("--fleet", fleet, str(exc).partition(": ")[2]) from None
    if len(urls) > 1 and fleet is None:
        raise typer.BadParameter(f"--base-url is given {len(urls)} times: several servers of one model are a fleet; "
                                 "name it with --fleet NAME (its identity in the cache, so adding a server keeps it)")
    if fleet is not None and not urls:
        raise typer.BadParameter(f"--fleet {fleet!r}: give its servers with --base-url (repeated)")
    endpoints = []
    for url in urls:
        try:
            endpoints.append(EndpointSpec.model_validate(parse_endpoint(url)))
        except ValueError as exc:  # never repeat the URL: it may hold credentials
            from biasatlas.backends.http.setup import safe_url

            message = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
            raise typer.BadParameter(f"--base-url {safe_url(url.partition('#')[0])!r}: "
                                     f"{message.removeprefix('Value error, ')}") from None
    if fleet is None and endpoints:  # one plain server: no fleet object in the way
        return endpoints[0].url, [], endpoints[0].concurrency or concurrency
    return None, endpoints, concurrency


def build_options(values: dict[str, Any]) -> RunOptions:
    """Validate the shared CLI values into RunOptions (usage errors name the option and the value)."""
    for name, option in (("concurrency", "--concurrency"), ("batch_size", "--batch-size"),
                         ("samples", "--samples"), ("limit", "--limit"), ("max_tokens", "--max-tokens")):
        value = values.get(name)
        if value is not None and value < 1:
            raise _bad(option, value, "must be at least 1")
    temperature = values.get("temperature")
    if temperature is not None and not 0 <= temperature <= 5:
        raise _bad("--temperature", temperature, "must be between 0 and 5")
    if values.get("mode") is not None and values["mode"] not in ("choice", "generate"):
        raise _bad("--mode", values["mode"], "valid: choice, generate")
    dtype = values.get("dtype")
    if dtype is not None and dtype not in ("auto", "float32", "bfloat16", "float16"):
        raise _bad("--dtype", dtype, "valid: auto, float32, bfloat16, float16")
    for name, option, valid in (("structured", "--structured", ("auto", "off")),
                                ("choice_norm", "--choice-norm", ("sum", "mean"))):
        if values.get(name) is not None and values[name] not in valid:
            raise _bad(option, values[name], f"valid: {', '.join(valid)}")
    if values.get("http"):
        from biasatlas.backends.base import BackendError
        from biasatlas.backends.openai_compat import parse_settings

        try:
            parse_settings(values["http"])
        except BackendError as exc:
            raise typer.BadParameter(str(exc)) from None
    base_url, endpoints, concurrency = _servers(values.get("base_url"), values.get("fleet"), values.get("concurrency"))
    backend = BackendOptions(
        model=values["model"],
        base_url=base_url,
        endpoints=endpoints,
        fleet=values.get("fleet"),
        api_key_env=values.get("api_key_env") or "OPENAI_API_KEY",
        concurrency=concurrency,
        http=list(values.get("http") or []),
        adapter=values.get("adapter"),
        batch_size=values.get("batch_size"),
        dtype=dtype,
        structured=values.get("structured"),
        choice_norm=values.get("choice_norm"),
    )
    reader, judge_model = _reader(values.get("reader"), values.get("judge_model"))
    if reader not in ("judge", "both"):
        _no_judge_server(values)
    judge = _judge(judge_model, values) if reader in ("judge", "both") else None
    display_name = values.get("name")
    if display_name is not None and not display_name.strip():
        raise _bad("--name", display_name, "must not be empty")
    return RunOptions(
        name=display_name.strip() if display_name is not None else None,
        study=values["study"],
        backend=backend,
        languages=split_values(values.get("lang"), "--lang"),
        seed=values.get("seed", 0),
        samples=values.get("samples"),
        limit=values.get("limit"),
        mode=values.get("mode"),
        max_tokens=values.get("max_tokens"),
        temperature=temperature,
        plan_only=bool(values.get("plan_only")),
        progress=values.get("progress"),
        reader=reader,
        judge_model=judge_model,
        judge=judge,
    )


def _reader(reader: str | None, judge_model: str | None) -> tuple[str | None, str | None]:
    """``--reader`` and ``--judge-model``, checked: a judge reading needs its judge, rules take none."""
    from biasatlas.readers import READERS

    if reader is not None and reader not in READERS:
        raise _bad("--reader", reader, f"valid: {', '.join(READERS)}")
    if reader in ("judge", "both") and not (judge_model or "").strip():
        raise typer.BadParameter(f"--reader {reader} needs --judge-model SPEC (the model that reads the answers)")
    if judge_model is not None and reader in (None, "rules"):
        raise _bad("--judge-model", judge_model, "is used by --reader judge or --reader both only")
    return reader, judge_model.strip() if judge_model else None


#: the judge's server options (cli/option_table.JUDGE_SERVER) and their flags
JUDGE_FLAGS = {"judge_base_url": "--judge-base-url", "judge_api_key_env": "--judge-api-key-env",
               "judge_http": "--judge-http", "judge_concurrency": "--judge-concurrency"}


def _given_judge_server(values: dict[str, Any]) -> list[str]:
    return [flag for name, flag in JUDGE_FLAGS.items() if values.get(name) not in (None, [])]


def _no_judge_server(values: dict[str, Any]) -> None:
    """Without a judge reading, a judge server option is a mistake, not something to ignore."""
    given = _given_judge_server(values)
    if given:
        raise typer.BadParameter(f"{given[0]} is the judge's: it is used with --reader judge|both and --judge-model")


def _judge(spec: str | None, values: dict[str, Any]) -> BackendOptions | None:
    """The judge's backend options: the spec and its own server options only, as an audit file's judge_model.

    A judge served over HTTP (``openai:``) without ``--judge-base-url`` is asked at the provider's default
    ($OPENAI_BASE_URL, else OpenAI's), never at the answering model's --base-url; a server-less judge (local,
    GGUF, fake) takes no server option.
    """
    from biasatlas.reading_step import over_http

    if spec is None:
        return None
    given = _given_judge_server(values)
    if given and not over_http(spec):
        raise typer.BadParameter(f"{given[0]}: the judge {spec} is not served over HTTP; only an openai:MODEL "
                                 "judge takes a server option")
    concurrency = values.get("judge_concurrency")
    if concurrency is not None and concurrency < 1:
        raise _bad("--judge-concurrency", concurrency, "must be at least 1")
    http = list(values.get("judge_http") or [])
    if http:
        from biasatlas.backends.base import BackendError
        from biasatlas.backends.openai_compat import parse_settings

        try:
            parse_settings(http)
        except BackendError as exc:
            raise typer.BadParameter(f"--judge-http: {exc}") from None
    base_url = values.get("judge_base_url")
    if base_url is not None:
        try:
            server = EndpointSpec.model_validate(base_url)  # URL or URL#N, as --base-url
        except ValidationError as exc:  # never repeat the URL: it may hold credentials
            from biasatlas.backends.http.setup import safe_url

            message = str(exc.errors()[0]["msg"]).removeprefix("Value error, ")
            raise typer.BadParameter(f"--judge-base-url {safe_url(base_url.partition('#')[0])!r}: "
                                     f"{message}") from None
        base_url, concurrency = server.url, server.concurrency or concurrency
    return BackendOptions(model=spec, base_url=base_url, api_key_env=values.get("judge_api_key_env")
                          or "OPENAI_API_KEY", concurrency=concurrency, http=http)


def run_options(func: Callable[..., Any] | None = None, *, named: bool = False) -> Callable[..., Any]:
    """Give a command every shared option; it receives them as ``opts: RunOptions``.

    The command declares only its probe-specific options (and ``opts``). An option a command
    declares itself under a shared name is an error at import, so the set cannot drift.
    ``@run_options(named=True)`` (every `run PROBE`) adds ``--name``, the model's display name.
    """
    if func is None:
        return functools.partial(run_options, named=named)
    options = {**SHARED, **NAMED} if named else SHARED
    hints = typing.get_type_hints(func, include_extras=True)
    own = [
        p.replace(annotation=hints.get(p.name, p.annotation))
        for p in inspect.signature(func).parameters.values()
        if p.name != "opts"
    ]
    clash = [p.name for p in own if p.name in options]
    if clash:
        raise TypeError(f"{func.__name__} declares shared run options itself: {clash}")
    shared = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
        for name, (annotation, default) in options.items()
    ]
    own = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own]

    @functools.wraps(func)
    def wrapper(**kwargs: Any) -> Any:
        values = {name: kwargs.pop(name) for name in options}
        return func(opts=build_options(values), **kwargs)

    parameters = shared[:1] + own + shared[1:]  # --study first in --help
    wrapper.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in parameters}
    del wrapper.__wrapped__  # typer must read the new signature, not the wrapped one
    return wrapper


#: every option run_options gives a command (the NAMED ones only to `run PROBE` commands, not to debias)
SHARED_OPTION_NAMES: tuple[str, ...] = tuple(SHARED) + tuple(NAMED)
