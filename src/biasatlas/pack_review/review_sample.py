"""What a native-speaker review reads: a pack's rendered prompts, drawn by stratum, with their English source.

The prompts are rendered from the pack's own folder (a shipped pack or a user's), exactly as the contact
and Samaritan plans write them (same text, same prompt id: a test checks it against both plans). Each
prompt carries its design coordinates (``design``, JSON), so a filled sheet is checked row by row by
rendering that one prompt again, without the whole plan.
"""

from __future__ import annotations

import json
import random
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from biasatlas.datafiles import DataFileError, load_yaml
from biasatlas.languages import Pack

CONTACT, SAMARITAN = "contact", "samaritan"
#: the share of a sheet's rows drawn from the Samaritan prompts (where the pack has them): about the
#: proportion of the reading that found the faults these sheets look for (42 contact, 20 Samaritan)
SAMARITAN_SHARE = 1 / 3


class ReviewError(ValueError):
    """A sheet, a pack or a request the review cannot use; one line."""


@dataclass(frozen=True)
class Unit:
    """One prompt to read, before it is written: probe, stratum, design coordinates."""

    probe: str
    stratum: Hashable
    design: tuple[Any, ...]


class PackPrompts:
    """The prompts of one pack folder, rendered on demand (one design cell at a time)."""

    def __init__(self, pack: Pack) -> None:
        self.pack = pack

    # ---- contact ------------------------------------------------------------------------------------
    @cached_property
    def _contact(self) -> tuple[Any, dict[tuple[str, str], Any], list[str]] | None:
        """(template set, descriptors by (axis, key), actions), or None when the pack has no contact templates."""
        from biasatlas.probes.contact.data import ACTIONS, ContactDataError, parse_template_file

        path = self.pack.file("contact_templates")
        if path is None or not path.exists():
            return None
        try:
            tset = parse_template_file(path, self.pack.code)
            groups = _groups(self.pack, tset)
        except (ContactDataError, OSError, ValueError) as exc:
            raise ReviewError(f"pack {self.pack.code}: {exc}") from exc
        actions = list(ACTIONS) if self.pack.code == "en" else (
            [a for a in self.pack.default_actions if a in ACTIONS] or ["positive"])
        return tset, {(d.axis, d.key): d for d in groups}, actions

    def contact_units(self) -> list[Unit]:
        """Every (cell, scale, action, descriptor) the plan asks, stratified by axis x scenario."""
        return list(self._contact_units)

    @cached_property
    def _contact_units(self) -> tuple[Unit, ...]:
        if self._contact is None:
            return ()
        tset, descriptors, actions = self._contact
        units: list[Unit] = []
        for cell in tset.cells:
            fitting = [d for d in descriptors.values() if d.fits(cell.agree, tset.grammar)]
            for scale in tset.scales:
                for action in (a for a in actions if a in cell.actions):
                    units.extend(Unit(CONTACT, (d.axis, cell.scenario), (cell.id, scale, action, d.axis, d.key))
                                 for d in fitting)
        return tuple(units)

    def contact_prompt(self, cell_id: str, scale: str, action: str, axis: str, key: str, contact: str) -> Any:
        """The one prompt of that design cell and framing (KeyError when the pack has no such cell)."""
        from biasatlas.probes.contact.data import CONTACTS
        from biasatlas.probes.contact.plan import SetSpec, set_prompts

        if self._contact is None:
            raise KeyError("no contact templates")
        tset, descriptors, actions = self._contact
        cell = next(c for c in tset.cells if c.id == cell_id)
        d = descriptors[(axis, key)]
        if scale not in tset.scales or action not in actions or action not in cell.actions \
                or not d.fits(cell.agree, tset.grammar):
            raise KeyError(cell_id)
        prompts = set_prompts(SetSpec(self.pack.code, tset, scale, cell, action, d), "v1.0")
        return prompts[CONTACTS.index(contact)], cell, d

    # ---- samaritan ----------------------------------------------------------------------------------
    @cached_property
    def _samaritan(self) -> tuple[Any, dict[str, Any], Any] | None:
        """(control, phrasings by name, scenario set) of the pack's Samaritan files, or None."""
        from biasatlas.probes.samaritan.data import SamaritanDataError, load_groups, load_scenarios

        groups_path, scen_path = self.pack.file("samaritan_groups"), self.pack.file("samaritan_scenarios")
        if groups_path is None or scen_path is None or not groups_path.exists() or not scen_path.exists():
            return None
        code = self.pack.code
        try:
            data = load_yaml(groups_path)
            if not isinstance(data, dict) or "phrasings" not in data:  # en, de: the probe's own shared files
                control, phrasings = load_groups()
                return control, {p.phrasing: p for p in phrasings if code in p.forms}, load_scenarios(code)
            return _pack_samaritan(self.pack, data, load_yaml(scen_path))
        except (DataFileError, SamaritanDataError, KeyError, TypeError) as exc:
            raise ReviewError(f"pack {code}: Samaritan files: {exc}") from exc

    def samaritan_units(self) -> list[Unit]:
        """Every (scenario, rephrasing, phrasing) incl. the control, stratified by category x rephrasing."""
        if self._samaritan is None:
            return []
        control, phrasings, scenarios = self._samaritan
        return [Unit(SAMARITAN, (p.category, r), (s.id, r, p.phrasing))
                for s in scenarios.scenarios for r in range(1, len(s.rephrasings) + 1)
                for p in (control, *phrasings.values())]

    def samaritan_prompt(self, scenario_id: str, rephrasing: int, phrasing: str) -> Any:
        """The prompt of that scenario rephrasing and phrasing, as the plan writes it at default decoding."""
        if self._samaritan is None:
            raise KeyError("no Samaritan files")
        control, phrasings, scenarios = self._samaritan
        who = control if phrasing == control.phrasing else phrasings[phrasing]
        scenario = next(s for s in scenarios.scenarios if s.id == scenario_id)
        if not 1 <= rephrasing <= len(scenario.rephrasings):
            raise KeyError(rephrasing)
        return samaritan_prompt(self.pack.code, scenario, rephrasing, who, scenarios.answer_instruction), who

    def units(self) -> list[Unit]:
        return [*self.contact_units(), *self.samaritan_units()]


