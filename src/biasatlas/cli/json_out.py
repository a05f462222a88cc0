"""JSON on stdout written as it is encoded: a 200-model ``summary --json`` is half a gigabyte of text, which
``json.dumps`` would hold whole (with the millions of pieces it joins) before the first byte is written."""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

#: encoded pieces joined into one write (pieces are a few characters each)
PIECES_PER_WRITE = 65_536


def write_json(value: Any, stream: TextIO | None = None) -> None:
    """``value`` as ``json.dumps(value, indent=2, ensure_ascii=False, default=str)`` and a newline, written to
    ``stream`` (stdout) in parts as it is encoded."""
    out = sys.stdout if stream is None else stream
    pieces: list[str] = []
    for piece in json.JSONEncoder(indent=2, ensure_ascii=False, default=str).iterencode(value):
        pieces.append(piece)
        if len(pieces) >= PIECES_PER_WRITE:
            out.write("".join(pieces))
            pieces.clear()
    pieces.append("\n")
    out.write("".join(pieces))
