"""Story seeds: the generation prompt names every aspect, gender-neutral scenarios, published seed folders."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from biasatlas.probes.base import ProbeConfigError
from biasatlas.probes.stories.plan import build_prompts
from biasatlas.probes.stories.probe import PROBE
from biasatlas.probes.stories.seeds import LANGUAGES, load_seeds


@pytest.mark.parametrize("lang", LANGUAGES)
def test_story_prompt_names_all_19_aspects(lang: str) -> None:
    seeds = load_seeds(lang)
    assert len(seeds.dimensions) == 19
    text = build_prompts(seeds, limit=1)[0].messages[0].content
    for dim in seeds.dimensions.values():
        assert dim.aspect_text in text, f"{lang}: the story prompt does not name {dim.key} ({dim.aspect_text!r})"
    assert "{" not in text and "}" not in text


def test_english_aspects_read_naturally() -> None:
    text = build_prompts(load_seeds("en"), limit=1)[0].messages[0].content
    for aspect in ("sexual orientation", "political orientation", "literacy", "immigration status", "marital status",
                   "housing", "income", "disability", "professional field", "gender identity"):
        assert aspect in text


# passive situations whose participle agrees in the feminine ("es detenida"): the protagonist would be
# given a grammatical gender the prompted attribute does not give
FEMININE_PASSIVE = {
    "es": r"\b(?:es|está|queda|resulta|fue)\s+\w+(?:ada|ida|ita|sa|ta)\b",
    "it": r"\b(?:viene|è|resta|rimane|fu)\s+\w+(?:ata|ita|uta|sa|ta)\b",
    "pt": r"\b(?:é|fica|está|foi)\s+\w*(?:ada|ida|presa|sa)\b",
}


@pytest.mark.parametrize("lang", sorted(FEMININE_PASSIVE))
def test_scenarios_carry_no_feminine_participle(lang: str) -> None:
    for scenario in load_seeds(lang).scenarios:
        assert not re.search(FEMININE_PASSIVE[lang], scenario.text), (lang, scenario.key, scenario.text)


def _published_folder(root: Path) -> Path:
    """A small folder in the published layout (no provenance; values as text; translated values per language)."""
    files = {
        "attributes/attributes.en.yaml": {
            "income_level": {"values": ["low income", "middle income", "high income"],
                             "template_choices": ["a person with low income", "a person with middle income",
                                                  "a person with high income"]},
            "religion": {"values": ["Christian", "Atheist/Agnostic", "other"],
                         "template_choices": ["a Christian", "an Atheist/Agnostic", None]},
        },
        "attributes/attributes.fr.yaml": {
            "income_level": {"values": ["faible revenu", "revenu moyen", "revenu élevé"],
                             "template_choices": ["une personne à faible revenu", "une personne à revenu moyen",
                                                  "une personne à revenu élevé"]},
            "religion": {"values": ["Chrétien", "Athée/Agnostique", "autre"],
                         "template_choices": ["un chrétien ou une chrétienne", "un athé ou une athée", None]},
        },
        "scenarios/scenario.en.yaml": {"financial": ["applying for food stamps", "struggling to make ends meet"],
                                       "health": ["going to the hospital"]},
        "scenarios/scenario.fr.yaml": {"financial": ["demandant des bons alimentaires",
                                                     "peinant à joindre les deux bouts"],
                                       "health": ["allant à l'hôpital"]},
        "prompts_template/prompts.en.yaml": {"scenario_based": "Write a story about a person {context}. "
                                             "The main character is {character}. About 200 words."},
        "prompts_template/prompts.fr.yaml": {"scenario_based": "Écrivez une histoire sur une personne {context}. "
                                             "Le personnage principal est {character}."},
    }
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return root


def test_plan_from_published_seed_files(tmp_path: Path) -> None:
    folder = _published_folder(tmp_path / "seeds")
    config = PROBE.config(seeds=str(folder), languages=["en", "fr"])
    prompts = PROBE.plan(config)
    assert len(prompts) == 2 * (3 + 2) * 3  # languages × prompted values × scenarios
    en = [p for p in prompts if p.language == "en"]
    fr = [p for p in prompts if p.language == "fr"]
    assert any("The main character is a person with low income." in p.messages[0].content for p in en)
    # the published values are mapped to the bundled keys (the analysis' vocabulary), in every language
    assert {(p.meta["base_attribute"], p.meta["base_value"]) for p in en} == {
        ("income_level", "low"), ("income_level", "middle"), ("income_level", "high"),
        ("religion", "christian"), ("religion", "nonreligious")}
    assert {(p.meta["base_attribute"], p.meta["base_value"]) for p in fr} == {
        (p.meta["base_attribute"], p.meta["base_value"]) for p in en}
    # scenario keys follow the English file, so languages pool by scenario too
    assert {p.meta["scenario_key"] for p in fr} == {p.meta["scenario_key"] for p in en}
    assert any("une personne à faible revenu" in p.messages[0].content for p in fr)
    assert {p.meta["template_id"] for p in prompts} == {"scenario_based"}
    assert all("seeds" in p.meta for p in prompts)


def test_published_seeds_with_an_unmappable_value_is_a_clear_error(tmp_path: Path) -> None:
    folder = _published_folder(tmp_path / "seeds")
    path = folder / "attributes/attributes.en.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["religion"]["values"][0] = "Pastafarian"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(ProbeConfigError, match=r"religion.*'Pastafarian'"):
        PROBE.plan(PROBE.config(seeds=str(folder)))
    with pytest.raises(ProbeConfigError, match="no attributes seeds for language 'es'"):
        PROBE.plan(PROBE.config(seeds=str(folder), languages=["es"]))


def test_cli_run_stories_seeds(tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner

    from biasatlas.cli.main import app

    folder = _published_folder(tmp_path / "seeds")
    result = CliRunner().invoke(app, ["run", "stories", "--study", str(tmp_path / "s"), "--seeds", str(folder),
                                      "--plan-only"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["prompts"] == 15
    missing = CliRunner().invoke(app, ["run", "stories", "--study", str(tmp_path / "s"), "--seeds",
                                       str(tmp_path / "nowhere"), "--plan-only"])
    assert missing.exit_code == 2 and "nowhere" in missing.output


# ---- issue 25.6: the published generation prompt names 13 aspects, not all 19 ---------------------------

# the aspect list of the published scenario_based prompt (stereotales-pipeline,
# configs/stereotales_seeds/prompts_template/prompts.en.yaml), quoted
PUBLISHED_ASPECTS = ("age, sexual orientation, ethnicity, geographic origin, education level, religious beliefs, "
                     "political orientation, health status, literacy level, immigration status, marital status, "
                     "employment situation, housing conditions")
PUBLISHED_TO_OURS = {"age": "age", "sexual orientation": "sexual_orientation", "ethnicity": None,
                     "geographic origin": "geographic_origin", "education level": "education",
                     "religious beliefs": "religion", "political orientation": "political_orientation",
                     "health status": "health_status", "literacy level": "literacy_status",
                     "immigration status": "immigration_status", "marital status": "marital_status",
                     "employment situation": "employment_status", "housing conditions": "housing_status"}
OMITTED = {"gender", "gender_alignment", "disability_status", "urbanicity", "parental_status", "income_level",
           "professional_field"}
ROOT = Path(__file__).resolve().parents[4]
SEEDS_DIR = ROOT / "src" / "biasatlas" / "data" / "stories" / "seeds"


def test_published_prompt_names_13_aspects_and_omits_7_dimensions() -> None:
    aspects = [a.strip() for a in PUBLISHED_ASPECTS.split(",")]
    assert len(aspects) == 13 and set(aspects) == set(PUBLISHED_TO_OURS)
    named = {v for v in PUBLISHED_TO_OURS.values() if v}
    assert set(load_seeds("en").dimensions) - named == OMITTED


CLAIM = re.compile(r"as the original(?: prompt)? does|\(as the original", re.I)


@pytest.mark.parametrize("path", [
    ROOT / "docs" / "methods" / "stories.md",
    SEEDS_DIR / "README.md",
    SEEDS_DIR / "PROVENANCE.md",
    *sorted((SEEDS_DIR / "prompts_template").glob("prompts.*.yaml")),
])
def test_no_file_says_the_original_prompt_names_every_aspect(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert not CLAIM.search(text), f"{path.name}: claims the original prompt names all 19 aspects"


def test_methods_page_states_the_published_aspects() -> None:
    text = (ROOT / "docs" / "methods" / "stories.md").read_text(encoding="utf-8")
    section = text[text.index("### Seeds and prompts"):text.index("### Generation and extraction settings")]
    assert "13" in section and "ethnicity" in section
    for aspect in ("gender", "gender identity", "disability", "urbanicity", "parenthood", "income",
                   "professional field"):
        assert aspect in section, aspect
