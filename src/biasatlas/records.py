"""Typed, frozen records that flow through the pipeline: Prompt -> Request -> Response -> Outcome."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from json.encoder import encode_basestring as _string  # a str as canonical_json writes it
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, computed_field

Mode = Literal["generate", "choice"]


# One encoder for every call: json.dumps with options builds a new encoder each time.
_ENCODER = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace: the stable text every hash is taken over."""
    return _ENCODER.encode(value)


# The C encoder behind _ENCODER, built once and without the cycle check, for values that cannot hold a
# cycle: encode() builds one per call (~1.5 µs of the store's ~15 µs per answer). None without the C module.
_C_MAKE_ENCODER = getattr(json.encoder, "c_make_encoder", None)
_TREE_ENCODER = (
    None if _C_MAKE_ENCODER is None else _C_MAKE_ENCODER(None, str, _string, None, ":", ",", True, False, True)
)


def canonical_tree_json(value: Any) -> str:
    """``canonical_json(value)`` (the same text) for a value without reference cycles, such as what
    :func:`scrub_value` returns or a validated ``dict[str, float]``; a cycle recurses until RecursionError."""
    if _TREE_ENCODER is None:
        return canonical_json(value)
    return "".join(_TREE_ENCODER(value, 0))


def _sha(text: str, length: int) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]


def stable_hash(value: Any, length: int = 32) -> str:
    """A sha256 hex digest (truncated) of the canonical JSON of ``value``."""
    return _sha(canonical_json(value), length)


# Compact JSON of an object is the same wherever the object sits, so a canonical document can be
# put together from canonical parts, keys in sorted order: the hot path of large plans does that
# with each prompt's parts serialised once (tests check it equals canonical_json of the whole).


@lru_cache(maxsize=256)
def _settings_json(settings: GenerationSettings) -> tuple[str, str]:
    """(output-relevant settings, all settings) as canonical JSON, once per distinct settings."""
    return canonical_json(settings.output_relevant()), canonical_json(settings.model_dump())


