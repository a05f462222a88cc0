"""Fixtures: the OpenAI-compatible stub server (tests/integration/servers/openai_stub.py), prompts, a backend."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import openai_stub as stub_mod  # tests/integration/servers/, on pytest's pythonpath (pyproject.toml)
import pytest

from biasatlas.backends.openai_compat import OpenAIBackend, OpenAIOptions
from biasatlas.records import Message, Prompt


@pytest.fixture(scope="session")
def stub() -> ModuleType:
    """The stub's module: start_stub_thread, render, option_logprob..."""
    return stub_mod


@pytest.fixture(scope="session")
def make_prompts() -> Any:
    return prompts


@pytest.fixture(scope="session")
def make_backend() -> Any:
    return backend


def prompts(n: int, options: tuple[str, ...] = ("Yes", "No"), lang: str = "en") -> list[Prompt]:
    return [
        Prompt(
            probe="http",
            language=lang,
            options=options,
            meta={"i": i, "options": list(options)},
            messages=(Message(role="user", content=f"Question {i} about {'/'.join(options)}?"),),
        )
        for i in range(n)
    ]


def backend(server: Any, **opts: Any) -> OpenAIBackend:
    defaults: dict[str, Any] = {"base_url": server.url, "concurrency": 8, "timeout": 5.0, "backoff_initial": 0.02}
    return OpenAIBackend("stub-model", OpenAIOptions(**{**defaults, **opts}))
