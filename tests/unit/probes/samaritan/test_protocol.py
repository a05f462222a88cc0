"""The Samaritan Probe object: configuration, plan, --limit draw, settings, run record, package layout."""

from __future__ import annotations

import ast
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from biasatlas.probes import load_probe
from biasatlas.probes.base import ProbeConfigError
from biasatlas.probes.samaritan import data
from biasatlas.probes.samaritan.plan import build_prompts
from biasatlas.probes.samaritan.probe import PROBE, SamaritanConfig
from biasatlas.records import Prompt

PACKAGE = Path(data.__file__).parent
UNIT_SIZE = {"race": 11, "gender": 8, "age": 8}  # the control + every phrasing of the category


def _units(prompts: list[Prompt]) -> dict[tuple[str, str, int], list[Prompt]]:
    units: dict[tuple[str, str, int], list[Prompt]] = defaultdict(list)
    for p in prompts:
        units[(p.language, p.meta["scenario"], p.meta["rephrasing"])].append(p)
    return units


def test_registered_under_its_name() -> None:
    assert load_probe("samaritan") is PROBE
    assert PROBE.modes == ("generate",) and PROBE.languages[:2] == ("en", "de") and len(PROBE.languages) == 12


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({"categories": "religion"}, "--category 'religion' is not valid for samaritan; valid: race, gender, age, all"),
        ({"categories": ["age", "caste"]}, "--category 'caste'"),
        ({"categories": ""}, "--category ''"),
        ({"mode": "choice"}, "--mode 'choice' is not valid for samaritan; valid: generate"),
        ({"languages": ["en", "xx"]}, "--lang 'xx' is not valid for samaritan; valid: "
            "en, de, is, fr, es, it, pt, hi, id, vi, zh, ko"),
        ({"alpha": 1.5}, "alpha: must be between 0 and 1"),
        ({"correction": "fdr"}, "correction: must be one of bh, by, bonferroni, holm, none (got 'fdr')"),
        ({"samples": 0}, "samples"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_config_errors_are_one_line(values: dict[str, object], expected: str) -> None:
    with pytest.raises(ProbeConfigError) as err:
        PROBE.config(**values)
    message = str(err.value)
    assert expected in message and "\n" not in message


def test_categories_accept_all_lists_and_commas() -> None:
    assert PROBE.config().categories == ["race", "gender", "age"]
    assert PROBE.config(categories="all").categories == ["race", "gender", "age"]
    assert PROBE.config(categories="age, gender,age").categories == ["age", "gender"]
    assert PROBE.config(categories=("race",)).categories == ["race"]
    assert SamaritanConfig(categories="gender").categories == ["gender"]


def test_default_plan_is_the_papers_design() -> None:
    prompts = PROBE.plan(PROBE.config())
    assert len(prompts) == 412 * (1 + 10 + 7 + 7)
    assert {p.language for p in prompts} == {"en"}
    assert {p.meta["temperature"] for p in prompts} == {0.0}
    assert {p.meta["max_tokens"] for p in prompts} == {512}
    assert [p.id for p in prompts] == [p.id for p in build_prompts(data.CATEGORIES, "en")]


def test_multi_language_plan_is_the_union_of_each_language() -> None:
    config = PROBE.config(categories="gender", languages=["en", "de"])
    prompts = PROBE.plan(config)
    each = [p.id for lang in ("en", "de") for p in PROBE.plan(PROBE.config(categories="gender", languages=[lang]))]
    assert [p.id for p in prompts] == each
    assert Counter(p.language for p in prompts) == {"en": 3296, "de": 3296}
    assert len(set(each)) == len(each)


@pytest.mark.parametrize(("categories", "limit"), [("gender", 8), ("gender", 50), ("race,age", 190), ("all", 1000)])
def test_limit_counts_prompts_in_whole_units(categories: str, limit: int) -> None:
    config = PROBE.config(categories=categories, languages=["en", "de"], limit=limit, seed=3)
    prompts = PROBE.plan(config)
    size = 1 + sum(UNIT_SIZE[c] - 1 for c in config.categories)
    assert limit - size < len(prompts) <= limit
    units = _units(prompts)
    for members in units.values():  # the control and every group of the rephrasing: the analysis' pairs
        assert len(members) == size and sum(p.meta["is_control"] for p in members) == 1
        assert {p.meta["category"] for p in members} == {"control", *config.categories}
    cells = Counter((lang, scenario) for lang, scenario, _ in units)
    assert len(cells) == len(units)  # as many language × scenario cells as units: none repeated


def test_limit_covers_every_cell_it_can() -> None:
    cells = 2 * 103  # language × scenario; every unit holds every chosen category
    prompts = PROBE.plan(PROBE.config(categories="gender", languages=["en", "de"], limit=8 * cells))
    units = _units(prompts)
    assert len(prompts) == 8 * cells
    assert {(lang, scenario) for lang, scenario, _ in units} == {
        (lang, f"s{i:03d}") for lang in ("en", "de") for i in range(1, 104)
    }


def test_limit_below_one_unit_keeps_one_unit() -> None:
    prompts = PROBE.plan(PROBE.config(categories="age", limit=3))
    assert len(prompts) == 8 and len(_units(prompts)) == 1


def test_limit_draw_is_seeded() -> None:
    def draw(seed: int) -> list[str]:
        return [p.id for p in PROBE.plan(PROBE.config(categories="age", limit=80, seed=seed))]

    assert draw(1) == draw(1)
    assert draw(1) != draw(2)


def test_settings_defaults_as_before() -> None:
    one = PROBE.config()
    assert PROBE.settings(one).model_dump() == {
        "mode": "generate", "max_tokens": 512, "temperature": 0.0, "top_p": 1.0, "seed": 0,
    }
    several = PROBE.config(samples=3)
    assert PROBE.samples(several) == 3 and PROBE.settings(several).temperature == 1.0
    assert {p.meta["temperature"] for p in PROBE.plan(PROBE.config(samples=3, categories="age", limit=8))} == {1.0}
    chosen = PROBE.config(samples=3, temperature=0.7, max_tokens=12, seed=5)
    assert PROBE.settings(chosen).model_dump() == {
        "mode": "generate", "max_tokens": 12, "temperature": 0.7, "top_p": 1.0, "seed": 5,
    }
    assert {p.meta["max_tokens"] for p in PROBE.plan(PROBE.config(max_tokens=12, categories="age", limit=8))} == {12}


def test_run_record_keeps_alpha_and_correction_for_summary() -> None:
    record = PROBE.run_record(PROBE.config(categories="age", alpha=0.05, correction="bh"))
    assert record["alpha"] == 0.05 and record["correction"] == "bh"
    assert record["probe"] == "samaritan" and record["config"]["categories"] == ["age"]
    plain = PROBE.run_record(PROBE.config())
    assert "alpha" not in plain and "correction" not in plain


def test_plan_summary_has_no_none_keys() -> None:
    config = PROBE.config(categories="gender", languages=["en", "de"])
    summary = PROBE.plan_summary(PROBE.plan(config), config)
    assert summary["prompts"] == 2 * 3296 and summary["languages"] == {"de": 3296, "en": 3296}
    assert summary["scenarios"] == 103 and summary["cells_per_category"] == {"gender": 2 * 824}
    assert "language" not in summary["factors"]

    def keys(value: object) -> list[str]:
        if isinstance(value, dict):
            return [str(k) for k in value] + [k for v in value.values() for k in keys(v)]
        return []

    assert "None" not in keys(summary)


def test_summarise_refuses_unknown_analysis_options() -> None:
    with pytest.raises(TypeError, match="bogus"):
        PROBE.summarise(None, bogus=1)  # type: ignore[arg-type]


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


def test_no_import_circle_and_small_modules() -> None:
    base = "biasatlas.probes.samaritan"
    for path in PACKAGE.glob("*.py"):
        imported = _imports(path)
        assert len(path.read_text(encoding="utf-8").splitlines()) < 400, path.name
        if path.stem != "probe":
            assert f"{base}.probe" not in imported, path.name
            assert f"{base}.report" not in imported, path.name
