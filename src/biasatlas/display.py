"""The names a study shows for its models: an audit's display name where one was given, else the backend id."""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


def display_names(conn: sqlite3.Connection) -> dict[str, str]:
    """Backend id -> the display name an audit gave it (the newest run's, where several did).

    One name per model: a name that audits gave to several backend ids (the same name for another
    server or other weights) is shown with the id, ``name [backend id]``, so no two models merge.
    """
    names: dict[str, str] = {}
    for backend_id, config_json in conn.execute("SELECT backend_id, config_json FROM runs ORDER BY run_id"):
        try:
            name = json.loads(config_json).get("display_name")
        except (TypeError, ValueError, AttributeError):
            continue
        if isinstance(name, str) and name:
            names[backend_id] = name
    shared = {name for name in names.values() if list(names.values()).count(name) > 1}
    return {i: f"{name} [{i}]" if name in shared else name for i, name in names.items()}


def with_display_names(frame: pd.DataFrame, names: dict[str, str]) -> pd.DataFrame:
    """``model`` shows the display name; the backend id stays in ``model_id`` (only when names exist)."""
    if not names or frame.empty or "model" not in frame.columns:
        return frame
    frame.insert(list(frame.columns).index("model") + 1, "model_id", frame["model"])
    frame["model"] = frame["model"].map(lambda m: names.get(m, m))
    return frame
