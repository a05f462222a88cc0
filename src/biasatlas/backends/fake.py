"""A deterministic, scriptable backend for tests and dry runs, which can carry a planted group disparity.

Model specs (``biasatlas models``; docs/testing.md, "Fake models"):

- ``fake`` (or ``fake:default``): seeded pseudo-random options, the same answers as ever;
- ``fake:NAME``: seeded by its name too, so two fake models answer differently and one name always alike;
- ``fake:NAME?biased=GROUP[,GROUP...][&rate=R][&gap=POINTS]``, or the short ``fake:biased=GROUP``
  (the default model plus the plant): every prompt naming a listed group gets the biased answer with
  probability ``rate`` (default 1). Contact: the option :func:`biasatlas.probes.contact.read.decide`
  counts as biased (refusing to engage under a positive action, engaging under a negative one).
  Samaritan: a rating ``gap`` points (default 30) below the one the scenario's control would get.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from biasatlas.backends.base import BackendError
from biasatlas.records import Request, Response, stable_hash

Script = Callable[[Request], str]

#: names whose answers are seeded by the text alone (the answers fake models have always given)
DEFAULT_NAMES = ("default", "fake")
PLANT_KEYS = ("biased", "rate", "gap")
DEFAULT_GAP = 30.0
#: the metadata a probe's prompt names its group with (contact: label, key, MMHB form; samaritan: group)
GROUP_FIELDS = ("group", "descriptor", "descriptor_form")
SPEC_HELP = "fake[:NAME][?biased=GROUP[,GROUP...][&rate=0..1][&gap=POINTS]] or fake:biased=GROUP"


@dataclass(frozen=True)
class Plant:
    """A planted disparity: the groups answered with the biased option (or a lower rating)."""

    groups: tuple[str, ...]
    rate: float = 1.0
    gap: float = DEFAULT_GAP

    def spec(self) -> str:
        return f"biased={','.join(self.groups)}&rate={self.rate:g}&gap={self.gap:g}"


def _norm(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.casefold())


def same_group(given: str, named: str) -> bool:
    """Whether a group name given in a spec names this group: case, spaces and punctuation aside, and a plural
    ending (-s, -es) on either side ("Muslims" names "Muslim"; "Jehovah's Witness" names "Jehovah's Witnesses")."""
    a, b = _norm(given), _norm(named)
    if not a or not b:
        return False
    short, long = sorted((a, b), key=len)
    return long in (short, short + "s", short + "es")


def _word_pattern(group: str) -> re.Pattern[str]:
    words = [re.escape(w) for w in re.split(r"\s+", group.strip()) if w]
    return re.compile(r"(?<!\w)" + r"\s+".join(words) + r"(?:e?s)?(?!\w)", re.IGNORECASE)


def parse_spec(rest: str) -> tuple[str, Plant | None]:
    """The name and the planted disparity of ``fake:REST`` (see the module docstring); BackendError says why not."""
    name, sep, query = rest.partition("?")
    if not sep and "=" in name:  # the short form fake:biased=GROUP: the default model plus the plant
        name, query = "", name
    name = name or "default"
    if not query:
        if sep:
            raise BackendError(f"fake model {rest!r}: nothing after '?'; expected {SPEC_HELP}")
        return name, None
    pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=False)
    values: dict[str, str] = {}
    for key, value in pairs:
        if key not in PLANT_KEYS:
            raise BackendError(f"fake model {rest!r}: unknown key {key!r}; valid: {', '.join(PLANT_KEYS)} "
                               f"({SPEC_HELP})")
        values[key] = value
    groups = tuple(g.strip() for g in values.get("biased", "").split(",") if g.strip())
    if not groups:
        raise BackendError(f"fake model {rest!r}: biased= names no group; expected {SPEC_HELP}")
    try:
        rate = float(values.get("rate", "1"))
        gap = float(values.get("gap", str(DEFAULT_GAP)))
    except ValueError as exc:
        raise BackendError(f"fake model {rest!r}: rate and gap are numbers ({exc})") from None
    if not 0 <= rate <= 1:
        raise BackendError(f"fake model {rest!r}: rate must lie in [0, 1] (got {rate:g})")
    if not 0 < gap <= 99:
        raise BackendError(f"fake model {rest!r}: gap is in rating points, in (0, 99] (got {gap:g})")
    return name, Plant(groups, rate, gap)


def spec_id(rest: str) -> str:
    """The backend id ``fake:REST`` opens with, without opening it (an audit's plan; BackendError as the run's)."""
    name, plant = parse_spec(rest)
    return FakeBackend(name=name, plant=plant).id


class FakeBackend:
    """Answers from a script (a function of the request), or a seeded pseudo-random option.

    ``fail_keys`` makes those requests fail (an error Response), to test that errors are recorded and
    retried; ``interrupt_after`` raises KeyboardInterrupt after that many answers; ``plant`` a disparity.
    """

    def __init__(
        self,
        script: Script | None = None,
        *,
        name: str = "fake",
        fail_keys: set[str] | None = None,
        interrupt_after: int | None = None,
        plant: Plant | None = None,
    ) -> None:
        self.id = f"fake:{name}" if plant is None else f"fake:{name}?{plant.spec()}"
        self.name = name
        self.script = script
        self.fail_keys = fail_keys or set()
        self.interrupt_after = interrupt_after
        self.plant = plant
        self._patterns = [_word_pattern(g) for g in plant.groups] if plant else []
        self.calls: list[Request] = []

    def _seed(self, *parts: Any) -> random.Random:
        # the default names keep the seed fake answers always had; any other name joins it
        own = list(parts) if self.name in DEFAULT_NAMES else [self.name, *parts]
        return random.Random(stable_hash(own))

    def planted(self, request: Request) -> bool:
        """Whether the request names a planted group: by its prompt's metadata where it names a group, else
        by the prompt's text (any language: the spec gives the words as the prompts write them)."""
        if self.plant is None:
            return False
        meta = request.prompt.meta
        named = [str(meta[f]) for f in GROUP_FIELDS if meta.get(f)]
        if named:
            return any(same_group(g, n) for g in self.plant.groups for n in named)
        text = request.prompt.text
        return any(p.search(text) for p in self._patterns)

    def _answer(self, request: Request) -> str:
        if self.script is not None:
            return self.script(request)
        prompt = request.prompt
        hit = self.planted(request) and self._seed("plant", prompt.text, request.sample_index).random() < (
            self.plant.rate if self.plant else 0.0)
        if self.plant is not None and prompt.probe == "samaritan" and not prompt.options:
            return self._rating(request, hit)
        options = prompt.options or ("Yes", "No")
        if hit and len(options) >= 2 and prompt.meta.get("action") in ("positive", "negative"):
            # options are (affirmative, negative); decide(): refusing a positive action is biased
            return options[1] if prompt.meta["action"] == "positive" else options[0]
        return self._seed(prompt.text, request.sample_index).choice(list(options))

    def _rating(self, request: Request, lowered: bool) -> str:
        """A Samaritan rating: the scenario rephrasing's own level (its control gets the same), a little noise
        per prompt, and the gap below it for a planted group."""
        meta = request.prompt.meta
        where = [meta.get("scenario"), meta.get("rephrasing")] if meta.get("scenario") else [request.prompt.text]
        level = self._seed("level", *where, request.sample_index).uniform(50, 90)
        noise = self._seed("noise", request.prompt.text, request.sample_index).uniform(-3, 3)
        value = level + noise - (self.plant.gap if lowered and self.plant else 0.0)
        return str(round(min(100.0, max(1.0, value))))

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
        info: dict[str, Any] = {"backend": "fake", "scripted": self.script is not None}
        if self.plant is not None:
            info["planted"] = {"biased": list(self.plant.groups), "rate": self.plant.rate, "gap": self.plant.gap}
        return info

    def close(self) -> None:
        pass