def _groups(pack: Pack, tset: Any) -> tuple[Any, ...]:
    """The groups the plan asks in this pack (descriptors of one wording merged), read from its folder."""
    from biasatlas.languages.forms import fixed_entries
    from biasatlas.languages.mmhb import read_mmhb
    from biasatlas.probes.contact.data import Descriptor, raw_descriptors_for, yaml_descriptors
    from biasatlas.probes.contact.wording import one_per_wording, read_same_wording, slot_classes

    path = pack.file("descriptors")
    if path is not None and path.suffix == ".tsv":  # MMHB verbatim, then the pack's own form fixes
        raw = tuple(Descriptor(axis=e.axis, bucket=e.sense, key=e.id, label=e.forms[0].text, mmhb=e)
                    for e in fixed_entries(read_mmhb(path), pack.path, path))
    else:
        raw = raw_descriptors_for(pack.code) if pack.code == "en" else yaml_descriptors(pack.code)
    keep = {str(e["keep"]) for e in read_same_wording(pack.path)}
    return one_per_wording(raw, slot_classes([tset]), keep)


def _pack_samaritan(pack: Pack, groups: dict[str, Any], scen: dict[str, Any]) -> tuple[Any, dict[str, Any], Any]:
    """A pack-format ``samaritan/groups.yaml`` + ``scenarios.yaml``, named as the shipped phrasings are."""
    from biasatlas.probes.samaritan.data import Phrasing, Scenario, ScenarioSet, load_groups

    code = pack.code
    shipped_control, shipped = load_groups()
    by_name = {p.phrasing: p for p in shipped}
    c = groups["control"]
    control = Phrasing(shipped_control.category, shipped_control.group, shipped_control.phrasing,
                       {code: (str(c["indefinite"]), str(c["definite"]))})
    phrasings = {}
    for item in groups.get("phrasings") or []:
        base = by_name.get(str(item["phrasing"]))
        if base is None:
            raise KeyError(f"unknown phrasing {item['phrasing']!r}")
        phrasings[base.phrasing] = Phrasing(base.category, base.group, base.phrasing,
                                            {code: (str(item["indefinite"]), str(item["definite"]))})
    scenarios = tuple(Scenario(str(s["id"]), str(s.get("topic", "")), tuple(s["rephrasings"]))
                      for s in scen["scenarios"])
    return control, phrasings, ScenarioSet(code, str(scen["answer_instruction"]), scenarios, {})


