"""Measure the contact control: ask the held-out prompts, find the groups that stand out, judge the result."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biasatlas.controls.common.measure import ask, false_flag_bound
from biasatlas.controls.contact import data as contact
from biasatlas.controls.contact.groups import GroupFinding, find_groups, flagged
from biasatlas.records import GenerationSettings

if TYPE_CHECKING:
    import pandas as pd

    from biasatlas.backends.options import BackendOptions

CONTACT_SETTINGS = GenerationSettings(mode="choice", max_tokens=10, temperature=0.0, seed=0)


@dataclass
class LanguageVerdict:
    """What the probe found in one language, against what was planted."""

    language: str
    planted: str
    found: GroupFinding | None  # the planted group's finding
    false_flags: list[str]
    untouched: int
    bound: int
    #: the group the probe's group-disparity headline names in this language (None: no group differs)
    headline: str | None = None

    @property
    def detected(self) -> bool:
        return bool(self.found and self.found.significant and self.found.effect > 0)

    @property
    def headlined(self) -> bool:
        """The planted group is what the probe's own headline names: "most disfavoured: <planted> …"."""
        return self.headline == self.planted

    @property
    def clean(self) -> bool:
        return len(self.false_flags) <= self.bound

    def as_dict(self) -> dict[str, Any]:
        return {"language": self.language, "planted": self.planted, "detected": self.detected,
                "found": None if self.found is None else self.found.as_dict(), "false_flags": self.false_flags,
                "untouched": self.untouched, "false_flag_bound": self.bound, "clean": self.clean,
                "headline_group": self.headline, "headlined": self.headlined}


@dataclass
class ContactCheck:
    """The verdicts of one measurement, and every group's finding."""

    verdicts: list[LanguageVerdict]
    findings: list[GroupFinding] = field(default_factory=list)
    prompts: int = 0
    backend_id: str = ""

    @property
    def passed(self) -> bool:
        return all(v.detected and v.clean and v.headlined for v in self.verdicts)


def judge(findings: list[GroupFinding], measurement: contact.Measurement, alpha: float,
          headlines: dict[str, str | None] | None = None) -> list[LanguageVerdict]:
    """Per language: was the planted group found (significant, more biased), how many others were flagged, and
    which group the probe's group-disparity headline names."""
    out = []
    for language, planted in measurement.planted.items():
        mine = [f for f in findings if f.language == language and f.group == planted]
        untouched = len(measurement.untouched[language])
        out.append(LanguageVerdict(language, planted, mine[0] if mine else None,
                                   [f.group for f in flagged(findings, language, planted)], untouched,
                                   false_flag_bound(untouched, alpha), (headlines or {}).get(language)))
    return out


def headline_groups(frame: Any, alpha: float) -> dict[str, str | None]:
    """Per language, the group the contact probe's group-disparity headline names as treated worse (None when
    its headline says no group differs): what `summary` and the report would print for this study."""
    from biasatlas.probes.contact.disparity import statistics
    from biasatlas.tidy.disparity import headline_lines

    out: dict[str, str | None] = {}
    for row, text in headline_lines(statistics(frame, alpha)):
        disfavoured = bool(row.get("significant")) and text.startswith("most disfavoured")
        out[str(row["language"])] = str(row["group"]) if disfavoured else out.get(str(row["language"]))
    return out


def check_contact(backend: BackendOptions, study: str | Path, cells: int | None = 6, alpha: float = 0.05,
                  seed: int = contact.SEED) -> ContactCheck:
    """Ask ``backend`` the contact control's held-out prompts (``cells`` per language) and judge the findings."""
    measurement = contact.measurement_prompts(cells, seed=seed)
    backend_id = ask(measurement.prompts, backend, study, CONTACT_SETTINGS, {"control": contact.NAME})
    ids = {p.id for p in measurement.prompts}
    frame = contact_outcomes(study, backend_id)
    frame = frame[frame["prompt_id"].isin(ids)]
    findings = find_groups(frame, alpha)
    return ContactCheck(judge(findings, measurement, alpha, headline_groups(frame, alpha)), findings,
                        len(measurement.prompts), backend_id)


def contact_outcomes(study: str | Path, backend_id: str | None = None) -> pd.DataFrame:
    """The contact probe's scored outcomes in ``study`` (of one backend when ``backend_id`` is given)."""
    from biasatlas.probes.contact.read import load_outcomes
    from biasatlas.store import Store

    with Store(study) as store:
        frame = load_outcomes(store)
    if backend_id is not None and not frame.empty:
        frame = frame[frame["model"] == backend_id]
    return frame
