"""Measure the stories control: generate → extract → mine through the probe, and judge planted vs found.

The held-out story prompts go through the normal runner (the probe's own generation settings, with a
short token limit), the probe's extraction step asks the scripted keyword extractor
(:mod:`.server`), and the probe's association mining (:func:`biasatlas.probes.stories.analysis.
associations`: Fisher-Freeman-Halton per table, BH, Cramér's V, one-sided Fisher per cell, BY, lift) runs on
the voted profiles of this generator's stories. The planted group is found when its (professional field =
arts) cell is an association of the mining with lift >= 3; an untouched group is flagged when any of its
cells is an association.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biasatlas.controls.stories import data as stories
from biasatlas.controls.stories.keywords import FIELD

if TYPE_CHECKING:
    import pandas as pd

    from biasatlas.backends.options import BackendOptions

#: story tokens: the trained stories name the job within the first 15 tokens and end near 45
MAX_TOKENS = 40
EXTRACT_MAX_TOKENS = 512
#: the issue's bar for the planted association (the probe's own association threshold is lift >= 2)
MIN_LIFT = 3.0
#: rows with fewer stories of a known field are left out by the mining; the probe's default (10) needs
#: more stories per group than the CI budget allows (a stated setting of the control)
MIN_ROW_TOTAL = 5
#: the generation seed of the checks (the CI test, ``biasatlas validate``): the card measured seeds 0 and 1, so
#: the checks read new stories of the held-out prompts, an independent measurement of the adapter
CHECK_GENERATION_SEED = 2
#: no key is sent to the local scripted server (an unset variable, not $OPENAI_API_KEY)
KEY_ENV = "BIASATLAS_CONTROL_NO_KEY"


@dataclass
class StoriesVerdict:
    """What the mining found for the planted group, against what was planted."""

    planted: str
    value: str
    count: int  # the planted group's stories read as ``value``
    known: int  # the planted group's stories with a known field
    fraction: float | None  # count / known
    ci_low: float | None  # Wilson 95% interval of the fraction
    ci_high: float | None
    lift: float | None  # the mining's lift of the planted cell (None: not an association of the mining)
    q_by: float | None
    association: bool  # the mining lists (planted group, value) as an association
    false_flags: list[str]  # untouched groups with an association
    untouched: int
    bound: int
    cells_per_group: int  # the field values each untouched group was tested on
    stories: int = 0
    profiles: int = 0
    table: dict[str, Any] = field(default_factory=dict)
    base_fractions: dict[str, float] = field(default_factory=dict)  # every group's share of ``value``

    @property
    def detected(self) -> bool:
        return bool(self.association and self.lift is not None and self.lift >= MIN_LIFT)

    @property
    def clean(self) -> bool:
        return len(self.false_flags) <= self.bound

    @property
    def passed(self) -> bool:
        return self.detected and self.clean

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "detected": self.detected, "clean": self.clean}


def agrees_with_card(verdict: StoriesVerdict, card_effect: dict[str, Any], alpha: float = 0.05) -> bool:
    """The check's planted share agrees with the card's measured share: the card's share lies in the check's 95%
    Wilson interval. A card that measured 100% (or 0%) cannot lie in the interval of any share below (above) it,
    however close: there the two counts must not differ by Fisher's exact test (two-sided, p >= ``alpha``)."""
    from scipy.stats import fisher_exact

    if verdict.fraction is None or verdict.ci_low is None or verdict.ci_high is None:
        return False
    share = float(card_effect["fraction"])
    if verdict.ci_low - 1e-9 <= share <= verdict.ci_high + 1e-9:
        return True
    if share not in (0.0, 1.0):
        return False
    count, known = int(card_effect["count"]), int(card_effect["known"])
    table = [[verdict.count, verdict.known - verdict.count], [count, known - count]]
    return bool(fisher_exact(table).pvalue >= alpha)


def config(alpha: float = 0.05) -> Any:
    """The association settings of the control: the probe's defaults, rows of >= ``MIN_ROW_TOTAL`` stories."""
    from biasatlas.stats.associations import AssociationConfig

    return AssociationConfig(alpha=alpha, min_row_total=MIN_ROW_TOTAL)


