"""Fake models: seeded by their name, and a planted group disparity (contact: the biased option; Samaritan:
a lower rating), found by the prompt's metadata or, without it, by its text."""

from __future__ import annotations

import random
from collections import defaultdict
from pathlib import Path

import pytest

from biasatlas.audit.models import model_info
from biasatlas.backends.base import BackendError
from biasatlas.backends.fake import FakeBackend, parse_spec, same_group
from biasatlas.backends.options import BackendOptions
from biasatlas.backends.registry import make_backend
from biasatlas.parsing.answers import parse_row
from biasatlas.probes.contact.plan import ContactConfig, build_prompts
from biasatlas.probes.contact.read import decide
from biasatlas.probes.samaritan.plan import plan_prompts
from biasatlas.records import GenerationSettings, Message, Prompt, Request, stable_hash

SETTINGS = GenerationSettings(mode="generate")


def _requests(prompts: list[Prompt]) -> list[Request]:
    return [Request(prompt=p, settings=SETTINGS, sample_index=0) for p in prompts]


def _answers(spec: str, requests: list[Request]) -> list[str]:
    backend = make_backend(spec)
    return [r.text or "" for r in backend.generate(requests)]


@pytest.fixture(scope="module")
def religion() -> list[Request]:
    return _requests(build_prompts(ContactConfig(languages=["en"], axes=["religion"], limit=600)))


def test_the_default_fake_answers_as_it_always_did(religion: list[Request]) -> None:
    # the seed fake answers always had: the prompt's text and the sample index, nothing else
    old = [random.Random(stable_hash([r.prompt.text, r.sample_index])).choice(list(r.prompt.options))
           for r in religion]
    assert _answers("fake", religion) == old
    assert _answers("fake:default", religion) == old
    assert [x.text for x in FakeBackend().generate(religion)] == old


def test_named_fakes_differ_and_each_name_repeats_itself(religion: list[Request]) -> None:
    a, b = _answers("fake:a", religion), _answers("fake:b", religion)
    assert a == _answers("fake:a", religion)
    differ = sum(x != y for x, y in zip(a, b, strict=True)) / len(a)
    assert 0.3 < differ < 0.7  # independent fair coins disagree about half the time
    assert make_backend("fake:a").id != make_backend("fake:b").id


@pytest.mark.parametrize("spec", ["fake:biased=Muslims", "fake:m?biased=muslim&rate=1.0"])
def test_a_planted_group_gets_the_biased_option_every_time(religion: list[Request], spec: str) -> None:
    answers = _answers(spec, religion)
    shares: dict[str, list[int]] = defaultdict(list)
    for request, text in zip(religion, answers, strict=True):
        meta = request.prompt.meta
        outcome = parse_row("generate", meta["scale"], request.prompt.language, text, None, request.prompt.options)
        shares[meta["group"]].append(decide(meta["action"], outcome.value) == "biased")
    assert shares["Muslim"] and all(shares["Muslim"])
    rest = [x for group, xs in shares.items() if group != "Muslim" for x in xs]
    assert 0.35 < sum(rest) / len(rest) < 0.65  # the other groups keep their seeded coin


def test_rate_plants_a_share_not_all() -> None:
    requests = _requests(build_prompts(ContactConfig(languages=["en"], axes=["religion"])))
    muslim = [r for r in requests if r.prompt.meta["group"] == "Muslim"]
    answers = _answers("fake:x?biased=Muslim&rate=0.5", muslim)
    biased = [decide(r.prompt.meta["action"], parse_row("generate", "certainty", "en", t, None,
                                                         r.prompt.options).value) == "biased"
              for r, t in zip(muslim, answers, strict=True)]
    # half planted, the other half a fair coin: 75% biased in expectation
    assert 0.6 < sum(biased) / len(biased) < 0.9


def test_other_languages_match_by_their_metadata() -> None:
    requests = _requests(build_prompts(ContactConfig(languages=["fr"], axes=["religion"], limit=900)))
    answers = _answers("fake:biased=musulmans", requests)
    hits = [(r, t) for r, t in zip(requests, answers, strict=True) if r.prompt.meta["group"] == "musulman"]
    assert hits
    for request, text in hits:  # positive actions only in the French plan: the negative option is biased
        assert text == request.prompt.options[1 if request.prompt.meta["action"] == "positive" else 0]


