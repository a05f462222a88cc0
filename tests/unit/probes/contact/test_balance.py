"""--limit balanced over groups (the default; --no-balance-groups: the stratified draw): every group of the
selected axes draws the same prompt sets, on the same questions; below one set per group, or where a group's
wording fits fewer questions, one warning names them. The stratified draw warns once where it leaves groups
unequal."""

from __future__ import annotations

import warnings
from collections import Counter, defaultdict
from collections.abc import Hashable

import pytest

from biasatlas.probes.contact.balance import GroupBalanceWarning, group_of, question_of
from biasatlas.probes.contact.plan import ContactConfig, build_prompts, limit_specs, set_specs


def _draw(limit: int, seed: int = 0, **values: object) -> list:
    specs = set_specs(ContactConfig(**values))  # type: ignore[arg-type]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kept = limit_specs(specs, limit, seed, balance=True)
    assert not [w for w in caught if issubclass(w.category, GroupBalanceWarning)]
    return kept


@pytest.mark.parametrize(("values", "limit", "per_group"), [
    ({"languages": ["de"], "axes": ["religion"]}, 600, 28),  # 200 sets // 7 groups, 4 sets left
    ({"languages": ["de"], "axes": ["religion"]}, 21, 1),
    ({"languages": ["de"], "axes": ["religion"]}, 90, 4),
    ({"languages": ["en", "de"], "axes": ["religion"]}, 1200, 8),  # 400 sets // (39 + 7) groups, 32 left
    ({"languages": ["en"], "axes": ["religion", "nonce"], "scales": ["all"]}, 3 * 47 * 100, 100),
])
def test_every_group_draws_the_same_sets_on_the_same_questions(values: dict[str, object], limit: int,
                                                               per_group: int) -> None:
    kept = _draw(limit, **values)
    assert len(kept) == limit // 3  # N prompts in whole sets, as before
    counts = Counter(group_of(s) for s in kept)
    everyone = {group_of(s) for s in set_specs(ContactConfig(**values))}  # type: ignore[arg-type]
    assert set(counts) == everyone and set(counts.values()) <= {per_group, per_group + 1}
    questions: dict[str, dict[tuple[str, str, str], set[Hashable]]] = defaultdict(dict)
    for spec in kept:
        questions[spec.language].setdefault(group_of(spec), set()).add(question_of(spec))
    for by_group in questions.values():  # paired by question: every group of a language on the same r ones
        shared = set.intersection(*by_group.values())
        assert len(shared) in (per_group, per_group + 1)  # + 1: the sets left covered the language's groups
        assert all(len(q - shared) <= 1 for q in by_group.values())  # the rest: one more question, shared


def test_the_questions_are_seeded_and_spread_over_scenarios() -> None:
    a, b = (_draw(60, seed=1, languages=["de"], axes=["religion"]) for _ in range(2))
    c = _draw(60, seed=2, languages=["de"], axes=["religion"])
    assert a == b and {question_of(s) for s in a} != {question_of(s) for s in c}
    scenarios = {s.cell.scenario for s in _draw(7 * 3 * 5, languages=["de"], axes=["religion"])}
    assert len(scenarios) == 5  # 5 questions: one per scenario


def test_a_limit_below_one_set_per_group_warns_once_naming_the_groups_left_out() -> None:
    config = ContactConfig(languages=["de"], axes=["religion"], limit=12, balance_groups=True)
    with pytest.warns(GroupBalanceWarning) as caught:
        prompts = build_prompts(config)
    assert len(prompts) == 12 and len(caught) == 1
    drawn = {p.meta["group"] for p in prompts}
    message = str(caught[0].message)
    left = {d for d in ("Buddhists", "Christians", "Jews", "Muslims", "non-religious", "Russian Orthodox",
                        "Jehovah's Witnesses") if d not in drawn}
    assert f"{len(left)} of 7 groups left out" in message and "--limit 21 asks one prompt set per group" in message
    assert left and all(g in message for g in left)


def test_groups_whose_wording_fits_fewer_questions_are_named() -> None:
    # es religion: 4 of its groups fit 12 of the 60 questions (their noun agreement: feminine forms only, and
    # since the community scenario asks about neighbours, "vecinos", only the workplace's "personas" fits them)
    specs = set_specs(ContactConfig(languages=["es"], axes=["religion"]))
    groups = len({group_of(s) for s in specs})
    with pytest.warns(GroupBalanceWarning, match=f"4 of {groups} groups draw fewer than the 30 prompt sets") as caught:
        kept = limit_specs(specs, 3 * groups * 30, 0, balance=True)
    counts = Counter(group_of(s) for s in kept)
    # the 4 · 18 sets they cannot draw go to the other groups' next questions (one more each, then one more of a
    # second question for some): N prompts, as before
    rest, extra = divmod(groups * 30 - 4 * 12, groups - 4)
    expected = {12: 4, rest: groups - 4 - extra, **({rest + 1: extra} if extra else {})}
    assert dict(Counter(counts.values())) == expected
    assert len(kept) == groups * 30
    assert len(caught) == 1


def test_the_balanced_draw_is_the_default_and_the_stratified_one_warns_once_naming_the_fewest() -> None:
    from biasatlas.probes.power import power_plan

    config = ContactConfig(languages=["de"], axes=["religion"], limit=60, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # balanced: no warning
        prompts = build_prompts(config)
    specs = set_specs(config)
    assert [p.id for p in prompts] == [p.id for p in build_prompts(config.model_copy(update={"balance_groups": True}))]
    counts = Counter(p.meta["group"] for p in prompts if p.meta["contact"] == "none")
    assert len(counts) == 7 and set(counts.values()) <= {2, 3}  # 20 sets // 7 groups, the rest one more each
    with pytest.warns(GroupBalanceWarning) as caught:
        stratified = build_prompts(config.model_copy(update={"balance_groups": False}))
    assert len(caught) == 1 and "without --no-balance-groups" in str(caught[0].message)
    with pytest.warns(GroupBalanceWarning):
        drawn = limit_specs(specs, 60, 3, balance=False)
    assert [s.descriptor.key for s in drawn] == [
        p.meta["descriptor"] for p in stratified if p.meta["contact"] == "none"]
    plan = power_plan("contact", stratified, mode="generate")
    assert plan is not None
    (axis,) = plan["groups"]["axes"]
    unequal = Counter(p.meta["group"] for p in stratified if p.meta["contact"] == "none")
    fewest = min(unequal, key=lambda g: (unequal[g], g))
    assert axis["fewest"][fewest] == unequal[fewest] and fewest in str(caught[0].message)


def test_without_a_limit_the_plan_is_the_whole_design_whichever_draw() -> None:
    config = ContactConfig(languages=["de"], axes=["religion"])
    ids = [p.id for p in build_prompts(config)]
    assert ids == [p.id for p in build_prompts(config.model_copy(update={"balance_groups": False}))]
    assert len(ids) == 3 * len(set_specs(config))
