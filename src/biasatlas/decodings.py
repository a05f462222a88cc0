"""The decoding each stored answer was asked with, and keeping two decodings of one model apart.

A study may hold a model's answers under several decodings (a rerun with another ``--temperature`` or
``--max-tokens``). They are different measurements: a frame shows each with the run that planned it, and
where one model and mode hold more than one decoding, ``model`` names the decoding too
(``fake:x [temperature 0.7, top_p 1, seed 0, max_tokens 64]``) so every table, test and export that keys
on the model keeps them apart. ``model_id`` then keeps the backend id.
"""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from biasatlas.records import GenerationSettings

if TYPE_CHECKING:
    import pandas as pd

UNKNOWN = "unknown decoding"  # a run that recorded no settings (never written by this biasatlas)


def decoding_label(settings: dict[str, Any] | None) -> str:
    """A short, stable name for what changes a model's output in ``settings`` (a run's settings)."""
    try:
        relevant = GenerationSettings(**(settings or {})).output_relevant() if settings else None
    except (TypeError, ValidationError):
        relevant = None
    if relevant is None:
        return UNKNOWN
    if relevant["mode"] == "choice":
        return "choice"
    if relevant["temperature"] == 0:
        return f"greedy, max_tokens {relevant['max_tokens']}"
    return (f"temperature {relevant['temperature']:g}, top_p {relevant['top_p']:g}, seed {relevant['seed']}, "
            f"max_tokens {relevant['max_tokens']}")


def run_decodings(conn: sqlite3.Connection) -> dict[int, str]:
    """Run id -> the decoding label of the settings it recorded."""
    labels: dict[int, str] = {}
    for run_id, config_json in conn.execute("SELECT run_id, config_json FROM runs"):
        try:
            settings = json.loads(config_json or "{}").get("settings")
        except (TypeError, ValueError, AttributeError):
            settings = None
        labels[int(run_id)] = decoding_label(settings if isinstance(settings, dict) else None)
    return labels


def with_decodings(frame: pd.DataFrame, labels: dict[int, str]) -> pd.DataFrame:
    """``frame`` with a ``decoding`` column; ``model`` names it where a model and mode hold several."""
    if frame.empty:
        return frame
    frame["decoding"] = frame["run_id"].map(lambda r: labels.get(int(r), UNKNOWN))
    ids = frame["model_id"] if "model_id" in frame.columns else frame["model"]
    several = frame.groupby([ids, frame["mode"]])["decoding"].transform("nunique") > 1
    if not several.any():
        return frame
    if "model_id" not in frame.columns:
        frame.insert(list(frame.columns).index("model") + 1, "model_id", frame["model"])
    frame.loc[several, "model"] = frame.loc[several, "model"] + " [" + frame.loc[several, "decoding"] + "]"
    return frame
