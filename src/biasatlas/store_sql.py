"""SQL of the study store's hot path (``biasatlas.store``): many rows per INSERT statement, and which
keys already have an answer.

``executemany`` steps once per row and gives up the GIL for each step: a batch of answers committed
beside a busy event loop became one GIL hand-over per row (the writer waits for the loop's thread,
then the loop waits for the writer's). Here a chunk of rows is one statement, one step; chunks are
powers of two, so a handful of statements stay cached. Rows are inserted in order, as
``executemany`` inserts them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from functools import cache
from itertools import chain
from typing import Any

#: The most rows one INSERT statement carries (SQLite's variable limit permitting).
MOST_ROWS = 256


@cache
def values_sql(head: str, width: int, rows: int) -> str:
    """``head`` followed by ``rows`` groups of ``width`` placeholders."""
    return head + ", ".join(["(" + ", ".join("?" * width) + ")"] * rows)


def insert_rows(conn: sqlite3.Connection, head: str, width: int, rows: Sequence[tuple[Any, ...]]) -> None:
    """Execute ``head`` (``INSERT … VALUES``) over ``rows`` of ``width`` values, many rows per statement.

    SQLite's variable limit (999 before 3.32, 32766 since) bounds a chunk.
    """
    most = max(1, min(MOST_ROWS, conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) // width))
    start = 0
    while start < len(rows):
        size = 1 << (min(most, len(rows) - start).bit_length() - 1)
        conn.execute(values_sql(head, width, size), list(chain.from_iterable(rows[start : start + size])))
        start += size


def answered_keys(conn: sqlite3.Connection, keys: Iterable[str]) -> set[str]:
    """The subset of ``keys`` that has a stored answer (``responses``), looked up through ``conn``."""
    wanted = list(dict.fromkeys(keys))
    found: set[str] = set()
    for start in range(0, len(wanted), 900):  # stay under SQLite's bound-parameter limit
        chunk = wanted[start : start + 900]
        sql = f"SELECT key FROM responses WHERE key IN ({','.join('?' * len(chunk))})"
        found.update(row[0] for row in conn.execute(sql, chunk))
    return found
