"""Setup checks of an OpenAI-compatible server, run once before any work.

Each problem becomes one BackendError line: no key for OpenAI, a URL that does not answer, a
server that does not speak the API, a rejected key, an unknown model, a redirect loop.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import aiohttp

from biasatlas.backends.base import BackendError
from biasatlas.backends.http.client import AttemptError, ChatClient, Fatal, Retryable, connection_detail

OPENAI_URL = "https://api.openai.com/v1"
KEY_REQUIRED_HOSTS = ("api.openai.com", "openrouter.ai", "api.groq.com", "api.together.xyz", "api.mistral.ai")


def safe_url(url: str) -> str:
    """The URL without user, password, query or fragment: safe to print and to record."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


def needs_key(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    return any(host == h or host.endswith("." + h) for h in KEY_REQUIRED_HOSTS)


def _hint(url: str) -> str:
    return "" if urlsplit(url).path.rstrip("/").endswith("/v1") else f" (did you mean {safe_url(url)}/v1?)"


async def check_server(client: ChatClient, model: str, key_env: str, timeout: float,
                       configured: float | None = None) -> list[str]:
    """Raise BackendError unless the server answers chat completions for ``model``.

    ``GET /models`` first; when it lists the model, that is enough. Otherwise one chat request of
    a single token decides (many local servers serve any name they are given). Returns the models
    the server lists (possibly empty). ``configured``: the ``--http timeout`` a silent server is told of.
    """
    url = safe_url(client.base_url)
    listed: list[str] = []
    try:
        status, data, _ctype = await client.get_json("/models", timeout)
    except aiohttp.TooManyRedirects as exc:
        raise BackendError(_redirect_line(url, len(exc.history))) from None
    except TimeoutError:
        raise BackendError(f"no reply from {url} within {timeout:g} s"
                           f" (--http timeout={configured if configured is not None else timeout:g})") from None
    except aiohttp.ClientConnectionError as exc:
        raise BackendError(connection_detail(exc, url)) from None
    except aiohttp.ClientError as exc:
        raise BackendError(f"cannot talk to {url}: {type(exc).__name__}: {exc}") from None
    if status in (401, 403):
        raise BackendError(f"{url} rejected the API key from ${key_env} (HTTP {status})")
    if status == 200 and isinstance(data, dict) and isinstance(data.get("data"), list):
        listed = [str(m.get("id")) for m in data["data"] if isinstance(m, dict) and m.get("id")]
        if model in listed:
            return listed
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": "user", "content": "Say OK."}],
        "max_tokens": 1,
        "temperature": 0,
    }
    try:
        await client.attempt(json.dumps(body).encode(), timeout=aiohttp.ClientTimeout(total=timeout))
    except Retryable as exc:
        if exc.cause == "connection":
            raise BackendError(exc.detail) from None
        if exc.cause == "timeout":
            raise BackendError(f"no reply from {url} within {timeout:g} s"
                               f" (--http timeout={configured if configured is not None else timeout:g})") from None
        if exc.cause in ("malformed_json", "empty_choices"):
            raise BackendError(_not_openai(url, f"{exc.detail} on POST …/chat/completions")) from None
        return listed  # busy or rate-limited right now: the run's retries deal with that
    except Fatal as exc:
        raise BackendError(_fatal_line(exc, url, model, key_env, listed)) from None
    except AttemptError as exc:  # pragma: no cover - the two subclasses above are all there is
        raise BackendError(f"{url}: {exc}") from None
    return listed


def _redirect_line(url: str, hops: int) -> str:
    return f"{url} redirects in a loop ({hops} redirects): check --base-url"


def _fatal_line(exc: Fatal, url: str, model: str, key_env: str, listed: list[str]) -> str:
    if exc.cause == "redirect_loop":
        return f"{url} {exc.detail.removeprefix('the server ')}: check --base-url"
    status = exc.cause.removeprefix("http_")
    offer = f"; the server offers: {', '.join(listed[:20])}" if listed else ""
    if status in ("401", "403"):
        return f"{url} rejected the API key from ${key_env} (HTTP {status})"
    if status == "404" and listed:
        return f"unknown model {model!r} at {url} ({exc.detail}){offer}"
    if status == "404":
        return f"{url} has no chat completions endpoint for model {model!r} ({exc.detail}){_hint(url)}"
    if status in ("400", "422") and "model" in exc.detail.lower():
        return f"unknown model {model!r} at {url} ({exc.detail}){offer}"
    if status in ("400", "422"):
        return f"{url} refused a test request for model {model!r}: {exc.detail}"
    detail = exc.detail.removeprefix(f"HTTP {status}").removeprefix(":").strip()
    return _not_openai(url, f"HTTP {status} on POST …/chat/completions" + (f": {detail}" if detail else ""))


def _not_openai(url: str, what: str) -> str:
    """``URL: not an OpenAI-compatible endpoint (HTTP 501 on POST …/chat/completions)``, with the /v1 hint."""
    return f"{url}: not an OpenAI-compatible endpoint ({what}){_hint(url)}"