class Message(BaseModel):
    """One chat message."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    role: Literal["system", "user", "assistant"]
    content: str


class Prompt(BaseModel):
    """What to ask a model, with every design factor of the probe in ``meta``.

    ``id`` is a stable hash of the content *and* the metadata, so the same text used in two
    design cells is two prompts (but one cached model call, see :meth:`Request.cache_key`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    probe: str
    language: str
    messages: tuple[Message, ...]
    options: tuple[str, ...] = ()
    meta: dict[str, Any] = Field(default_factory=dict)
    # Hashing is the hot path of large plans: the id and the JSON parts are computed once per object.
    _id: str | None = PrivateAttr(default=None)
    _parts: tuple[str, ...] | None = PrivateAttr(default=None)  # (messages, options[, meta]): see asked_parts

    def __eq__(self, other: object) -> bool:  # fields only, not the memo
        return isinstance(other, type(self)) and self.model_dump() == other.model_dump()

    __hash__ = None  # type: ignore[assignment]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def id(self) -> str:
        memo = self.__pydantic_private__  # not self._id: pydantic's __getattr__ costs ~1 µs a read
        if memo["_id"] is None:  # type: ignore[index]
            memo["_id"] = self._compute_id()  # type: ignore[index]
        return memo["_id"]  # type: ignore[index]

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy; its id and JSON parts are computed afresh (a copy may have other fields)."""
        copy = super().model_copy(update=update, deep=deep)
        copy.__pydantic_private__ = {"_id": None, "_parts": None}
        return copy

    def json_parts(self) -> tuple[str, str, str]:
        """Canonical JSON of (messages, options, meta), as stored and hashed."""
        memo = self.__pydantic_private__
        parts = memo["_parts"]  # type: ignore[index]
        if parts is None or len(parts) == 2:
            messages, options = self.asked_parts()
            parts = memo["_parts"] = (messages, options, canonical_json(self.meta))  # type: ignore[index]
        return parts

    def asked_parts(self) -> tuple[str, str]:
        """Canonical JSON of (messages, options): what a cache key needs. The meta is left for when
        the prompt is stored (~5 µs of a contact prompt's, before a run's first request otherwise)."""
        memo = self.__pydantic_private__
        parts = memo["_parts"]  # type: ignore[index]
        if parts is None:
            # = canonical_json of [{"content", "role"}, ...] and of list(options), without the encoder's overhead
            messages = ",".join(f'{{"content":{_string(m.content)},"role":{_string(m.role)}}}' for m in self.messages)
            options = ",".join(_string(o) for o in self.options)
            parts = memo["_parts"] = (f"[{messages}]", f"[{options}]")  # type: ignore[index]
        return parts[0], parts[1]

    def _compute_id(self) -> str:
        # = stable_hash({"probe", "language", "messages", "options", "meta"}, 24), keys in sorted order
        messages, options, meta = self.json_parts()
        return _sha(
            f'{{"language":{_string(self.language)},"messages":{messages},"meta":{meta},'
            f'"options":{options},"probe":{_string(self.probe)}}}',
            24,
        )

    @property
    def text(self) -> str:
        """The user-visible text of the prompt (all messages joined), for display and length sorting."""
        return "\n".join(m.content for m in self.messages)


class GenerationSettings(BaseModel):
    """How to ask: the mode and the decoding settings (finite numbers only: a temperature of
    ``inf`` is not JSON in a request body, and a local backend would sample noise)."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)
    mode: Mode = "generate"
    max_tokens: int = Field(default=16, ge=1)
    temperature: float = Field(default=0.0, ge=0.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    seed: int = 0

    def output_relevant(self) -> dict[str, Any]:
        """The settings that can change a model's output, and so belong in the cache key.

        In ``choice`` mode nothing is decoded, so decoding settings are irrelevant; with greedy
        decoding the seed and top_p cannot change the output.
        """
        if self.mode == "choice":
            return {"mode": "choice"}
        relevant: dict[str, Any] = {"mode": "generate", "max_tokens": self.max_tokens}
        if self.temperature > 0:
            relevant.update(temperature=self.temperature, top_p=self.top_p, seed=self.seed)
        else:
            relevant["temperature"] = 0.0
        return relevant


class Request(BaseModel):
    """A prompt, the generation settings and the sample index: one model call."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    prompt: Prompt
    settings: GenerationSettings = GenerationSettings()
    sample_index: int = Field(default=0, ge=0)
    _keys: dict[str, str] = PrivateAttr(default_factory=dict)

    def __eq__(self, other: object) -> bool:  # fields only, not the memo
        return isinstance(other, type(self)) and self.model_dump() == other.model_dump()

    __hash__ = None  # type: ignore[assignment]

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy with keys of its own (not the original's memo, which a copy may not share)."""
        copy = super().model_copy(update=update, deep=deep)
        copy.__pydantic_private__ = {"_keys": {}}
        return copy

    def cache_key(self, backend_id: str) -> str:
        """The stored response's key for this backend (computed once per backend, then remembered)."""
        keys: dict[str, str] = self.__pydantic_private__["_keys"]  # type: ignore[index]
        key = keys.get(backend_id)
        if key is None:
            key = keys[backend_id] = self._compute_key(backend_id)
        return key

    def _compute_key(self, backend_id: str) -> str:
        """Key of the stored response: backend, what the model sees, output-relevant settings, sample.

        The probe name and metadata are left out on purpose: the same question asked by two probes
        (or two design cells) is answered once.
        """
        # = stable_hash({"backend", "messages", "settings", "sample"[, "options" in choice mode]}, 40)
        messages, options = self.prompt.asked_parts()
        relevant, _ = _settings_json(self.settings)
        choice = f',"options":{options}' if self.settings.mode == "choice" else ""
        return _sha(
            f'{{"backend":{_string(backend_id)},"messages":{messages}{choice},'
            f'"sample":{int(self.sample_index)},"settings":{relevant}}}',
            40,
        )

    def request_json(self) -> str:
        """What was asked, as stored with the answer: messages, options, settings, sample index."""
        messages, options = self.prompt.asked_parts()
        _, settings = _settings_json(self.settings)
        return (
            f'{{"messages":{messages},"options":{options},"sample_index":{int(self.sample_index)},'
            f'"settings":{settings}}}'
        )


class Response(BaseModel):
    """What a backend returned for one request (or the error it met)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    key: str
    backend_id: str
    text: str | None = None
    option_probs: dict[str, float] | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float | None = None
    finish_reason: str | None = None
    error: str | None = None
    info: dict[str, Any] = Field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None


class Outcome(BaseModel):
    """A parsed response: the value, or None with the reason it could not be parsed."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    value: Any = None
    reason: str | None = None
    extra: dict[str, Any] = Field(default_factory=dict)


# ---- credentials never reach a study ---------------------------------------------------------
# What the store writes besides model answers (errors, info, run config and totals) goes through
# scrub_value: a server that echoes the request's headers, a URL with user:password, an --http
# api_key=... value or a resume command line must not leave a secret in an archived study.
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@\"'\\<>]+@")
_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/-]{8,}=*")
_BASIC = re.compile(r"(?i)\b(basic\s+)([A-Za-z0-9+/]{4,}={0,2})(?![A-Za-z0-9+/=])")
_AUTH_HEADER = re.compile(r"(?i)\b((?:proxy-)?authorization\b[\"']?\s*[:=]\s*[\"']?)([^\"'\\\r\n,;}]+)")
_KEY_VALUE = re.compile(
    r"(?i)\b((?:x-)?(?:api[_-]?key|access[_-]?token|auth[_-]?token|refresh[_-]?token|client[_-]?secret|secret"
    r"|password|passwd)\b[\"']?\s*[:=]\s*[\"']?)([^\s\"'\\,;&}]+)"
)
_PROVIDER_KEY = re.compile(r"\b(sk|pk|rk|hf|gsk|xai)([-_])[A-Za-z0-9_-]{12,}")
_BASE64 = re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{8,}={0,2}(?![A-Za-z0-9+/=])")
SECRET_NAMES = frozenset(
    {"api_key", "apikey", "api-key", "access_token", "auth_token", "token", "secret", "client_secret",
     "password", "passwd", "authorization", "proxy-authorization", "x-api-key"}
)
MASK = "***"


