"""Options of the OpenAI-compatible backend, and the CLI's ``--http NAME=VALUE`` settings.

Waiting is bounded three ways: ``timeout`` per attempt, ``deadline`` per request (all its
attempts and waits together), and ``max_wait`` per run (no answer for that long while requests
keep failing stops the run, and so does a server asking for a longer wait; by default 60 s until
the run's first answer, 180 s after it: :mod:`.breaker`). No single wait is
longer than ``retry_after_max`` (the server's Retry-After) or ``backoff_max`` (our backoff).

A fleet (several servers of one model, :mod:`.fleet`) is ``endpoints`` and a ``fleet`` name; an
endpoint is written ``URL`` or ``URL#N`` (N: its concurrency, else ``concurrency``).
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Sequence
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from biasatlas.backends.base import BackendError

#: a fleet's name: it goes into the backend id (and every cache key), so no separators of the id
FLEET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
#: the largest response body read (bytes): an endless or huge answer fails its request instead of
#: filling memory (concurrency x this at most: 256 MiB at the default concurrency of 32). Ordinary
#: answers are a few kB; a 4,096-token answer with 20 top log-probabilities per token would be about
#: 7 MB in OpenAI's format, a /completions echo about 150 bytes per prompt token.
DEFAULT_MAX_BODY = 8 * 2**20
_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "kib": 2**10, "mib": 2**20, "gib": 2**30}
_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([a-z]*)\s*", re.IGNORECASE)


def parse_size(value: Any) -> Any:
    """Bytes from ``8388608``, ``100kB``, ``1.5 MB`` or ``64MiB`` (kB, MB, GB: powers of 1000; KiB, MiB,
    GiB: of 1024); a ValueError otherwise. Anything but text is left to the field's own check."""
    if not isinstance(value, str):
        return value
    found = _SIZE.fullmatch(value)
    unit = _UNITS.get(found.group(2).lower()) if found else None
    if found is None or unit is None:
        raise ValueError("a size in bytes, or with a unit: kB, MB, GB, KiB, MiB, GiB (e.g. 64MB)")
    return int(float(found.group(1)) * unit)