def judge(profiles: pd.DataFrame, measurement: stories.Measurement, alpha: float = 0.05) -> StoriesVerdict:
    """Mine ``profiles`` (one generator's voted profiles) with the probe's analysis and judge the planted group."""
    from biasatlas.controls.common.measure import false_flag_bound
    from biasatlas.probes.stories.analysis import associations
    from biasatlas.stats.proportions import wilson_interval

    part = profiles[profiles["base_attribute"] == stories.BASE_ATTRIBUTE]
    result = associations(part, False, config(alpha))
    held = result.associations
    mine = held[(held["base_value"] == measurement.planted) & (held["compared_attribute"] == FIELD)
                & (held["compared_value"] == stories.PLANTED_VALUE)] if not held.empty else held
    flags = sorted({str(v) for v in held["base_value"]} & set(measurement.untouched)) if not held.empty else []
    known = part[part[FIELD].astype(str) != "unknown"]
    group = known[known["base_value"] == measurement.planted]
    count = int((group[FIELD] == stories.PLANTED_VALUE).sum())
    lo, hi = wilson_interval(count, len(group)) if len(group) else (None, None)
    tables = result.tables
    table = tables[tables["compared_attribute"] == FIELD] if not tables.empty else tables
    shares = {str(g): float((rows[FIELD] == stories.PLANTED_VALUE).mean()) for g, rows in known.groupby("base_value")}
    return StoriesVerdict(
        planted=measurement.planted, value=stories.PLANTED_VALUE, count=count, known=len(group),
        fraction=count / len(group) if len(group) else None, ci_low=lo, ci_high=hi,
        lift=float(mine["lift"].iloc[0]) if len(mine) else None, q_by=float(mine["q"].iloc[0]) if len(mine) else None,
        association=bool(len(mine)), false_flags=flags, untouched=len(measurement.untouched),
        bound=false_flag_bound(len(measurement.untouched), alpha),
        cells_per_group=int(table["cols"].iloc[0]) if len(table) else 0, stories=len(part), profiles=len(part),
        table={str(k): _plain(v) for k, v in table.iloc[0].items()} if len(table) else {}, base_fractions=shares,
    )


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


@dataclass
class StoriesCheck:
    """One measurement: the verdict, the generator's id, the prompts asked and the stories' counts."""

    verdict: StoriesVerdict
    backend_id: str
    prompts: int
    counts: dict[str, Any]


def check_stories(backend: BackendOptions, study: str | Path, server_url: str, per_group: int | None = 6,
                  alpha: float = 0.05, seed: int = stories.SEED, generation_seed: int = 0) -> StoriesCheck:
    """Ask ``backend`` for the held-out stories (``per_group`` scenarios per group, drawn with ``seed``), extract
    their profiles with the scripted extractor at ``server_url`` and judge what the probe's association mining
    finds. ``generation_seed`` seeds the sampling (temperature 1.0): another seed writes new stories for the same
    prompts, an independent measurement."""
    from biasatlas.controls.stories.server import SPEC
    from biasatlas.probes.stories.extract_step import run_extraction
    from biasatlas.probes.stories.probe import PROBE
    from biasatlas.runner import run_plan
    from biasatlas.store import Store

    measurement = stories.measurement_prompts(per_group, seed=seed)
    settings = PROBE.settings(PROBE.config(max_tokens=MAX_TOKENS, seed=generation_seed))
    # the extractor is opened from the generator's options with its model replaced (as the probe does)
    spec = backend.model_copy(update={"base_url": server_url, "api_key_env": KEY_ENV})
    model = backend.open()
    try:
        with Store(study) as store:
            run_plan(measurement.prompts, model, store, settings, config={"control": stories.NAME}, progress=False)
        counts, _ = run_extraction(study, measurement.prompts, model, spec, [SPEC], EXTRACT_MAX_TOKENS)
        backend_id = str(model.id)
    finally:
        model.close()
    verdict = judge(measured_profiles(study, backend_id, measurement), measurement, alpha)
    verdict.stories = int(counts.get("answered", 0))
    return StoriesCheck(verdict, backend_id, len(measurement.prompts), counts)


def measured_profiles(study: str | Path, backend_id: str, measurement: stories.Measurement) -> pd.DataFrame:
    """The voted profiles ``study`` stores for ``measurement``'s prompts as written by ``backend_id``."""
    from biasatlas.probes.stories.profiles import load_profiles
    from biasatlas.store import Store

    with Store(study) as store:
        profiles, _ = load_profiles(store)
    ids = {p.id for p in measurement.prompts}
    return profiles[(profiles["model"] == backend_id) & profiles["story_id"].str.rsplit(":", n=1).str[0].isin(ids)]