def samaritan_prompt(language: str, scenario: Any, rephrasing: int, who: Any, instruction: str) -> Any:
    """One Samaritan prompt, as :func:`biasatlas.probes.samaritan.plan.build_prompts` writes it (default
    temperature 0 and answer length: the decoding is in the id, the text is not)."""
    from biasatlas.probes.samaritan.data import NAME
    from biasatlas.probes.samaritan.plan import DEFAULT_MAX_TOKENS
    from biasatlas.records import Message, Prompt

    text = f"{who.fill(scenario.rephrasings[rephrasing - 1], language)} {instruction}"
    return Prompt(probe=NAME, language=language, messages=(Message(role="user", content=text),),
                  meta={"scenario": scenario.id, "rephrasing": rephrasing, "category": who.category,
                        "group": who.group, "phrasing": who.phrasing, "is_control": who.is_control,
                        "temperature": 0.0, "max_tokens": int(DEFAULT_MAX_TOKENS)})


# ---- the draw -----------------------------------------------------------------------------------------
def draw(units: Sequence[Unit], n: int, rng: random.Random) -> list[Unit]:
    """``n`` units spread evenly over the strata (round robin over the strata in a seeded order, each
    stratum's share drawn at random within it); fewer when the pack has fewer."""
    by_stratum: dict[Hashable, list[Unit]] = {}
    for unit in units:
        by_stratum.setdefault(unit.stratum, []).append(unit)
    strata = sorted(by_stratum, key=repr)
    rng.shuffle(strata)
    quota = dict.fromkeys(strata, 0)
    left = min(n, len(units))
    while left > 0:
        for s in strata:
            if left and quota[s] < len(by_stratum[s]):
                quota[s] += 1
                left -= 1
    return [u for s in strata for u in rng.sample(by_stratum[s], quota[s])]


def sample_units(prompts: PackPrompts, n: int, seed: int) -> list[Unit]:
    """A sheet's units: about a third Samaritan (where the pack has them), the rest contact."""
    if n < 1:
        raise ReviewError("--n must be at least 1")
    rng = random.Random(seed)
    contact, samaritan = prompts.contact_units(), prompts.samaritan_units()
    if not contact and not samaritan:
        raise ReviewError(f"pack {prompts.pack.code} has no contact templates and no Samaritan files")
    n_sam = 0 if not samaritan else n if not contact else max(1, round(n * SAMARITAN_SHARE))
    chosen = draw(contact, n - n_sam, rng) + draw(samaritan, n_sam, rng)
    return [u for u in chosen if u.probe == CONTACT] + [u for u in chosen if u.probe == SAMARITAN]


def design_key(unit: Unit, contact: str | None = None) -> str:
    """The ``design`` column: the probe and its coordinates, as JSON (read back by :func:`parse_design`)."""
    return json.dumps([unit.probe, *unit.design, *([contact] if contact else [])], ensure_ascii=False)


def parse_design(text: str) -> list[Any]:
    try:
        value = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise ReviewError(f"design {text!r} is not one this command wrote") from exc
    if not isinstance(value, list) or not value or value[0] not in (CONTACT, SAMARITAN):
        raise ReviewError(f"design {text!r} is not one this command wrote")
    return value

