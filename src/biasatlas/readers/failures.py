"""Reading failures of a probe's answers by group: which answers failed how, their questions, and the tests.

An answered answer whose label is no option (contact) or no rating (samaritan) failed to be read: a
``refusal`` (the reason names a refusal), ``unclear`` (it hedges, names both options, contradicts itself, or a
judge found it unclear) or ``unreadable`` (anything else: no answer found, another scale, out of range);
``not read`` is any of the three. Each answer counts once (a text several prompts share is one answer).

Its question, the stratum of :func:`biasatlas.stats.reading_failures.group_failure_test`, is what every group
is asked alike: contact's template, action, scale and framing (an answer shared by several framings' prompt
sets: all of them), Samaritan's scenario, rephrasing and decoding. Cells: contact per model x language x mode x
axis, Samaritan per model x language x category (the control, a category of one group, is not tested; its rate
is listed for the comparisons with it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

KINDS = ("not read", "refusal", "unclear", "unreadable")
#: the rule readers' reasons (parsing/answers.py, parsing/numbers.py) and the judge's label that mean the
#: answer says something but commits to no single option or rating
UNCLEAR_REASONS = frozenset({"unclear", "hedge", "both options", "contradictory", "conditional", "range",
                             "several numbers", "changed mind"})
CELLS = {"contact": ("model", "language", "mode", "axis"), "samaritan": ("model", "language", "category")}
#: where each group's rate is listed for the flag of a comparison (Samaritan: with its control, per decoding)
RATE_CELLS = {"contact": ("model", "language", "mode", "axis"),
              "samaritan": ("model", "language", "temperature", "max_tokens")}
QUESTION = {"contact": ("template_id", "action", "scale", "contact"),
            "samaritan": ("scenario", "rephrasing", "temperature", "max_tokens")}
VALUE = {"contact": ("answer", "reason"), "samaritan": ("rating", "parse_reason")}
CONTROL = "control"


def failure_kind(value: Any, reason: Any) -> str | None:
    """None for a read answer, else its failure kind (``refusal``, ``unclear`` or ``unreadable``)."""
    if not (value is None or (isinstance(value, float) and value != value)):
        return None
    text = str(reason or "").strip().casefold()
    if "refus" in text:
        return "refusal"
    if text in UNCLEAR_REASONS or text.startswith("unclear"):
        return "unclear"
    return "unreadable"


def kinds_of(values: pd.Series, reasons: pd.Series) -> pd.Series:
    """:func:`failure_kind` of every row at once."""
    import numpy as np
    import pandas as pd

    text = reasons.astype("string").fillna("").str.strip().str.casefold()
    missing = values.isna().to_numpy()
    refused = text.str.contains("refus", regex=False).to_numpy(dtype=bool)
    unclear = (text.isin(UNCLEAR_REASONS) | text.str.startswith("unclear")).to_numpy(dtype=bool)
    kind = np.full(len(values), "unreadable", dtype=object)
    kind[unclear] = "unclear"
    kind[refused] = "refusal"  # a refusal outranks an unclear reason, as in failure_kind
    kind[~missing] = None
    return pd.Series(kind, index=values.index, dtype=object)


def joined(frame: pd.DataFrame, columns: Sequence[str]) -> pd.Series:
    """The values of ``columns`` per row as one text (a question's name)."""
    text = frame[columns[0]].astype(str)
    for column in columns[1:]:
        text = text + " | " + frame[column].astype(str)
    return text


def answers(out: pd.DataFrame, probe: str) -> pd.DataFrame:
    """One row per answered answer: its cell, group, question and failure kind (``kind``, None when read)."""
    import pandas as pd

    cells, question = list(dict.fromkeys([*CELLS[probe], *RATE_CELLS[probe]])), QUESTION[probe]
    value, reason = VALUE[probe]
    needed = {*cells, *question, "group", "status", value}
    keep = [*cells, "group", *(["descriptor"] if "descriptor" in out.columns else []), "question", "kind"]
    if out.empty or not needed <= set(out.columns):
        return pd.DataFrame(columns=keep)
    frame = out[out["status"] == "answered"].copy()
    reasons = frame[reason] if reason in frame.columns else pd.Series(None, index=frame.index)
    frame["kind"] = kinds_of(frame[value], reasons)
    frame["question"] = joined(frame, question)
    ident = [c for c in ("model", "mode", "key", "sample_index") if c in frame.columns]
    if "key" in ident:  # one answer shared by several prompts: once, its question naming all of them
        repeated = frame.duplicated(ident, keep=False)
        if repeated.any():
            shared = frame[repeated].groupby(ident, sort=False)["question"].transform(
                lambda q: " & ".join(sorted(set(q))))
            frame.loc[repeated, "question"] = shared
        frame = frame.drop_duplicates(ident)
    return frame[keep].reset_index(drop=True)


def _rows(part: pd.DataFrame, keys: dict[str, Any], kind: str, alpha: float) -> list[dict[str, Any]]:
    from biasatlas.stats.reading_failures import group_failure_test

    failed = part["kind"].notna() if kind == "not read" else part["kind"] == kind
    result = group_failure_test(failed.to_numpy(), part["group"], part["question"], alpha=alpha)
    test = {**keys, "kind": kind, "n": result.n, "failures": result.failures, "questions": result.informative,
            "statistic": result.statistic, "dof": result.dof, "p": result.p, "method": result.method,
            "differs": result.differs, "groups_differing": sum(g.differs for g in result.groups)}
    groups = [{**keys, "kind": kind, **vars(g)} for g in result.groups]
    return [{"test": test, "groups": groups}]


def failure_tables(out: pd.DataFrame, probe: str, alpha: float = 0.05,
                   kinds: Sequence[str] = KINDS) -> dict[str, Any]:
    """``tests`` (one row per cell x failure kind) and ``groups`` (one row per cell x kind x group), JSON-ready;
    ``rates``: every group's (the control's too) ``not read`` percentage per cell, for the flag of a comparison."""
    frame = answers(out, probe)
    cells = list(CELLS[probe])
    block: dict[str, Any] = {"tests": [], "groups": [], "rates": [], "alpha": alpha}
    if frame.empty:
        return block
    rate_cells = list(RATE_CELLS[probe])
    rates = frame.assign(failed=frame["kind"].notna()).groupby([*rate_cells, "group"], sort=True, dropna=False)[
        "failed"].agg(["size", "mean"]).reset_index()
    block["rates"] = [{**{c: row[c] for c in rate_cells}, "group": str(row["group"]), "n": int(row["size"]),
                       "not_read_pct": 100 * float(row["mean"])} for row in rates.to_dict("records")]
    for key, part in frame.groupby(cells, sort=True, dropna=False):
        keys = dict(zip(cells, key if isinstance(key, tuple) else (key,), strict=True))
        if (probe == "samaritan" and str(keys.get("category")) == CONTROL) or part["group"].nunique() < 2:
            continue
        present = set(part["kind"].dropna())
        if not present:
            continue  # every answer read: nothing to test (the rates above say 0%)
        for kind in kinds:
            if kind != "not read" and kind not in present:
                continue  # a kind that never occurred: nothing to test, no row
            if kind == "not read" and len(present) == 1 and set(kinds) > {"not read"}:
                continue  # one kind makes every failure: its own test is this one, named
            for found in _rows(part, keys, kind, alpha):
                block["tests"].append(found["test"])
                block["groups"].extend(found["groups"])
    return _clean(block)


def _clean(block: dict[str, Any]) -> dict[str, Any]:
    """NaN and numpy scalars as JSON takes them."""
    import math

    def fix(value: Any) -> Any:
        if hasattr(value, "item"):
            value = value.item()
        if isinstance(value, float) and not math.isfinite(value):
            return None
        return value

    for name in ("tests", "groups", "rates"):
        block[name] = [{k: fix(v) for k, v in row.items()} for row in block[name]]
    return block


def failure_rates(block: dict[str, Any] | None, groups: Sequence[str], **cell: Any) -> list[float]:
    """The ``not read`` percentages of ``groups`` in the cell named by ``cell`` (model, language, mode...)."""
    wanted = {str(g) for g in groups}
    return [r["not_read_pct"] for r in (block or {}).get("rates", [])
            if r["group"] in wanted and all(str(r.get(k)) == str(v) for k, v in cell.items() if k in r)]
