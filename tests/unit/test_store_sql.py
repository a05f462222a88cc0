"""Many rows per INSERT statement: every row, in order, in few statements, within SQLite's variable limit."""

from __future__ import annotations

import sqlite3

import pytest

from biasatlas.store_sql import insert_rows, values_sql


@pytest.mark.parametrize(("count", "limit"), [(0, None), (1, None), (300, None), (300, 9), (7, 3)])
def test_every_row_in_order_in_chunks_of_powers_of_two(count: int, limit: int | None) -> None:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.execute("CREATE TABLE t (k TEXT PRIMARY KEY, n INTEGER, x REAL)")
    if limit is not None:
        conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, limit)
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    rows = [(f"k{i}", i, i / 3) for i in range(count)] + [("k0", -1, 0.0)] * (count > 0)
    insert_rows(conn, "INSERT OR IGNORE INTO t VALUES ", 3, rows)
    assert conn.execute("SELECT k, n, x FROM t ORDER BY rowid").fetchall() == rows[:count]  # the repeat ignored
    most = 256 if limit is None else limit // 3  # rows a statement may carry; chunks: the powers of two up to it
    chunk = 1 << (most.bit_length() - 1)
    assert len(statements) <= -(-len(rows) // chunk) + chunk.bit_length()
    assert values_sql("I ", 2, 3) == "I (?, ?), (?, ?), (?, ?)"
