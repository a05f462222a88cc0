"""``--limit`` for the contact design, balanced over groups: every group of the selected axes draws the same
prompt sets, on the same questions (the group-vs-rest test pairs groups by question: docs/methods.md, "Power
for group disparity").

A question is one wording with the group left out (language × template set × scale × cell × action); each
group of the language fitting it has one prompt set of it. A limit of N prompts is S = N // 3 sets; with G
groups over the configured languages every group gets r = S // G sets, on r questions drawn per language
(seeded, spread over scales, actions and scenarios), questions every group of the language fits first. The S − rG
sets left go to one more question per language, languages taking turns, its groups in a seeded order: so a
run asks N prompts (whole sets) as before, and no two groups differ by more than one set. Below one set per
group the draw is the stratified one of :func:`biasatlas.probes.base.limit_prompts` and a warning names the
groups left out; a group whose wording fits fewer questions than it would draw is named too. The balanced
draw is the default (``ContactConfig.balance_groups``; ``--no-balance-groups`` asks for the stratified draw of
earlier versions, which warns once where it leaves groups out or gives them fewer sets); without ``--limit``
the plan is the whole design either way.
"""

from __future__ import annotations

import random
import warnings
from collections import defaultdict
from collections.abc import Hashable, Sequence
from itertools import zip_longest
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from biasatlas.probes.contact.plan import SetSpec

#: groups a warning names before "and N more"
NAMED = 5


class GroupBalanceWarning(UserWarning):
    """A --limit under which some groups of the selected axes draw fewer prompt sets than the others."""


def group_of(spec: SetSpec) -> tuple[str, str, str]:
    return (spec.language, spec.descriptor.axis, spec.descriptor.label)


def question_of(spec: SetSpec) -> Hashable:
    return (spec.language, spec.tset.name, spec.scale, spec.cell.id, spec.action)


def _names(groups: Sequence[tuple[str, str, str]], counts: dict[tuple[str, str, str], int] | None = None) -> str:
    shown = [f"{g[2]}" + (f" ({counts[g]})" if counts is not None else "") for g in groups[:NAMED]]
    more = len(groups) - NAMED
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def _design_key(spec: SetSpec) -> tuple[str, str, str, str]:
    """A question's place in the design, the same in every language (scale, action, scenario, principle)."""
    return (spec.scale, spec.action, spec.cell.scenario, spec.cell.principle)


Key = tuple[str, ...]


def _turns(keys: list[Key], depth: int, rng: random.Random) -> list[Key]:
    """``keys`` (sharing their first ``depth`` parts) in a seeded order that takes the values of part ``depth``
    in turns, each ordered the same way by the next part: the first k are spread over every part in turn."""
    if depth >= len(keys[0]) - 1:
        out = list(keys)
        rng.shuffle(out)
        return out
    groups: dict[str, list[Key]] = defaultdict(list)
    for key in keys:
        groups[key[depth]].append(key)
    queues = [_turns(groups[v], depth + 1, rng) for v in sorted(groups)]
    rng.shuffle(queues)
    return [k for row in zip_longest(*queues) for k in row if k is not None]


def _order(keys: set[Key], rng: random.Random) -> dict[Key, int]:
    """A seeded rank of the design's questions (scale, action, scenario, principle) whose first k are spread:
    scales take turns, then actions, then scenarios (three questions: each scale; two of one scale: both
    actions). One rank for every language, so languages draw the same questions where they have them (the
    across-language tests pair them)."""
    return {key: i for i, key in enumerate(_turns(sorted(keys), 0, rng))}


