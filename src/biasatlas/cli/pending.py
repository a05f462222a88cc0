"""Unfinished work of a study: runs that were killed, interrupted, stopped or left failures behind."""

from __future__ import annotations

import json
from typing import Any

from biasatlas.store import Store


def unfinished_runs(store: Store) -> list[dict[str, Any]]:
    """Per probe and backend, the newest run if it did not answer everything, with what is still missing.

    A run killed without a chance to finish (SIGKILL, power loss) is still 'running' in the store and has
    no totals: its planned and pending counts come from its recorded plan and the stored answers.
    """
    rows = store.conn.execute(
        "SELECT r.run_id, r.probe, r.backend_id, r.status, r.config_json FROM runs r"
        " WHERE r.run_id IN (SELECT MAX(run_id) FROM runs GROUP BY probe, backend_id) ORDER BY r.run_id"
    ).fetchall()
    out = []
    for run_id, probe, backend_id, status, config_json in rows:
        planned, answered = store.conn.execute(
            "SELECT COUNT(*), COUNT(resp.key) FROM run_items i LEFT JOIN responses resp ON resp.key = i.key"
            " WHERE i.run_id = ?",
            (run_id,),
        ).fetchone()
        if status == "complete" and planned == answered:
            continue
        config = json.loads(config_json or "{}")
        out.append({
            "run_id": run_id,
            "probe": probe,
            "backend": backend_id,
            "status": "killed (never finished)" if status == "running" else status,
            "planned": planned,
            "answered": answered,
            "pending": planned - answered,
            "resume": config.get("command"),
        })
    return [r for r in out if r["pending"] > 0 or r["status"] not in ("complete",)]
