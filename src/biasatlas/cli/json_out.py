"""JSON on stdout written as it is encoded: a 200-model ``summary --json`` is half a gigabyte of text, which
``json.dumps`` would hold whole (with the millions of pieces it joins) before the first byte is written.

The outer levels are written item by item; each value below them is encoded by orjson (ten times the standard
encoder's speed on a summary) and indented to its level, so the bytes are those of ``json.dumps(value,
indent=2, ensure_ascii=False, default=str)``. Two things differ from the standard module: a NaN or infinity
is written ``null`` (valid JSON; the standard module writes ``NaN``, which strict parsers refuse), and a float
below 1e-4 may be written in positional notation (``0.000015`` for ``1.5e-05``: the same number). A value
orjson cannot encode (an integer beyond 64 bits) is encoded by the standard module instead.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TextIO

import orjson

#: levels written item by item (below them, one orjson call per value)
STREAMED_LEVELS = 3
_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS


def _default(value: Any) -> Any:
    # a float subclass (numpy.float64) is a number to the standard encoder; anything else unknown is its str
    return float(value) if isinstance(value, float) else str(value)


def _encoded(value: Any, level: int) -> bytes:
    """``value`` as indented JSON, its inner lines indented for ``level``."""
    try:
        text = orjson.dumps(value, default=_default, option=_OPTIONS)
    except (TypeError, orjson.JSONEncodeError):
        text = json.dumps(value, indent=2, ensure_ascii=False, default=str).encode("utf-8")
    # a JSON text holds no raw newline inside a string, so every newline starts a line to indent
    return text.replace(b"\n", b"\n" + b"  " * level) if level else text


def _write(value: Any, write: Callable[[bytes], Any], level: int) -> None:
    if level >= STREAMED_LEVELS or not isinstance(value, dict | list | tuple) or not value:
        write(_encoded(value, level))
        return
    inner = b"\n" + b"  " * (level + 1)
    is_dict = isinstance(value, dict)
    write(b"{" if is_dict else b"[")
    items = value.items() if isinstance(value, dict) else ((None, v) for v in value)
    for i, (key, item) in enumerate(items):
        write(inner if i == 0 else b"," + inner)
        if is_dict:
            write(_encoded(_key(key), 0) + b": ")
        _write(item, write, level + 1)
    write(b"\n" + b"  " * level + (b"}" if is_dict else b"]"))


def _key(key: Any) -> str:
    """A dict key as the standard encoder writes it (str, or the JSON of a number, bool or None)."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool) or key is None or isinstance(key, int | float):
        return json.dumps(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def write_json(value: Any, stream: TextIO | None = None) -> None:
    """``value`` as ``json.dumps(value, indent=2, ensure_ascii=False, default=str)`` and a newline (see the
    module for NaN), written to ``stream`` (stdout) in parts as it is encoded."""
    import sys

    text_out = sys.stdout if stream is None else stream
    binary = getattr(text_out, "buffer", None)
    if binary is None:  # a text stream without bytes underneath (StringIO): each part is whole UTF-8
        _write(value, lambda part: text_out.write(part.decode("utf-8")), 0)
        text_out.write("\n")
        return
    text_out.flush()
    _write(value, binary.write, 0)
    binary.write(b"\n")
    binary.flush()