def balanced_specs(specs: Sequence[SetSpec], limit: int, seed: int) -> list[SetSpec] | None:
    """The prompt sets of a balanced draw (see the module docstring), in plan order; None below one set per
    group (the caller draws as before and calls :func:`warn_unequal`)."""
    groups: dict[str, set[tuple[str, str, str]]] = defaultdict(set)
    members: dict[Hashable, list[int]] = defaultdict(list)
    spec_of: dict[Hashable, SetSpec] = {}
    for i, spec in enumerate(specs):
        groups[spec.language].add(group_of(spec))
        q = question_of(spec)
        members[q].append(i)
        spec_of.setdefault(q, spec)
    total = sum(len(g) for g in groups.values())
    budget = limit // 3
    per_group = budget // total if total else 0
    if per_group == 0:
        return None
    chosen: list[int] = []
    extra: list[list[list[int]]] = []  # per language, the sets of its following questions, in a seeded order
    rng = random.Random(seed)
    rank = _order({_design_key(spec) for spec in spec_of.values()}, rng)
    for language, everyone in groups.items():
        questions = [q for q in members if spec_of[q].language == language]
        # questions every group of the language fits first, each in the design's seeded rank
        order = sorted(questions, key=lambda q: ({group_of(specs[i]) for i in members[q]} != everyone,
                                                 rank[_design_key(spec_of[q])], repr(q)))
        picked = order[:per_group]
        chosen.extend(i for q in picked for i in members[q])
        following: list[list[int]] = []  # the next questions' sets, question by question (each seeded)
        for q in order[per_group:]:
            sets = list(members[q])
            rng.shuffle(sets)
            following.append(sets)
        extra.append(following)
    # the rest of the budget: one set at a time from each language's next question, languages taking turns; where
    # groups that fit fewer questions leave more than one question's sets over, every language's following
    # question comes next (so no group draws two sets more than another that fits as many questions)
    left = budget - len(chosen)
    for depth in range(max((len(f) for f in extra), default=0)):
        for row in zip_longest(*(f[depth] if depth < len(f) else [] for f in extra)):
            for i in row:
                if i is not None and left > 0:
                    chosen.append(i)
                    left -= 1
    kept = [specs[i] for i in sorted(chosen)]
    _warn_short(kept, groups, per_group, limit)
    return kept


def _warn_short(kept: Sequence[SetSpec], groups: dict[str, set[tuple[str, str, str]]], per_group: int,
                limit: int) -> None:
    counts: dict[tuple[str, str, str], int] = defaultdict(int)
    for spec in kept:
        counts[group_of(spec)] += 1
    everyone = sorted(g for gs in groups.values() for g in gs)
    short = sorted((g for g in everyone if counts[g] < per_group), key=lambda g: (counts[g], g))
    if short:
        warnings.warn(f"--limit {limit}: {len(short)} of {len(everyone)} groups draw fewer than the {per_group} "
                      f"prompt sets each other group draws (their wording fits fewer questions): "
                      f"{_names(short, counts)}", GroupBalanceWarning, stacklevel=3)


def warn_unequal(specs: Sequence[SetSpec], kept: Sequence[SetSpec], limit: int, balance: bool) -> None:
    """Say once which groups a stratified draw leaves out, or gives fewer prompt sets than the most any group
    draws (the group-vs-rest test then has fewer questions for them)."""
    everyone = sorted({group_of(s) for s in specs})
    if len(everyone) < 2:
        return
    counts: dict[tuple[str, str, str], int] = defaultdict(int)
    for spec in kept:
        counts[group_of(spec)] += 1
    most = max(counts.values())
    left = [g for g in everyone if not counts[g]]
    under = sorted((g for g in everyone if 0 < counts[g] < most), key=lambda g: (counts[g], g))
    if not left and not under:
        return
    parts = [f"{len(left)} of {len(everyone)} groups left out ({_names(left)})"] if left else []
    if under:
        parts.append(f"{len(under)} draw fewer than {most} prompt sets ({_names(under, counts)})")
    if balance:  # below one set per group a balanced draw cannot be made
        advice = f"--limit {3 * len(everyone)} asks one prompt set per group"
    else:
        advice = "without --no-balance-groups the draw gives every group the same prompt sets"
    warnings.warn(f"--limit {limit}: the groups of the selected axes draw unequal prompt sets: "
                  f"{'; '.join(parts)}; {advice}", GroupBalanceWarning, stacklevel=3)
