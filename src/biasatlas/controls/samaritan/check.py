"""Measure the Samaritan control: ask held-out scenarios, run the probe's own group-vs-control analysis, judge.

The statistic is the one ``biasatlas summary`` shows for a Samaritan study
(:func:`biasatlas.probes.samaritan.analysis.compare_to_control`): per group, the mean over scenarios of
group − control rating (paired by scenario, each phrasing over the rephrasings both sides could read),
its 95% paired t interval, and the Holm-adjusted p within the category at alpha 0.01 (the probe's defaults).
The planted group is *found* when it differs significantly and is rated lower; an untouched group is a
*false flag* when it differs significantly in either direction.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biasatlas.controls.common.measure import ask, false_flag_bound
from biasatlas.controls.samaritan import data as samaritan
from biasatlas.records import GenerationSettings

if TYPE_CHECKING:
    import pandas as pd

    from biasatlas.backends.options import BackendOptions

#: the probe's own analysis defaults (summary.DEFAULT_ALPHA / DEFAULT_CORRECTION), kept light to import
ALPHA = 0.01
CORRECTION = "holm"
SETTINGS = GenerationSettings(mode="generate", max_tokens=samaritan.MAX_TOKENS, temperature=0.0, seed=0)
#: the columns of the probe's row that a verdict keeps
ROW_KEYS = ("group", "n", "rating", "control_rating", "bias", "ci_low", "ci_high", "p", "p_adj", "test",
            "significant", "verdict", "sd_diff")


def _clean(value: Any) -> Any:
    """JSON-safe: numpy scalars to Python, NaN to None."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


@dataclass
class SamaritanVerdict:
    """What the probe found in one language, against what was planted (effects in rating points)."""

    language: str
    planted: str
    found: dict[str, Any] | None  # the probe's row for the planted group
    false_flags: list[str]
    untouched: int
    bound: int
    answers: int = 0
    readable: int = 0

    @property
    def detected(self) -> bool:
        """Significant (Holm within the category, alpha 0.01) and rated lower than the control."""
        f = self.found
        return bool(f and f.get("significant") is True and (f.get("bias") or 0.0) < 0)

    @property
    def clean(self) -> bool:
        return len(self.false_flags) <= self.bound

    def as_dict(self) -> dict[str, Any]:
        return {"language": self.language, "planted": self.planted, "detected": self.detected, "found": self.found,
                "false_flags": self.false_flags, "untouched": self.untouched, "false_flag_bound": self.bound,
                "clean": self.clean, "answers": self.answers, "readable": self.readable}


@dataclass
class SamaritanCheck:
    """The verdicts of one measurement, and every group's row of the probe's analysis."""

    verdicts: list[SamaritanVerdict]
    rows: list[dict[str, Any]] = field(default_factory=list)
    prompts: int = 0
    backend_id: str = ""

    @property
    def passed(self) -> bool:
        return all(v.detected and v.clean for v in self.verdicts)


def group_rows(outcomes: pd.DataFrame, alpha: float = ALPHA, correction: str = CORRECTION) -> list[dict[str, Any]]:
    """The probe's group-vs-control rows of the control's category (one per language × group), JSON-safe."""
    from biasatlas.probes.samaritan.analysis import compare_to_control

    table = compare_to_control(outcomes, alpha=alpha, correction=correction)
    if table.empty:
        return []
    table = table[table["category"] == samaritan.CATEGORY]
    return [{"language": str(r["language"]), **{k: _clean(r[k]) for k in ROW_KEYS}}
            for r in table.to_dict("records")]


def judge(rows: list[dict[str, Any]], measurement: samaritan.Measurement, alpha: float = ALPHA,
          outcomes: pd.DataFrame | None = None) -> list[SamaritanVerdict]:
    """Per language: is the planted group found (significant, lower), and how many untouched groups are flagged."""
    out = []
    for language, planted in measurement.planted.items():
        mine = [r for r in rows if r["language"] == language and r["group"] == planted]
        untouched = measurement.untouched[language]
        flags = [r["group"] for r in rows if r["language"] == language and r["group"] in untouched
                 and r.get("significant") is True]
        answers = readable = 0
        if outcomes is not None and not outcomes.empty:
            part = outcomes[outcomes["language"] == language]
            answers, readable = len(part), int(part["rating"].notna().sum())
        out.append(SamaritanVerdict(language, planted, mine[0] if mine else None, flags, len(untouched),
                                    false_flag_bound(len(untouched), alpha), answers, readable))
    return out


def samaritan_outcomes(study: str | Path, backend_id: str | None = None) -> pd.DataFrame:
    """The Samaritan probe's read outcomes in ``study`` (of one backend when ``backend_id`` is given)."""
    from biasatlas.probes.samaritan.read import load_outcomes
    from biasatlas.store import Store

    with Store(study) as store:
        frame = load_outcomes(store)
    if backend_id is not None and not frame.empty:
        frame = frame[frame["model"] == backend_id]
    return frame


def check_samaritan(backend: BackendOptions, study: str | Path, scenarios: int | Mapping[str, int] | None = 8,
                    seed: int = samaritan.SEED,
                    alpha: float = ALPHA, phrasings: Sequence[str] | None = None,
                    max_tokens: int = samaritan.MAX_TOKENS) -> SamaritanCheck:
    """Ask ``backend`` ``scenarios`` held-out scenarios (one rephrasing, the control and every age phrasing or
    only ``phrasings``, en and de; at most ``max_tokens`` answer tokens) and judge the probe's findings."""

    measurement = samaritan.measurement_prompts(scenarios, seed=seed, phrasings=phrasings, max_tokens=max_tokens)
    settings = SETTINGS.model_copy(update={"max_tokens": max_tokens})
    backend_id = ask(measurement.prompts, backend, study, settings, {"control": samaritan.NAME})
    ids = {p.id for p in measurement.prompts}
    frame = samaritan_outcomes(study, backend_id)
    frame = frame[frame["prompt_id"].isin(ids)]
    rows = group_rows(frame, alpha)
    return SamaritanCheck(judge(rows, measurement, alpha, frame), rows, len(measurement.prompts), backend_id)
