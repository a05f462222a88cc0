"""Options of the OpenAI-compatible backend, and the CLI's ``--http NAME=VALUE`` settings.

Waiting is bounded three ways: ``timeout`` per attempt, ``deadline`` per request (all its
attempts and waits together), and ``max_wait`` per run (no answer for that long while requests
keep failing stops the run, and so does a server asking for a longer wait). No single wait is
longer than ``retry_after_max`` (the server's Retry-After) or ``backoff_max`` (our backoff).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from biasatlas.backends.base import BackendError


class OpenAIOptions(BaseModel):
    """Options of the OpenAI-compatible backend (CLI options of the same names fill them)."""

    model_config = ConfigDict(extra="forbid")
    base_url: str | None = None  # default: $OPENAI_BASE_URL, else OpenAI's
    api_key_env: str = "OPENAI_API_KEY"
    concurrency: int = Field(default=32, ge=1, le=4096)
    timeout: float = Field(default=60.0, gt=0)  # seconds per attempt
    connect_timeout: float = Field(default=10.0, gt=0)
    deadline: float = Field(default=180.0, gt=0)  # seconds per request, all attempts and waits (>= timeout)
    max_wait: float = Field(default=180.0, gt=0)  # seconds a run goes on without an answer while failing
    max_retries: int = Field(default=6, ge=0)
    backoff_initial: float = Field(default=0.5, ge=0)  # first backoff (s); doubles per retry, with jitter
    backoff_max: float = Field(default=30.0, ge=0)
    retry_after_max: float = Field(default=60.0, ge=0)  # cap on a server's Retry-After
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


SETTABLE = (
    "timeout",
    "connect_timeout",
    "deadline",
    "max_wait",
    "max_retries",
    "backoff_initial",
    "backoff_max",
    "retry_after_max",
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
