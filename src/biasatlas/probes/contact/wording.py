"""One group per wording: descriptors of a language that render alike become one group.

Two descriptors whose noun phrases read the same in a slot the language's templates use (fr F_D344
"Catholic" and F_D368 "Roman Catholic" are both *catholiques*) would ask the same question twice: one
answer from the cache, counted under two groups, each group in the other's "rest". They are merged
when the language's descriptors are loaded (:func:`biasatlas.probes.contact.data.descriptors_for`):

- the descriptors that share a wording in any slot are one cluster (transitively);
- the cluster keeps the id its pack's ``same_wording.yaml`` names as ``keep`` (a reviewed choice: pt
  *negro* is kept as F_D321 "Black", race_ethnicity, not P_D019 of body_type), else the id that fills
  the most slots (ties: the first in the file, which lists P_ before F_ ids in every MMHB pack), so a
  feminine-only descriptor does not silence its all-form twin;
- the other ids are recorded on it (``Descriptor.merged``) and fill a slot it has no form for;
- a cluster keeps its place in the file order, so the plan order of the other groups is unchanged.

Wordings are compared casefolded, whitespace collapsed, with the noun left out (it is the same for
every descriptor of a slot). The merge is whole-language (every axis): a plan of one axis asks the
groups the full plan asks, so its answers align with a full run's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

from biasatlas.probes.contact.data import SLOT, Descriptor, TemplateSet

#: a slot class: the case the slot names, the noun's agreement and the template set's grammar
SlotClass = tuple[str, tuple[tuple[str, str], ...], tuple[tuple[str, Any], ...]]
#: a pack's list of its merges (``keep``, ``ids``, ``wording``), checked by ``biasatlas languages check``
SAME_WORDING = "same_wording.yaml"
_NOUN = "\u2063"  # a stand-in noun: the same for every descriptor, so it never tells two apart


def normalise(text: str) -> str:
    """Casefolded, whitespace collapsed (the comparison of two wordings)."""
    return " ".join(text.casefold().split())


def slot_classes(tsets: dict[str, TemplateSet] | Iterable[TemplateSet]) -> tuple[SlotClass, ...]:
    """Every distinct (case, agreement, grammar) a slot of these template sets takes, in first-use order."""
    sets = tsets.values() if isinstance(tsets, dict) else tsets
    found: dict[SlotClass, None] = {}
    for tset in sets:
        grammar = tuple(sorted(tset.grammar.items()))
        for cell in tset.cells:
            texts = [cell.contact["positive"], cell.contact["negative"],
                     *(q for spec in cell.actions.values() for k, q in spec.items() if k != "verb")]
            agree = tuple(sorted(cell.agree.items()))
            for text in texts:
                for case in SLOT.findall(text):
                    found.setdefault((case, agree, grammar), None)
    return tuple(found)


def wording(d: Descriptor, slot: SlotClass) -> str | None:
    """The descriptor's normalised noun phrase (noun left out) in a slot of that class, or None if it cannot fill it."""
    case, agree, grammar = dict_slot(slot)
    if not d.fits(agree, grammar):
        return None
    return normalise(d.render({case: _NOUN}, case, agree, grammar).replace(_NOUN, " "))


def dict_slot(slot: SlotClass) -> tuple[str, dict[str, str], dict[str, Any]]:
    case, agree, grammar = slot
    return case, dict(agree), dict(grammar)


def collisions(descriptors: Sequence[Descriptor], slots: Sequence[SlotClass]) -> list[list[int]]:
    """Clusters (indices in file order) of descriptors that share a wording in some slot; singletons left out."""
    parent = list(range(len(descriptors)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for slot in slots:
        first: dict[str, int] = {}
        for i, d in enumerate(descriptors):
            text = wording(d, slot)
            if text is None:
                continue
            if text in first:
                a, b = root(first[text]), root(i)
                parent[max(a, b)] = min(a, b)
            else:
                first[text] = i
    clusters: dict[int, list[int]] = {}
    for i in range(len(descriptors)):
        clusters.setdefault(root(i), []).append(i)
    return [c for c in clusters.values() if len(c) > 1]


def one_per_wording(descriptors: Sequence[Descriptor], slots: Sequence[SlotClass],
                    keep: Collection[str] = ()) -> tuple[Descriptor, ...]:
    """The descriptors with every cluster of one wording merged into one group (module doc); ``keep``: ids
    to keep where a cluster holds one."""
    fills = [sum(wording(d, s) is not None for s in slots) for d in descriptors]
    replace: dict[int, Descriptor | None] = {}
    for cluster in collisions(descriptors, slots):
        kept = min(cluster, key=lambda i: (descriptors[i].key not in keep, -fills[i], i))
        folded = tuple(descriptors[i] for i in cluster if i != kept)
        for i in cluster:
            replace[i] = None
        replace[min(cluster)] = dataclasses.replace(descriptors[kept], merged=folded)
    out = [replace.get(i, d) for i, d in enumerate(descriptors)]
    return tuple(d for d in out if d is not None)


def read_same_wording(folder: Path) -> list[dict[str, Any]]:
    """The merges a pack lists in its ``same_wording.yaml`` (none when it has no such file)."""
    from biasatlas.datafiles import load_yaml

    path = folder / SAME_WORDING
    data = load_yaml(path) if path.exists() else None
    return list(data.get("merged") or []) if isinstance(data, dict) else []


def merges(descriptors: Sequence[Descriptor]) -> dict[str, tuple[str, ...]]:
    """Kept id -> the ids folded into it, of the merged groups of a loaded language."""
    return {d.key: d.merged_ids for d in descriptors if d.merged}


def plan_note(language: str, hb_version: str = "v1.0", axes: Sequence[str] | None = None) -> dict[str, Any]:
    """What ``--plan-only`` says of a language's groups: descriptors given and groups asked (of the chosen
    axes), the merges, and the descriptors of these axes asked under a group of another axis."""
    from biasatlas.probes.contact.data import descriptors_for, raw_descriptors_for

    def chosen(d: Descriptor) -> bool:
        return not axes or d.axis in axes

    groups = [g for g in descriptors_for(language, hb_version) if chosen(g)]
    note: dict[str, Any] = {
        "given": sum(chosen(d) for d in raw_descriptors_for(language, hb_version)),
        "groups": len(groups),
        "merged": {g.key: list(g.merged_ids) for g in groups if g.merged},
    }
    elsewhere = {f"{m.axis}:{m.key}": f"{g.axis}:{g.key}" for g in descriptors_for(language, hb_version)
                 if not chosen(g) for m in g.merged if chosen(m)}
    if elsewhere:
        note["asked_under_another_axis"] = elsewhere
    if note["merged"] or elsewhere:
        note["why"] = ("descriptors that read as one wording in this language are asked as one group "
                       "(docs/languages.md, 'One group per wording')")
    return note
