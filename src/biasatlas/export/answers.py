"""The answers table of one probe: one row per model x prompt x sample, from the probe's tidy outcomes.

Built on ``Study.outcomes(probe)`` (``biasatlas.study``, the public API's). Where a probe's outcomes leave out the
stored request (stories: one row per story), the study frame of the same prompts fills in the
prompt, tokens, latency and run id. Column order: :data:`ANSWER_CORE`, the design factors and
the probe's own read columns, then :data:`ANSWER_TAIL`.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from biasatlas.tidy.columns import ANSWER_CORE, ANSWER_TAIL, PARSED

if TYPE_CHECKING:
    import pandas as pd

    from biasatlas.study import Study

#: columns of ``Store.frame`` that the answers table renames, rewrites or leaves out
_STORE = {"prompt_id", "key", "model", "mode", "sample_index", "run_id", "probe", "language", "messages_json",
          "text", "option_probs", "options", "prompt_tokens", "completion_tokens", "latency_s", "info_json",
          "n_errors", "status", "finish_reason", "decoding"}
#: how outcomes and the study frame are joined when the outcomes lack the stored request
_JOIN = ("prompt_id", "model", "mode", "sample_index")


def answers_table(study: Study, probe: str) -> pd.DataFrame:
    """The answers of ``probe`` in ``study``; an empty frame when the study holds none."""
    import pandas as pd

    outcomes = study.outcomes(probe)
    if outcomes.empty:
        return pd.DataFrame(columns=[*ANSWER_CORE, *ANSWER_TAIL])
    stored = study.store.frame(probe)
    missing = [c for c in _STORE if c not in outcomes.columns and c in stored.columns]
    if missing and not stored.empty:
        keys = [k for k in _JOIN if k in outcomes.columns and k in stored.columns]
        extra = stored[[*keys, *missing]].drop_duplicates(keys)
        outcomes = outcomes.merge(extra, on=keys, how="left")
    frame = outcomes.reset_index(drop=True)
    value_col, reason_col = PARSED.get(probe, (None, None))
    out = pd.DataFrame(index=frame.index)
    out["probe"] = probe
    for column in ANSWER_CORE:
        if column != "probe":
            out[column] = frame[column] if column in frame.columns else None
    own = [c for c in frame.columns if c not in _STORE and c not in (value_col, reason_col)
           and c not in ANSWER_CORE and c not in ANSWER_TAIL]
    for column in _ordered(own, probe):
        out[column] = frame[column]
    messages = frame["messages_json"] if "messages_json" in frame.columns else pd.Series(None, index=frame.index)
    out["system_prompt"] = [_text(m, system=True) for m in messages]
    out["prompt_text"] = [_text(m, system=False) for m in messages]
    out["options"] = [json.dumps(list(o), ensure_ascii=False) if _present(o) else None
                      for o in _column(frame, "options")]
    out["answer_text"] = _column(frame, "text")
    if value_col is not None:
        out["parsed_value"] = _column(frame, value_col)
    else:  # stories: the voted profile
        out["parsed_value"] = _profiles(frame)
    out["parse_reason"] = _column(frame, reason_col) if reason_col else None
    for column in ("prompt_tokens", "completion_tokens", "latency_s", "finish_reason"):
        out[column] = _column(frame, column)
    # a map (Parquet: a map of option to probability; CSV: a JSON object), never JSON text inside Parquet
    probs: list[Any] = [{str(k): float(p[k]) for k in sorted(p)} if isinstance(p, dict) else None
                        for p in _column(frame, "option_probs")]
    out["option_probs"] = pd.Series(probs, index=out.index, dtype=object)
    out["errors"] = _column(frame, "n_errors")
    out["response_key"] = _column(frame, "key")
    return out


def _ordered(columns: list[str], probe: str) -> list[str]:
    """The probe's declared design factors first, in its order, then the rest as they came."""
    from biasatlas.probes import load_probe

    factors = [f for f in load_probe(probe).factors if f in columns]
    return [*factors, *(c for c in columns if c not in factors)]


def _column(frame: pd.DataFrame, name: str | None) -> list[Any]:
    if name is None or name not in frame.columns:
        return [None] * len(frame)
    return frame[name].tolist()


def _present(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _text(messages_json: Any, *, system: bool) -> str | None:
    """The system messages, or the other turns (``role: text`` each when there are several)."""
    if not isinstance(messages_json, str):
        return None
    messages = json.loads(messages_json)
    if system:
        parts = [m["content"] for m in messages if m["role"] == "system"]
        return "\n\n".join(parts) if parts else None
    turns = [m for m in messages if m["role"] != "system"]
    if len(turns) == 1:
        return str(turns[0]["content"])
    return "\n\n".join(f"{m['role']}: {m['content']}" for m in turns)


def _profiles(frame: pd.DataFrame) -> list[str | None]:
    """Stories: the voted profile of each story as a JSON object, None without one."""
    from biasatlas.probes.stories.seeds import load_seeds

    attributes = [c for c in load_seeds("en").dimensions if c in frame.columns]
    flags = _column(frame, "profile")
    rows = frame[attributes].to_dict(orient="records")
    return [json.dumps(row, ensure_ascii=False) if _present(flag) and bool(flag) else None
            for flag, row in zip(flags, rows, strict=True)]
