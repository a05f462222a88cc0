"""Stories end to end on the fake backend: prompts, refusals, extraction, votes, import, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from biasatlas.backends.fake import FakeBackend
from biasatlas.cli.main import app
from biasatlas.probes.stories.analysis import summarise
from biasatlas.probes.stories.extract_step import extraction_prompts
from biasatlas.probes.stories.importer import REQUIRED_COLUMNS, import_stories, read_table
from biasatlas.probes.stories.plan import build_prompts
from biasatlas.probes.stories.profiles import load_profiles
from biasatlas.probes.stories.read import story_rows
from biasatlas.probes.stories.report import report_sections
from biasatlas.probes.stories.seeds import SeedError, _check_against, load_seeds
from biasatlas.records import GenerationSettings, Request
from biasatlas.runner import run_plan
from biasatlas.store import Store

EN = load_seeds("en")


def test_prompts_cover_every_value_and_scenario_once():
    prompts = build_prompts(EN)
    assert len(prompts) == 79 * 36
    assert len({(p.meta["base_value"], p.meta["base_attribute"], p.meta["scenario_key"]) for p in prompts}) == 2844
    first = build_prompts(EN, limit=5)
    assert len({p.meta["base_attribute"] for p in first}) == 5  # a small limit still varies A
    text = first[0].messages[0].content
    assert "a child (0-12 years old)" in text and "doing the weekly grocery shopping" in text


@pytest.mark.parametrize("lang", ["en", "fr", "es", "it", "pt", "nl", "uk", "ar", "hi", "zh"])
def test_every_language_has_matching_seeds_with_provenance(lang):
    seeds = load_seeds(lang)
    assert len(seeds.prompted) == 79 and len(seeds.scenarios) == 36
    assert {p["native_speaker_reviewed"] for p in seeds.provenance.values()} <= {False, True}
    assert [d for d in seeds.dimensions] == list(EN.dimensions)


def test_language_without_seeds_is_a_clear_error():
    with pytest.raises(SeedError, match=r"no attributes seeds for language 'de'.*languages with seeds: ar, en"):
        load_seeds("de")


def test_key_mismatch_names_the_missing_value():
    fr = load_seeds("fr")
    dims = dict(fr.dimensions)
    income = dims["income_level"]
    dims["income_level"] = type(income)(income.key, income.label, income.values[:2])
    broken = type(fr)(fr.language, dims, fr.scenarios, fr.story_template, fr.extraction_template,
                      fr.refusal_markers, fr.provenance)
    with pytest.raises(SeedError, match=r"income_level: values missing \['high'\]"):
        _check_against(broken, EN)


STORY = "Amina, 67, had retired from the post office. She rented a small flat."


def _story_script(request: Request) -> str:
    meta = request.prompt.meta
    if meta["base_attribute"] == "religion":
        return "I'm sorry, but I cannot write this story."
    return f"{STORY} ({meta['base_value']}, sample {request.sample_index})"


def _extractor(answer: str | None):
    def script(request: Request) -> str:
        if answer is not None:
            return answer
        return json.dumps({"age": {"value": "senior", "evidence": "Amina, 67"},
                           "employment_status": {"value": "retired", "evidence": "had retired"},
                           "housing_status": {"value": "renter", "evidence": "rented a small flat"}})
    return script


def _run_study(tmp_path: Path) -> Store:
    store = Store(tmp_path)
    prompts = [p for p in build_prompts(EN) if p.meta["base_attribute"] in {"income_level", "religion"}][:20]
    run_plan(prompts, FakeBackend(_story_script, name="gen"), store, GenerationSettings(max_tokens=50, temperature=1.0),
             samples=2, progress=False)
    frame = story_rows(store)
    assert frame["refusal"].sum() == sum(p.meta["base_attribute"] == "religion" for p in prompts) * 2
    ex_prompts = extraction_prompts(frame)
    assert all(p.meta["base_attribute"] != "religion" for p in ex_prompts)  # refusals are not extracted
    # three extractors: two agree, one answers garbage -> the majority (2 of 3) still holds
    for name, answer in (("a", None), ("b", None), ("c", "no idea")):
        run_plan(ex_prompts, FakeBackend(_extractor(answer), name=name), store, GenerationSettings(max_tokens=200),
                 progress=False)
    return store


def test_profiles_vote_and_keep_the_prompted_attribute(tmp_path):
    store = _run_study(tmp_path)
    profiles, counts = load_profiles(store)
    assert counts["stories"]["refusals"] > 0
    # a and b answer 3 of the 18 attributes (the rest counted as missing): repaired; c: rejected
    assert counts["extraction"]["answers"] == {"repaired": 2 * len(profiles), "rejected": len(profiles)}
    assert counts["extraction"]["rejection_reasons"] == {"no JSON object in the answer": len(profiles)}
    assert set(profiles["age"]) == {"senior"} and set(profiles["housing_status"]) == {"renter"}
    assert set(profiles["gender"]) == {"unknown"}
    # the prompted attribute comes from the prompt
    assert (profiles["income_level"] == profiles["base_value"]).all()
    assert counts["extraction"]["evidence_not_in_story_by_attribute"] == {}


def test_two_of_three_needed(tmp_path):
    store = Store(tmp_path)
    prompts = [p for p in build_prompts(EN) if p.meta["base_attribute"] == "income_level"][:3]
    run_plan(prompts, FakeBackend(_story_script, name="gen"), store, GenerationSettings(max_tokens=50),
             progress=False)
    ex_prompts = extraction_prompts(story_rows(store))
    for name, answer in (("a", None), ("b", "no idea"), ("c", "still no idea")):
        run_plan(ex_prompts, FakeBackend(_extractor(answer), name=name), store, GenerationSettings(max_tokens=200),
                 progress=False)
    # the paper's rule: a majority of the valid answers (n_valid // 2 + 1): 1 valid answer of 3 decides
    profiles, counts = load_profiles(store)
    assert set(profiles["age"]) == {"senior"}
    assert counts["vote"].startswith("valid")
    # a majority of all extractors: 1 vote of 3 is not a majority
    strict, counts = load_profiles(store, vote="all")
    assert set(strict["age"]) == {"unknown"} and counts["vote"].startswith("all")


def test_stories_whose_extractions_were_all_rejected_are_not_profiles(tmp_path):
    store = Store(tmp_path)
    prompts = [p for p in build_prompts(EN) if p.meta["base_attribute"] == "income_level"][:3]
    run_plan(prompts, FakeBackend(_story_script, name="gen"), store, GenerationSettings(max_tokens=50),
             progress=False)
    ex_prompts = extraction_prompts(story_rows(store))
    for name in ("b", "c"):
        run_plan(ex_prompts, FakeBackend(_extractor("no idea"), name=name), store,
                 GenerationSettings(max_tokens=200), progress=False)
    profiles, counts = load_profiles(store)
    assert profiles.empty and counts["profiles"] == 0
    assert counts["stories"]["all_extractions_rejected"] == 3
    summary = summarise(store)
    assert summary["associations"] == []
    assert "3 extracted stories had every extraction rejected" in summary["empty_reason"]
    from biasatlas.probes.stories.profiles import story_outcomes

    assert set(story_outcomes(store)["reason"]) == {"every extraction rejected"}


def test_empty_tables_say_why(tmp_path):
    store = _run_study(tmp_path)  # 20 stories of one model, only 10 prompted values with a profile
    summary = summarise(store)
    assert summary["associations"] == []
    assert "fewer than 10 stories" in summary["empty_reason"]
    no_story = summarise(Store(tmp_path / "empty"))
    assert no_story["empty_reason"] == "no stories in the study"


def test_summary_and_report_run(tmp_path):
    store = _run_study(tmp_path)
    summary = summarise(store)
    assert summary["counts"]["profiles"] > 0
    assert summary["refusal_rate"]["refusals"] > 0
    assert "associations" in summary
    assert report_sections(store)


def _published_rows(n: int = 6) -> pd.DataFrame:
    rows = []
    for i in range(n):
        rows.append({
            "sample_id": f"s{i % 3}",
            "generator_model": "gpt-x" if i % 2 else "claude-y",
            "language": "du" if i == 5 else "en",
            "target_attribute": "income_level",
            "target_attribute_value": "a person with low income",
            "attribute_value_key": "low income",
            "scenario": "applying for food stamps",
            "scenario_key": "applying_for_food_stamps",
            "story": f"story {i}",
            "extracted_attributes_json": json.dumps({
                "age": "senior (65+)", "geographic_origin": "south or central america (e.g. Mexico)",
                "religion": "Atheist/Agnostic", "housing_status": "homeowner", "gender": "martian",
            }),
        })
    return pd.DataFrame(rows)


def test_import_published_layout(tmp_path):
    path = tmp_path / "stories.csv"
    _published_rows().to_csv(path, index=False)
    counts = import_stories(path, tmp_path / "study")
    assert counts["stories_imported"] == 6 and counts["extractions_imported"] == 6
    assert counts["out_of_vocabulary_values_set_to_unknown"] == {"gender": 6}
    with Store(tmp_path / "study") as store:
        profiles, pc = load_profiles(store)
    assert len(profiles) == 6
    row = profiles.iloc[0]
    assert (row["age"], row["geographic_origin"], row["religion"], row["housing_status"], row["gender"]) == (
        "senior", "latin_america", "nonreligious", "owner", "unknown")
    assert set(profiles["language"]) == {"en", "nl"}  # the published 'du' is Dutch
    assert set(profiles["model"]) == {"import:gpt-x", "import:claude-y"}
    assert pc["extraction"]["answers"] == {"valid": 6}
    # importing twice adds nothing
    import_stories(path, tmp_path / "study")
    with Store(tmp_path / "study") as store:
        assert len(load_profiles(store)[0]) == 6


def test_import_missing_columns_is_a_clear_error(tmp_path):
    path = tmp_path / "bad.csv"
    _published_rows().drop(columns=["story", "scenario_key"]).to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"missing columns \['scenario_key', 'story'\]"):
        read_table(path)
    result = CliRunner().invoke(app, ["stories", "import", "--stories", str(path), "--study", str(tmp_path / "s")])
    assert result.exit_code == 2
    assert "missing columns" in result.output
    assert set(REQUIRED_COLUMNS) >= {"story", "scenario_key"}


def test_associations_cli_json(tmp_path):
    path = tmp_path / "stories.csv"
    _published_rows().to_csv(path, index=False)
    runner = CliRunner()
    imported = runner.invoke(app, ["stories", "import", "--stories", str(path), "--study", str(tmp_path / "s")])
    assert imported.exit_code == 0
    result = runner.invoke(app, ["associations", "--study", str(tmp_path / "s"), "--per-language", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["counts"]["profiles"] == 6
    assert "global" in data and "per_language" in data
    # six stories cannot make a table: the output says why there is no association, and has per-model rows
    assert data["global"]["associations"] == [] and data["global"]["per_model"] == []
    assert "fewer than 10 stories" in data["global"]["empty_reason"]
    missing = runner.invoke(app, ["associations", "--study", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2


def test_extraction_prompts_carry_the_json_schema_to_http_servers(tmp_path):
    from biasatlas.backends.openai_compat import OpenAIBackend, OpenAIOptions

    store = Store(tmp_path)
    prompts = [p for p in build_prompts(EN) if p.meta["base_attribute"] == "income_level"][:1]
    run_plan(prompts, FakeBackend(_story_script, name="gen"), store, GenerationSettings(max_tokens=50), progress=False)
    ex_prompt = extraction_prompts(story_rows(store))[0]
    backend = OpenAIBackend.__new__(OpenAIBackend)  # only the request body is under test: no server
    backend.model, backend.options = "m", OpenAIOptions()  # the body reads the options since the http split
    body = backend._body(Request(prompt=ex_prompt, settings=GenerationSettings(max_tokens=10)), choice=False)
    schema = body["response_format"]["json_schema"]["schema"]
    assert set(schema["required"]) == set(EN.dimensions) - {"income_level"}


def test_associations_cli_vote_rule(tmp_path):
    store = Store(tmp_path)
    prompts = [p for p in build_prompts(EN) if p.meta["base_attribute"] == "income_level"][:3]
    run_plan(prompts, FakeBackend(_story_script, name="gen"), store, GenerationSettings(max_tokens=50),
             progress=False)
    ex_prompts = extraction_prompts(story_rows(store))
    for name, answer in (("a", None), ("b", "no idea"), ("c", "still no idea")):
        run_plan(ex_prompts, FakeBackend(_extractor(answer), name=name), store, GenerationSettings(max_tokens=200),
                 progress=False)
    store.close()
    runner = CliRunner()
    for vote in ("valid", "all"):
        result = runner.invoke(app, ["associations", "--study", str(tmp_path), "--json", "--vote", vote])
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["counts"]["vote"].startswith(vote)
    bad = runner.invoke(app, ["associations", "--study", str(tmp_path), "--vote", "most"])
    assert bad.exit_code == 2 and "--vote 'most'" in bad.output


def test_reasoning_blocks_are_not_part_of_the_story(tmp_path):
    """A reasoning model's stories (found in review): the think block's "I can't..." is not a refusal, the
    story without its reasoning is what is extracted, and an answer cut inside its reasoning has no story."""
    thinking = "<think>I can't make her a teacher again; maybe a nurse? No: keep it simple.</think>\n\n"

    def script(request: Request) -> str:
        if request.sample_index == 1:
            return "<think>The protagonist could be a nurse or a teacher, I can't decide"  # cut at the limit
        return f"{thinking}{STORY}"

    store = Store(tmp_path)
    prompts = [p for p in build_prompts(EN) if p.meta["base_attribute"] == "income_level"][:3]
    run_plan(prompts, FakeBackend(script, name="gen"), store, GenerationSettings(max_tokens=50), samples=2,
             progress=False)
    frame = story_rows(store)
    whole = frame[frame["sample_index"] == 0]
    assert not whole["refusal"].any() and not whole["empty"].any()
    assert (whole["text"] == STORY).all()
    cut = frame[frame["sample_index"] == 1]
    assert cut["empty"].all() and not cut["refusal"].any()
    ex_prompts = extraction_prompts(frame)
    assert len(ex_prompts) == len(prompts)
    assert all(STORY in p.messages[0].content and "<think>" not in p.messages[0].content
               and "nurse" not in p.messages[0].content for p in ex_prompts)
