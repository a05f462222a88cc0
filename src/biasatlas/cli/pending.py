"""Unfinished work of a study: runs that were killed, interrupted, stopped or left failures behind."""

from __future__ import annotations

import json
from typing import Any

from biasatlas.store import Store

#: run statuses with nothing left to ask ("nothing to ask": a rerun that found every answer cached, runner.py)
DONE = ("complete", "nothing to ask", "done")  # "done": a run that asks nothing (a score, a reading)


def unfinished_runs(store: Store) -> list[dict[str, Any]]:
    """Per probe and backend, the newest run if it did not answer everything, with what is still missing.

    A run killed without a chance to finish (SIGKILL, power loss) reads as ``interrupted`` (``running``
    while another process is still writing the study): the store counts its planned and pending items
    from the plan size it noted at its start, its recorded plan and the stored answers.
    """
    runs = store.runs()
    if runs.empty:
        return []
    newest = runs.groupby(["probe", "backend_id"], sort=False)["run_id"].transform("max") == runs["run_id"]
    out = []
    for row in runs[newest].to_dict("records"):
        run_id = int(row["run_id"])
        totals = json.loads(row["totals_json"] or "{}")
        planned, answered = store.conn.execute(
            "SELECT COUNT(*), COUNT(resp.key) FROM run_items i LEFT JOIN responses resp ON resp.key = i.key"
            " WHERE i.run_id = ?",
            (run_id,),
        ).fetchone()
        if row["finished_at"] is None:  # never finished: the store's count covers what it had not recorded
            planned = int(totals.get("planned") or planned)
            answered = int(totals.get("cached") or 0) + int(totals.get("new") or 0)
        if row["status"] in DONE and planned == answered:
            continue
        config = json.loads(row["config_json"] or "{}")
        info = totals.get("info") or {}
        out.append({
            "run_id": run_id,
            "probe": row["probe"],
            "backend": row["backend_id"],
            "status": row["status"],
            "planned": planned,
            "answered": answered,
            "pending": planned - answered,
            "pending_at_least": bool(info.get("planned_unknown")),
            "writer": info.get("writer"),
            "resume": config.get("command"),
        })
    return [r for r in out if r["pending"] > 0 or r["status"] not in DONE]


def unfinished_line(run: dict[str, Any]) -> str:
    """One line for ``biasatlas summary``: the run, its state, what is pending, and how to resume it."""
    pending = f"{'at least ' if run['pending_at_least'] else ''}{run['pending']}"
    head = (f"run {run['run_id']} of {run['probe']} on {run['backend']} {run['status']}, {pending} pending "
            f"(planned {run['planned']}, answered {run['answered']})")
    if run["status"] == "running":
        return f"{head}: being written by pid {run['writer']}; run summary again when it has finished."
    if run["resume"]:
        return f"{head}. Resume with: {run['resume']}"
    return f"{head}. Run the same command again to resume."