def format_size(size: int) -> str:
    """``16 MiB``, ``100 kB``, ``1234 bytes``: a size as it is best written."""
    for name, unit in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10), ("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if size >= unit and size % unit == 0:
            return f"{size // unit} {name}"
    return f"{size} bytes"


class EndpointSpec(BaseModel):
    """One server of a fleet: its base URL and, optionally, its own concurrency."""

    model_config = ConfigDict(extra="forbid")
    url: str
    concurrency: int | None = Field(default=None, ge=1, le=4096)

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        """``"URL"`` or ``"URL#N"`` (the CLI's and an audit file's short form) as a mapping."""
        return parse_endpoint(value) if isinstance(value, str) else value

    @field_validator("url")
    @classmethod
    def _http_url(cls, url: str) -> str:
        url = url.strip().rstrip("/")
        if not url.startswith(("http://", "https://")):
            raise ValueError("an endpoint URL must start with http:// or https://")
        return url


def parse_endpoint(text: str) -> dict[str, Any]:
    """``URL#N`` -> ``{"url": URL, "concurrency": N}``; a ValueError never repeats the URL (credentials)."""
    url, sep, tail = text.strip().rpartition("#")
    if not sep:
        return {"url": text.strip()}
    if not tail.strip().isdigit() or int(tail) < 1:
        raise ValueError(f"the part after '#' ({tail[:20]!r}) must be the endpoint's concurrency, a whole number >= 1")
    return {"url": url, "concurrency": int(tail)}


def check_fleet_name(name: str) -> str:
    """The name, or a ValueError saying what a fleet name may hold."""
    if not FLEET_NAME.fullmatch(name):
        raise ValueError(f"fleet name {name[:70]!r}: 1-64 letters, digits, '.', '_' or '-', starting with a letter "
                         "or digit")
    return name


class OpenAIOptions(BaseModel):
    """Options of the OpenAI-compatible backend (CLI options of the same names fill them)."""

    model_config = ConfigDict(extra="forbid")
    base_url: str | None = None  # default: $OPENAI_BASE_URL, else OpenAI's
    api_key_env: str = "OPENAI_API_KEY"
    concurrency: int = Field(default=32, ge=1, le=4096)
    timeout: float = Field(default=60.0, gt=0)  # seconds per attempt
    connect_timeout: float = Field(default=10.0, gt=0)
    deadline: float = Field(default=180.0, gt=0)  # seconds per request, all attempts and waits (>= timeout)
    # seconds a run goes on without an answer while failing (None: 60 until its first answer, 180 after)
    max_wait: float | None = Field(default=None, gt=0)
    max_retries: int = Field(default=6, ge=0)
    backoff_initial: float = Field(default=0.5, ge=0)  # first backoff (s); doubles per retry, with jitter
    backoff_max: float = Field(default=30.0, ge=0)
    retry_after_max: float = Field(default=60.0, ge=0)  # cap on a server's Retry-After
    max_body: int = Field(default=DEFAULT_MAX_BODY, ge=1)  # bytes of a response body; past it, the request fails
    rpm: float | None = Field(default=None, gt=0)  # client-side limit, requests per minute
    tpm: float | None = Field(default=None, gt=0)  # client-side limit, tokens per minute (estimated)
    price_prompt: float | None = Field(default=None, ge=0)  # USD per million prompt tokens
    price_completion: float | None = Field(default=None, ge=0)  # USD per million completion tokens
    top_logprobs: int = Field(default=20, ge=1, le=20)  # OpenAI allows at most 20
    check: bool = True  # probe the server before any work
    # "inline": the consuming thread runs the event loop (fastest); "thread": a background thread
    # does (needed where the caller's thread already runs a loop, as in Jupyter); "auto" picks.
    loop: Literal["auto", "inline", "thread"] = "auto"
    # generate mode, prompts with options: ask for {"answer": <option>} as JSON where the server can
    structured: Literal["auto", "off"] = "auto"
    # choice mode: an option's score is the sum of its token log-probabilities, or their mean per token
    choice_norm: Literal["sum", "mean"] = "sum"
    # choice mode: full-option log-probabilities through /completions where possible ("auto"), or
    # the first token's top_logprobs only ("first_token")
    choice_method: Literal["auto", "first_token"] = "auto"
    # prompt text for /completions: None = the server's /apply-template; a .jinja or .gguf file; "raw"
    chat_template: str | None = None
    # a fleet: several servers of one model (backends/http/fleet.py); the name is the model's identity
    endpoints: list[EndpointSpec] = Field(default_factory=list)
    fleet: str | None = None
    fleet_failures: int = Field(default=3, ge=1)  # failed attempts in a row that drain an endpoint
    # seconds without an answer, requests outstanding: drained. None: the attempt timeout (an answer may take
    # that long: a shorter stall drains servers that are slow but on time, and their requests never finish)
    fleet_stall: float | None = Field(default=None, gt=0)
    fleet_health_every: float = Field(default=5.0, gt=0)  # seconds between health checks of a drained endpoint

    @field_validator("max_body", mode="before")
    @classmethod
    def _size(cls, value: Any) -> Any:
        return parse_size(value)

    @field_validator("fleet")
    @classmethod
    def _fleet_name(cls, name: str | None) -> str | None:
        return None if name is None else check_fleet_name(name)

    @model_validator(mode="after")
    def _one_fleet(self) -> OpenAIOptions:
        if len(self.endpoints) > 1 and self.fleet is None:
            raise ValueError(f"{len(self.endpoints)} endpoints and no fleet name: name the fleet (--fleet NAME), "
                             "the model's identity, so that adding or removing a server keeps the cache")
        if self.endpoints and self.base_url:
            raise ValueError("give base_url or endpoints, not both")
        return self

    def known_secrets(self) -> list[str]:
        """The secret values these options send: the API key (from ``api_key_env``) and the passwords of the
        servers' URLs (``user:password@``; ``$OPENAI_BASE_URL`` when no URL is given). The store masks them
        wherever it meets them, in answers too (a server may echo them)."""
        urls = [e.url for e in self.endpoints] or [self.base_url or os.environ.get("OPENAI_BASE_URL") or ""]
        found = [os.environ.get(self.api_key_env, "").strip()]
        for url in urls:
            parts = urlsplit(url)
            if parts.password:  # as typed, as sent, and as the Basic header carries it with the user
                user, password = unquote(parts.username or ""), unquote(parts.password)
                found += [parts.password, password, base64.b64encode(f"{user}:{password}".encode()).decode()]
        return [value for value in dict.fromkeys(found) if value]


SETTABLE = (
    "timeout",
    "connect_timeout",
    "deadline",
    "max_wait",
    "max_retries",
    "backoff_initial",
    "backoff_max",
    "retry_after_max",
    "max_body",
    "rpm",
    "tpm",
    "price_prompt",
    "price_completion",
    "top_logprobs",
    "concurrency",
    "loop",
    "check",
    "structured",
    "choice_norm",
    "choice_method",
    "chat_template",
    "fleet_failures",
    "fleet_stall",
    "fleet_health_every",
)
#: names that would carry a secret: refused without echoing the value
SECRET_SETTINGS = ("api_key", "key", "token", "authorization", "password")


def parse_settings(items: Sequence[str]) -> dict[str, str]:
    """``NAME=VALUE`` pairs (the CLI's repeatable ``--http``) as OpenAIOptions fields.

    Values stay strings: OpenAIOptions converts and checks them. Unknown names are a BackendError
    that names the setting but never repeats its value (it may be a key typed in the wrong place).
    """
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip().replace("-", "_")
        if name.lower() in SECRET_SETTINGS:
            raise BackendError(
                f"--http {name}=... is not taken (a key on the command line ends up in shell history): put the key "
                "in an environment variable and name it with --api-key-env"
            )
        if not sep or name not in SETTABLE:
            shown = f"{name}=..." if sep else (name if name.isidentifier() and len(name) <= 40 else "...")
            raise BackendError(f"--http wants NAME=VALUE with NAME one of {', '.join(SETTABLE)}; got {shown!r}")
        out[name] = value.strip()
    return out