def _userpass_b64(match: re.Match[str]) -> str:
    """A base64 run that decodes to ``user:password`` (an echoed Basic header) is masked."""
    return _mask_userpass(match.group(0))


def _mask_userpass(token: str) -> str:
    try:
        raw = base64.b64decode(token + "=" * (-len(token) % 4), validate=True)
        text = raw.decode("ascii")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return token
    user, sep, password = text.partition(":")
    if sep and user and password and text.isprintable() and " " not in text:
        return MASK
    return token


def scrub_text(text: str) -> str:
    """``text`` with credentials masked: URL userinfo, Authorization values, key=value secrets,
    provider keys (sk-...) and base64 of ``user:password``."""
    # The short strings of answers' info repeat ("first_token", ...): each is scrubbed once.
    return _scrub_short(text) if len(text) <= 256 else _scrub(text)


def _scrub(text: str) -> str:
    text = _URL_USERINFO.sub(rf"\1{MASK}@", text)
    text = _AUTH_HEADER.sub(rf"\1{MASK}", text)
    text = _BEARER.sub(rf"\1{MASK}", text)
    text = _BASIC.sub(lambda m: m.group(1) + _mask_userpass(m.group(2)), text)
    text = _KEY_VALUE.sub(rf"\1{MASK}", text)
    text = _PROVIDER_KEY.sub(rf"\1\2{MASK}", text)
    return _BASE64.sub(_userpass_b64, text)


_scrub_short = lru_cache(maxsize=4096)(_scrub)


def _secret_item(key: Any, value: Any) -> bool:
    return isinstance(key, str) and isinstance(value, str) and bool(value) and key.lower() in SECRET_NAMES


def scrub_value(value: Any) -> Any:
    """A JSON-like value with every string scrubbed, the values of secret-named keys masked, and NaN or
    Infinity (a server's -inf log-probability) as None: what is stored must be valid JSON."""
    kind = type(value)
    if kind is int:
        return value
    if kind is float:  # most of an answer's info (logprobs): nothing to scrub; NaN/Infinity are not JSON
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return scrub_text(value)
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for k, v in value.items():  # = _secret_item, inlined: this runs per answer on the store's thread
            if isinstance(v, str):
                out[k] = MASK if v and isinstance(k, str) and k.lower() in SECRET_NAMES else scrub_text(v)
            else:
                out[k] = (v if math.isfinite(v) else None) if type(v) is float else scrub_value(v)
        return out
    if isinstance(value, list | tuple):
        return [scrub_value(v) for v in value]
    return value


# ---- what is stored per answer is capped --------------------------------------------------------
#: Characters kept beyond a cut before scrubbing, so that a secret across the cut is still found whole.
_CUT_MARGIN = 4096


def capped_info_json(info: dict[str, Any], limit: int, hide: Callable[[str], str] | None = None) -> str:
    """An answer's info as stored: scrubbed (:func:`scrub_value`, then ``hide``), canonical JSON of at most
    ``limit`` characters. Its long strings are cut to fit (``info["truncated"]``: key -> the string's length);
    an info that still does not fit keeps its numbers and short strings, and ``info_truncated_from``.
    """
    if not info:
        return "{}"
    full = 0
    if not any(isinstance(v, str) and len(v) > limit for v in info.values()):  # (no 20 MB string scrubbed whole)
        text = canonical_tree_json(scrub_value(info))
        if len(text) <= limit:
            return text if hide is None else hide(text)
        full = len(text)
    strings = [k for k, v in info.items() if isinstance(v, str) and len(v) > 64]
    share = max(64, (limit - 1024) // (2 * max(1, len(strings))))  # JSON escapes may double a string
    cut, lengths = dict(info), {}
    for key in strings:
        value = info[key]
        if len(value) > share:  # scrubbed (and masked) with a margin, then cut: a secret at the cut is gone
            value = scrub_text(value[: share + _CUT_MARGIN])
            cut[key] = (value if hide is None else hide(value))[:share]
            lengths[key] = len(info[key])
    cut["truncated"] = lengths
    text = canonical_tree_json(scrub_value(cut))
    if len(text) > limit:  # no long string to blame (a huge list, thousands of keys): a note of its size
        small = {k: v for k, v in info.items()
                 if isinstance(v, int | float | bool) or (isinstance(v, str) and len(v) <= 200)}
        text = canonical_tree_json(scrub_value({**small, "info_truncated_from": full or len(text)}))
        if len(text) > limit:
            text = canonical_json({"info_truncated_from": full or len(text)})
    return text if hide is None else hide(text)
