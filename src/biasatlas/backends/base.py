"""The one interface every model backend implements."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol, runtime_checkable

from biasatlas.records import Request, Response


class BackendError(RuntimeError):
    """A backend cannot be used at all (bad model spec, no key, server unreachable...).

    Raised before any work starts, so the user sees one clear line instead of one error per prompt.
    """


class BackendWarning(UserWarning):
    """A setup problem the run survives (a fleet's server that failed its check); the CLI prints one line."""


class BackendStopped(Exception):
    """Raised from a backend's response iterator to stop a run early (a circuit breaker opened).

    Yield every Response you have (failures included) first, then raise this with a one-line
    ``reason``; the runner commits what it received, records ``status="stopped"`` and
    ``info["stop_reason"] = reason``, and the unanswered prompts stay pending for a resume.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@runtime_checkable
class Backend(Protocol):
    """A model. ``generate`` and ``score_choices`` yield one Response per request, in any order.

    Responses carry the request's cache key, so the runner can store each one the moment it arrives.
    A request that fails yields a Response with ``error`` set; it never raises for one request.
    """

    id: str

    def generate(self, requests: Sequence[Request]) -> Iterable[Response]: ...

    def score_choices(self, requests: Sequence[Request]) -> Iterable[Response]: ...

    def close(self) -> None: ...


class LazyBackend(Backend, Protocol):
    """A backend that pulls its requests from an iterable as it asks them (``takes_requests_lazily``
    true: the HTTP backend), so the runner keys the rest of a plan while the first requests are out."""

    takes_requests_lazily: bool

    def generate(self, requests: Iterable[Request]) -> Iterable[Response]: ...

    def score_choices(self, requests: Iterable[Request]) -> Iterable[Response]: ...


def run_requests(backend: Backend, requests: Sequence[Request]) -> Iterator[Response]:
    """Dispatch requests to ``generate`` or ``score_choices`` by their mode (one call per mode)."""
    choice = [r for r in requests if r.settings.mode == "choice"]
    generate = [r for r in requests if r.settings.mode == "generate"]
    if choice:
        yield from backend.score_choices(choice)
    if generate:
        yield from backend.generate(generate)
