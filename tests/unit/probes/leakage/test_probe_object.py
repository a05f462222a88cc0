"""The leakage Probe object: configuration errors, the plan, the --limit draw, the method from the model."""

from __future__ import annotations

from collections import Counter

import pytest

from biasatlas.backends.options import BackendOptions
from biasatlas.probes import load_probe
from biasatlas.probes.base import ProbeConfigError
from biasatlas.probes.leakage.data import LANGUAGES
from biasatlas.probes.leakage.plan import build_prompts, limit_plan, method_for_model
from biasatlas.probes.leakage.probe import PROBE, LeakageConfig
from biasatlas.records import Prompt

GROUPS = ["woman", "man", "immigrant"]


@pytest.fixture(scope="module")
def full() -> list[Prompt]:
    """The default plan (4 languages × 30 groups × 480 prompts), built once: it takes seconds."""
    return PROBE.plan(PROBE.config())


def test_registry_gives_the_probe() -> None:
    probe = load_probe("leakage")
    assert probe is PROBE and probe.name == "leakage"
    assert probe.modes == ("choice", "generate") and tuple(probe.default_languages) == LANGUAGES


@pytest.mark.parametrize(
    ("values", "needles"),
    [
        ({"languages": ["en", "xx"]}, ["--lang", "'xx'", "en, ru, zh, hi"]),
        ({"groups": "woman,martian"}, ["groups", "'martian'", "woman"]),
        ({"orders": "three"}, ["orders", "'three'", "both", "one"]),
        ({"mode": "sing"}, ["--mode", "'sing'", "choice, generate"]),
        ({"samples": 3}, ["--samples", "generate"]),
        ({"samples": 3, "mode": "choice"}, ["--samples", "generate"]),
        ({"method": "ilps", "mode": "generate"}, ["masked", "--mode generate"]),
        ({"method": "bert"}, ["method", "'bert'", "theme", "ilps"]),
    ],
)
def test_config_errors_are_one_line(values: dict, needles: list[str]) -> None:
    with pytest.raises(ProbeConfigError) as info:
        PROBE.config(**values)
    message = str(info.value)
    assert "\n" not in message
    for needle in needles:
        assert needle in message, (needle, message)


def test_defaults_are_todays() -> None:
    config = PROBE.config()
    assert isinstance(config, LeakageConfig)
    assert PROBE.mode_of(config) == "choice" and PROBE.samples(config) == 1
    choice = PROBE.settings(config)
    assert choice.mode == "choice" and choice.temperature == 0.0 and choice.max_tokens == 12
    gen = PROBE.config(mode="generate", seed=7)
    assert PROBE.samples(gen) == 10
    settings = PROBE.settings(gen)
    assert (settings.mode, settings.temperature, settings.max_tokens, settings.seed) == ("generate", 1.0, 12, 7)
    assert PROBE.samples(PROBE.config(mode="generate", samples=3)) == 3


def test_plan_is_the_union_of_each_languages_plan() -> None:
    config = PROBE.config(languages=["en", "zh"], groups=GROUPS, orders="one")
    prompts = PROBE.plan(config)
    assert Counter(p.language for p in prompts) == {"en": 3 * 240, "zh": 3 * 240}
    ids = {p.id for p in prompts}
    assert ids == {p.id for p in build_prompts(["en"], group_names=GROUPS, orders="one")} | {
        p.id for p in build_prompts(["zh"], group_names=GROUPS, orders="one")
    }


