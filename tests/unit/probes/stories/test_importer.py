"""Importing published StereoTales stories: every answer keyed by what makes it unique; templates kept apart."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

from biasatlas.cli.main import app
from biasatlas.probes.stories.importer import DEFAULT_TEMPLATE, import_stories
from biasatlas.probes.stories.profiles import load_profiles
from biasatlas.probes.stories.read import story_rows
from biasatlas.store import Store

AGES = ["child (0-12)", "adolescent (13-17)", "young adult (18-29)", "adult (30-44)", "middle-aged (45-64)",
        "senior (65+)"]


def _row(language: str, sample_id: str, output_id: str, model: str, age: str, template: str = "scenario_based",
         **extra: str) -> dict[str, str]:
    return {
        "sample_id": sample_id,
        "output_id": output_id,
        "generator_model": model,
        "language": language,
        "target_attribute": "income_level",
        "target_attribute_value": "a person with low income",
        "attribute_value_key": "low income",
        "scenario": "" if template != "scenario_based" else "applying for food stamps",
        "scenario_key": "" if template != "scenario_based" else "applying_for_food_stamps",
        "prompt_template": template,
        "story": f"{language} {model} {sample_id} {output_id} {template}: a story",
        "extracted_attributes_json": json.dumps({"age": age}),
        **extra,
    }


def _repeated_ids() -> pd.DataFrame:
    """The published export numbers sample_id afresh per language and output_id per story: the same
    ids recur in en, fr and nl (and for two generators), each row a different story."""
    rows = []
    age = iter(AGES * 10)
    for language in ("en", "fr", "du"):
        for model in ("gpt-x", "claude-y"):
            for sample_id in ("0", "1"):
                for output_id in ("0", "1"):
                    rows.append(_row(language, sample_id, output_id, model, next(age)))
    return pd.DataFrame(rows)


def test_ids_repeated_across_languages_are_distinct_stories_and_extractions(tmp_path: Path) -> None:
    table = _repeated_ids()
    path = tmp_path / "stories.csv"
    table.to_csv(path, index=False)
    counts = import_stories(path, tmp_path / "study")
    assert counts["stories_imported"] == len(table) == 24
    assert counts["extractions_imported"] == 24
    with Store(tmp_path / "study") as store:
        stories = story_rows(store)
        profiles, pc = load_profiles(store)
        extractions = store.frame(probe="stories-extract")
    assert len(stories) == 24 and (stories["status"] == "answered").all()
    # every stored story is the text of its own row, never another language's
    expected = {f"{r.language} {r.generator_model} {r.sample_id} {r.output_id} scenario_based: a story"
                for r in table.itertuples()}
    assert set(stories["text"]) == expected
    assert len(set(stories["key"])) == 24 and len(set(extractions["key"])) == 24
    assert len(profiles) == 24 and pc["profiles"] == 24
    # each story's profile is its own row's extraction
    by_text = dict(zip(stories["story_id"], stories["text"], strict=True))
    wanted = {row["story"]: row["extracted_attributes_json"] for row in table.to_dict("records")}
    from biasatlas.probes.stories.importer import ValueMapper

    mapper = ValueMapper()
    age_dim = mapper.dims["age"]
    for row in profiles.itertuples(index=False):
        published = json.loads(wanted[by_text[row.story_id]])["age"]
        assert row.age == mapper.value(age_dim, published)
    assert set(profiles["language"]) == {"en", "fr", "nl"}
    # importing again adds nothing
    again = import_stories(path, tmp_path / "study")
    assert again["stories_imported"] == 24
    with Store(tmp_path / "study") as store:
        assert len(story_rows(store)) == 24


def _templates() -> pd.DataFrame:
    rows = [_row("en", str(i), "0", "gpt-x", AGES[i % 6]) for i in range(4)]
    rows += [_row("en", str(i), "0", "gpt-x", AGES[(i + 1) % 6], template=t)
             for t in ("neutral", "negative", "positive") for i in range(4)]
    return pd.DataFrame(rows)


def test_only_scenario_based_stories_by_default(tmp_path: Path) -> None:
    path = tmp_path / "stories.csv"
    _templates().to_csv(path, index=False)
    counts = import_stories(path, tmp_path / "study")
    assert DEFAULT_TEMPLATE == "scenario_based"
    assert counts["stories_imported"] == 4
    assert counts["templates"] == {"scenario_based": 4}
    assert counts["skipped_rows"] == {"prompt template 'negative' (use --all-templates)": 4,
                                      "prompt template 'neutral' (use --all-templates)": 4,
                                      "prompt template 'positive' (use --all-templates)": 4}
    with Store(tmp_path / "study") as store:
        profiles, _ = load_profiles(store)
    assert set(profiles["template"]) == {"scenario_based"}


def test_all_templates_are_separate_slices(tmp_path: Path) -> None:
    path = tmp_path / "stories.csv"
    _templates().to_csv(path, index=False)
    counts = import_stories(path, tmp_path / "study", all_templates=True)
    assert counts["stories_imported"] == 16
    assert counts["templates"] == {"scenario_based": 4, "neutral": 4, "negative": 4, "positive": 4}
    with Store(tmp_path / "study") as store:
        profiles, _ = load_profiles(store)
    assert profiles.groupby("template").size().to_dict() == {"negative": 4, "neutral": 4, "positive": 4,
                                                             "scenario_based": 4}
    # a story of one template is never the same stored answer as another template's
    assert len(set(profiles["story_id"])) == 16


def test_all_templates_slices_stay_apart_in_the_associations(tmp_path: Path) -> None:
    from biasatlas.probes.stories.analysis import associations

    rows = []
    for template in ("scenario_based", "neutral"):
        for i in range(40):
            income = ("low income", "high income")[i % 2]
            # scenario_based: low income -> child; neutral: the opposite
            child = (i % 2 == 0) == (template == "scenario_based")
            row = _row("en", str(i), "0", "gpt-x", AGES[0] if child else AGES[4], template=template)
            row["attribute_value_key"] = income
            rows.append(row)
    path = tmp_path / "stories.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    import_stories(path, tmp_path / "study", all_templates=True)
    with Store(tmp_path / "study") as store:
        profiles, _ = load_profiles(store)
    result = associations(profiles)
    assert set(result.tables["template"]) == {"scenario_based", "neutral"}
    found = {(r.template, r.base_value, r.compared_value) for r in result.associations.itertuples()}
    assert ("scenario_based", "low", "child") in found and ("neutral", "high", "child") in found


def test_cli_import_all_templates(tmp_path: Path) -> None:
    path = tmp_path / "stories.csv"
    _templates().to_csv(path, index=False)
    result = CliRunner().invoke(app, ["stories", "import", "--stories", str(path), "--study", str(tmp_path / "s"),
                                      "--all-templates", "--no-progress"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["stories_imported"] == 16
