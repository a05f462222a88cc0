"""Which model an HTTP backend asks: the model name *and* the server that serves it.

Two servers may serve models of the same name that answer differently, so the backend id (and with
it every cache key) names the server too: ``openai:{model}@{scheme}://{host}:{port}{path}``. The
URL is normalised so that one server has one id: scheme and host lower-cased, the port always
written (80 for http, 443 for https when the URL leaves it out), the trailing slash, query and
fragment dropped, and never any credentials (``user:pass@`` is stripped). Settings that change
what is asked or how an answer is measured follow after ``#``: ``json`` (structured answers
asked for), ``mean`` (choice scores averaged per token), ``first`` (choice scored from the first
token only), ``tpl-<digest>`` or ``raw`` (the prompt text of full-option scoring).

A fleet (several servers of one model, :mod:`.fleet`) is one model whatever its servers:
``openai:{model}@fleet:{name}`` plus the same flags, so adding or removing a server keeps the cache.
The name is the user's word that the servers serve the same weights the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

DEFAULT_PORTS = {"http": 80, "https": 443}


def endpoint(url: str) -> str:
    """``scheme://host:port/path`` of a base URL: normalised, without credentials, query or fragment."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()  # hostname drops user:pass@ and lower-cases
    if ":" in host:  # an IPv6 address keeps its brackets
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:  # a port that is not a number: keep the URL's text, without credentials
        port = None
    if port is None:
        port = DEFAULT_PORTS.get(scheme)
    where = f"{host}:{port}" if port is not None else host
    path = parts.path.rstrip("/")
    return f"{scheme}://{where}{path}"


def backend_id(model: str, url: str, flags: Sequence[str] = ()) -> str:
    """The id of ``model`` served at ``url``, with the settings that change its answers after ``#``."""
    base = f"openai:{model}@{endpoint(url)}"
    return f"{base}#{','.join(flags)}" if flags else base


def fleet_id(model: str, fleet: str, flags: Sequence[str] = ()) -> str:
    """The id of ``model`` served by the fleet named ``fleet``: no host in it, the flags after ``#``."""
    base = f"openai:{model}@fleet:{fleet}"
    return f"{base}#{','.join(flags)}" if flags else base
