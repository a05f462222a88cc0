"""A deterministic, scriptable backend for unit tests only."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from biasatlas.records import Request, Response, stable_hash

Script = Callable[[Request], str]


class FakeBackend:
    """Answers from a script (a function of the request), or a seeded pseudo-random option.

    ``fail_every`` makes every n-th call fail (an error Response), to test that errors are
    recorded and retried; ``interrupt_after`` raises KeyboardInterrupt after that many answers.
    """

    def __init__(
        self,
        script: Script | None = None,
        *,
        name: str = "fake",
        fail_keys: set[str] | None = None,
        interrupt_after: int | None = None,
    ) -> None:
        self.id = f"fake:{name}"
        self.script = script
        self.fail_keys = fail_keys or set()
        self.interrupt_after = interrupt_after
        self.calls: list[Request] = []

    def _answer(self, request: Request) -> str:
        if self.script is not None:
            return self.script(request)
        options = request.prompt.options or ("Yes", "No")
        rng = random.Random(stable_hash([request.prompt.text, request.sample_index]))
        return rng.choice(list(options))

    def _respond(self, requests: Sequence[Request], choice: bool) -> Iterator[Response]:
        for request in requests:
            if self.interrupt_after is not None and len(self.calls) >= self.interrupt_after:
                raise KeyboardInterrupt
            self.calls.append(request)
            key = request.cache_key(self.id)
            if key in self.fail_keys:
                yield Response(key=key, backend_id=self.id, error="scripted failure")
                continue
            text = self._answer(request)
            probs = None
            if choice:
                options = list(request.prompt.options)
                probs = {o: (0.9 if o == text else 0.1 / max(len(options) - 1, 1)) for o in options}
            yield Response(key=key, backend_id=self.id, text=text, option_probs=probs, latency_s=0.0)

    def generate(self, requests: Sequence[Request]) -> Iterator[Response]:
        return self._respond(requests, choice=False)

    def score_choices(self, requests: Sequence[Request]) -> Iterator[Response]:
        return self._respond(requests, choice=True)

    def describe(self) -> dict[str, Any]:
        """What a run records about this backend."""
        return {"backend": "fake", "scripted": self.script is not None}

    def close(self) -> None:
        pass