def test_default_plan_is_every_language_group_and_order(full: list[Prompt]) -> None:
    assert len(full) == 4 * 30 * 480
    assert Counter(p.language for p in full) == dict.fromkeys(LANGUAGES, 30 * 480)
    assert Counter(p.meta["order"] for p in full) == {"ab": len(full) // 2, "ba": len(full) // 2}


def test_group_names_are_case_insensitive_and_comma_separated() -> None:
    config = PROBE.config(groups="Woman, man")
    assert isinstance(config, LeakageConfig) and config.groups == ["woman", "man"]


@pytest.mark.parametrize("limit", [1, 2, 7, 40, 100, 333])
def test_limit_draws_at_most_n_prompts_spread_over_languages_and_comparisons(limit: int, full: list[Prompt]) -> None:
    prompts = limit_plan(full, limit, seed=3)
    assert 0 < len(prompts) <= max(limit, 2)  # one comparison in both orders is the smallest unit
    assert len(prompts) >= limit - 1
    languages = Counter(p.language for p in prompts)
    # every language it can: the limit is split evenly over the languages, whole comparisons each
    assert len(languages) == min(4, max(limit // 2, 1))
    assert max(languages.values()) - min(languages.values()) <= 2
    # both presentation orders of a comparison for a group are kept together
    units = Counter((p.language, p.meta["group"], p.meta["comparison"]) for p in prompts)
    assert set(units.values()) == {2}
    # a different comparison in each unit of a language, as far as there are comparisons
    for lang in languages:
        comps = [c for (lg, _, c) in units if lg == lang]
        assert len(set(comps)) == len(comps)
    if limit >= 100:
        assert len({p.meta["group"] for p in prompts}) > 20


def test_limit_is_seeded_and_keeps_the_plans_order(full: list[Prompt]) -> None:
    first = limit_plan(full, 40, seed=1)
    assert [p.id for p in first] == [p.id for p in limit_plan(full, 40, seed=1)]
    assert {p.id for p in first} != {p.id for p in limit_plan(full, 40, seed=2)}
    order = {id(p): i for i, p in enumerate(full)}
    assert [order[id(p)] for p in first] == sorted(order[id(p)] for p in first)
    # the probe applies the same draw to its plan
    config = PROBE.config(languages=["en", "hi"], groups=GROUPS, limit=40, seed=1)
    drawn = PROBE.plan(config)
    whole = build_prompts(["en", "hi"], group_names=GROUPS)
    assert len(drawn) == 40 and [p.id for p in drawn] == [p.id for p in limit_plan(whole, 40, seed=1)]


def test_limit_with_one_order_draws_single_prompts() -> None:
    prompts = PROBE.plan(PROBE.config(languages=["en"], groups=GROUPS, orders="one", limit=12))
    assert len(prompts) == 12
    assert len({p.meta["comparison"] for p in prompts}) == 12


def test_ilps_limit_keeps_templates_with_their_neutral_baseline() -> None:
    config = PROBE.config(method="ilps", languages=["ru"], groups=GROUPS, limit=8)
    prompts = PROBE.plan(config)
    assert 0 < len(prompts) <= 8
    for template, agreement in {(p.meta["template_id"], p.meta["agreement"]) for p in prompts}:
        same = [p for p in prompts if (p.meta["template_id"], p.meta["agreement"]) == (template, agreement)]
        assert any(p.meta["group"] == "(neutral)" for p in same)
        assert any(p.meta["group"] != "(neutral)" for p in same)
    full = PROBE.plan(PROBE.config(method="ilps", languages=["ru", "en"], groups=GROUPS))
    assert {p.meta["method"] for p in full} == {"ilps"}


def test_method_follows_the_model_spec() -> None:
    assert method_for_model("masked:bert-base-multilingual-cased") == "ilps"
    assert method_for_model("span:google/mt5-small") == "ilps"
    assert method_for_model("smollm2") == "theme" and method_for_model("openai:gpt-4o") == "theme"


def test_run_derives_the_method_and_rejects_a_mismatch(tmp_path) -> None:
    config = PROBE.config(languages=["en"], groups=["woman"], orders="one", limit=5)
    totals = PROBE.run(config, BackendOptions(model="fake:x"), tmp_path / "s")
    assert totals[0].planned == 5 and totals[0].failed == 0
    with pytest.raises(ProbeConfigError, match=r"ilps.*masked"):
        PROBE.run(PROBE.config(method="ilps", languages=["en"]), BackendOptions(model="fake:x"), tmp_path / "s")


def test_plan_summary_has_no_none_and_counts_languages() -> None:
    config = PROBE.config(languages=["en", "ru"], groups=GROUPS, limit=40)
    summary = PROBE.plan_summary(PROBE.plan(config), config)
    assert "None" not in str(summary)
    assert set(summary["languages"]) == {"en", "ru"} and summary["prompts"] <= 40
    assert "lang" not in summary["factors"] and summary["factors"]["method"] == {"theme": summary["prompts"]}
    ilps = PROBE.config(method="ilps", languages=["en"], groups=GROUPS)
    ilps_summary = PROBE.plan_summary(PROBE.plan(ilps), ilps)
    assert "None" not in str(ilps_summary) and "order" not in ilps_summary["factors"]


def test_no_import_circle_and_small_modules() -> None:
    import ast
    from pathlib import Path

    from biasatlas.probes.leakage import plan

    base = "biasatlas.probes.leakage"
    for path in Path(plan.__file__).parent.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert len(text.splitlines()) < 400, path.name
        imported: set[str] = set()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
                imported.update(f"{node.module}.{a.name}" for a in node.names)
            elif isinstance(node, ast.Import):
                imported.update(a.name for a in node.names)
        if path.stem != "probe":
            assert f"{base}.probe" not in imported, path.name
            assert f"{base}.report" not in imported, path.name
