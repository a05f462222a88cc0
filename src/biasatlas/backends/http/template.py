"""The prompt text a chat model sees, for full-option scoring through ``/completions``.

The completions endpoint takes text, not messages, so scoring an option there needs the chat
template the server applies in ``/chat/completions``. Where it comes from (``chat_template``):

* not given: the server's own ``POST /apply-template`` (llama.cpp's server); a server without it
  gets first-token scoring instead;
* a file: a Jinja chat template (``.jinja``/``.j2``/text), or a ``.gguf`` model file whose
  ``tokenizer.chat_template`` is used, rendered here the way transformers renders it
  (``add_generation_prompt=True``, ``bos_token``/``eos_token`` known);
* ``raw``: the messages' contents joined by newlines plus a final newline, no chat format at all
  (the local backend's text for a model without a template).
"""

from __future__ import annotations

import hashlib
import struct
from datetime import datetime
from pathlib import Path
from typing import Any

from biasatlas.backends.base import BackendError

RAW = "raw"


class ChatTemplate:
    """A chat template rendered on the client."""

    def __init__(self, source: str, text: str, bos_token: str = "", eos_token: str = "") -> None:
        from jinja2 import TemplateError
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        self.source = source
        self.text = text
        self.digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]
        self.tokens = {"bos_token": bos_token, "eos_token": eos_token}
        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
        env.globals["raise_exception"] = _raise
        env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
        try:
            self._template = env.from_string(text)
        except TemplateError as exc:
            raise BackendError(f"chat template {source}: {exc}") from None

    def render(self, messages: list[dict[str, Any]]) -> str:
        """The prompt text for ``messages``, ending where the assistant's answer begins."""
        return str(self._template.render(messages=messages, add_generation_prompt=True, **self.tokens))


def _raise(message: str) -> None:
    raise BackendError(f"chat template: {message}")


def raw_text(messages: list[dict[str, Any]]) -> str:
    """No chat format: the contents joined by newlines, and a newline where the answer begins."""
    return "\n".join(str(m["content"]) for m in messages) + "\n"


def load_template(path: str) -> ChatTemplate:
    """A chat template from a Jinja file or from a GGUF model file's metadata."""
    file = Path(path).expanduser()
    if not file.is_file():
        raise BackendError(f"chat_template: no such file {path!r} (give a .jinja file, a .gguf file, or 'raw')")
    if file.suffix.lower() == ".gguf":
        return _from_gguf(file)
    try:
        return ChatTemplate(str(file), file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise BackendError(f"chat_template: cannot read {path!r}: {exc}") from None


def _from_gguf(file: Path) -> ChatTemplate:
    try:
        meta = gguf_metadata(file, {"tokenizer.chat_template", "tokenizer.ggml.tokens",
                                    "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id"})
    except (OSError, ValueError, struct.error) as exc:
        raise BackendError(f"chat_template: cannot read GGUF file {file}: {exc}") from None
    text = meta.get("tokenizer.chat_template")
    if not isinstance(text, str) or not text:
        raise BackendError(f"chat_template: {file} holds no tokenizer.chat_template")
    tokens = meta.get("tokenizer.ggml.tokens") or []

    def token(key: str) -> str:
        index = meta.get(key)
        return str(tokens[index]) if isinstance(index, int) and 0 <= index < len(tokens) else ""

    return ChatTemplate(str(file), text, token("tokenizer.ggml.bos_token_id"), token("tokenizer.ggml.eos_token_id"))


# GGUF value types: (struct format, size) of the scalars; 8 is a string, 9 an array.
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}


def gguf_metadata(file: Path, keys: set[str]) -> dict[str, Any]:
    """The wanted metadata values of a GGUF file, read from its header only (not the weights)."""
    out: dict[str, Any] = {}
    with file.open("rb") as f:
        if f.read(4) != b"GGUF":
            raise ValueError("not a GGUF file")
        version, _tensors, n_kv = struct.unpack("<IQQ", f.read(20))
        if version < 2:
            raise ValueError(f"GGUF version {version} is too old")

        def string() -> str:
            (n,) = struct.unpack("<Q", f.read(8))
            return f.read(n).decode("utf-8", "replace")

        def value(kind: int) -> Any:
            if kind == 8:
                return string()
            if kind == 9:
                item, count = struct.unpack("<IQ", f.read(12))
                return [value(item) for _ in range(count)]
            fmt = _SCALARS[kind]
            return struct.unpack(fmt, f.read(struct.calcsize(fmt)))[0]

        for _ in range(n_kv):
            key = string()
            (kind,) = struct.unpack("<I", f.read(4))
            val = value(kind)
            if key in keys:
                out[key] = val
                if len(out) == len(keys):
                    break
    return out