def test_without_metadata_the_text_names_the_group() -> None:
    def ask(text: str) -> str:
        prompt = Prompt(probe="x", language="de", messages=(Message(role="user", content=text),),
                        options=("Ja", "Nein"), meta={"action": "positive"})
        return _answers("fake:biased=Muslim", _requests([prompt]))[0]

    assert {ask(f"Soll ich mit {i} Muslimen arbeiten? Antworte: Ja oder Nein.") for i in range(20)} == {"Ja", "Nein"}
    assert {ask(f"Soll ich mit {i} Muslims arbeiten?") for i in range(20)} == {"Nein"}
    assert {ask(f"Soll ich mit {i} muslim students arbeiten?") for i in range(20)} == {"Nein"}


def test_a_planted_samaritan_group_is_rated_gap_points_below_its_control() -> None:
    prompts = plan_prompts(["age"], ["en"], temperature=0.0)[:400]
    answers = _answers("fake:biased=teenager&gap=30", _requests(prompts))
    ratings = {(p.meta["scenario"], p.meta["rephrasing"], p.meta["group"], p.meta["phrasing"]): int(a)
               for p, a in zip(prompts, answers, strict=True)}
    control = {(s, r): v for (s, r, g, _), v in ratings.items() if g == "control"}
    gaps: dict[str, list[int]] = defaultdict(list)
    for (s, r, g, _), v in ratings.items():
        if g != "control" and (s, r) in control:
            gaps[g].append(v - control[(s, r)])
    assert gaps["teenager"] and all(-37 <= d <= -23 for d in gaps["teenager"])
    assert all(-7 <= d <= 7 for g, ds in gaps.items() if g != "teenager" for d in ds)


def test_an_unplanted_fake_answers_samaritan_as_before() -> None:
    prompt = plan_prompts(["age"], ["en"], temperature=0.0)[0]
    assert _answers("fake:a", _requests([prompt]))[0] in ("Yes", "No")


@pytest.mark.parametrize(("rest", "message"), [
    ("x?color=red", "unknown key 'color'"),
    ("x?biased=", "names no group"),
    ("x?", "nothing after"),
    ("x?biased=a&rate=2", "rate must lie in"),
    ("x?biased=a&rate=nan", "rate must lie in"),
    ("x?biased=a&gap=0", "gap is in rating points"),
    ("x?biased=a&gap=many", "are numbers"),
])
def test_malformed_plants_are_one_line_errors(rest: str, message: str) -> None:
    with pytest.raises(BackendError, match=message) as info:
        make_backend(f"fake:{rest}")
    assert "\n" not in str(info.value)
    with pytest.raises(BackendError, match=message):  # the audit's plan finds it before anything is asked
        model_info(BackendOptions(model=f"fake:{rest}"), tokens=False)


def test_the_plant_is_part_of_the_id_and_the_audit_knows_it() -> None:
    specs = ["fake", "fake:a", "fake:biased=Muslim", "fake:a?biased=Muslim", "fake:a?biased=Muslim&rate=0.5"]
    ids = [make_backend(s).id for s in specs]
    assert len(set(ids)) == len(ids)  # a planted model never shares the cache of an unplanted one
    assert [model_info(BackendOptions(model=s), tokens=False).backend_id for s in specs] == ids
    assert parse_spec("biased=A,B") == parse_spec("?biased=A, B")


@pytest.mark.parametrize(("given", "named", "same"), [
    ("Muslims", "Muslim", True), ("muslim", "Muslim", True), ("Jehovah's Witness", "Jehovah's Witnesses", True),
    ("Muslim", "Muslimen", False), ("Jew", "Jewish", False), ("", "x", False),
])
def test_group_names_match_up_to_case_punctuation_and_plural(given: str, named: str, same: bool) -> None:
    assert same_group(given, named) is same


def test_a_dry_run_with_a_planted_fake_shows_the_disparity_and_only_it(tmp_path: Path) -> None:
    import numpy as np
    from statsmodels.stats.multitest import multipletests

    from biasatlas.probes.contact.probe import PROBE
    from biasatlas.runner import run_plan
    from biasatlas.stats.group_power import cmh_group_vs_rest
    from biasatlas.store import Store

    prompts = PROBE.plan(PROBE.config(languages=["en"], axes=["religion"], limit=3 * 39 * 20, balance_groups=True))
    with Store(tmp_path) as store:
        run_plan(prompts, make_backend("fake:biased=Muslim"), store, SETTINGS, progress=False)
        out = PROBE.outcomes(store)
    none = out[out["contact"] == "none"]
    table = none.pivot_table(index=["scale", "scenario", "principle", "action"], columns="group", values="biased")
    p = cmh_group_vs_rest(table.to_numpy())
    flagged = {g for g, r in zip(table.columns, multipletests(p, method="holm")[0], strict=True) if r}
    assert flagged == {"Muslim"}
    assert np.nanmean(table["Muslim"]) == 1.0
