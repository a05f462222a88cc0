"""The judge's prompt in every language of the language packs: a data file each, with its provenance, used for
the answers of that language."""

from __future__ import annotations

import pytest

from biasatlas.readers.labels import judge_prompt, label_set, prompt_provenance, words

LANGUAGES = ("en", "de", "is", "fr", "es", "it", "pt", "hi", "id", "vi", "zh", "ko")
NEW = ("fr", "es", "it", "pt", "hi", "id", "vi", "zh", "ko")


def test_the_languages_are_those_of_the_contact_packs() -> None:
    from biasatlas.probes.contact.data import languages

    assert set(languages()) == set(LANGUAGES)


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_language_has_its_own_prompt(language: str) -> None:
    import biasatlas

    refusal, unclear, instruction = words(language)
    if language != "en":
        assert instruction != words("en")[2] and (refusal, unclear) != ("refusal", "unclear")
    assert "machine-drafted, not validated" in prompt_provenance(language) if language in NEW else True
    # the answer's language picks the prompt; its label words never start like the question's options
    prompt = next(p for p in biasatlas.plan("contact", languages=[language], axes=["religion"]))
    labels = label_set("contact", language, prompt.options)
    for option in prompt.options[:2]:
        assert not refusal.casefold().startswith(option.casefold().split()[0])
        assert not unclear.casefold().startswith(option.casefold().split()[0])
    judged = judge_prompt("contact", language, prompt.messages[-1].content, "Some answer.", labels, {})
    assert prompt.messages[-1].content in judged.text and "Some answer." in judged.text
    assert refusal in judged.text and unclear in judged.text and judged.language == language
    rating = judge_prompt("samaritan", language, "Q", "A", label_set("samaritan", language), {})
    assert refusal in rating.text and "{" not in rating.text


def test_a_malformed_prompt_file_is_named(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    from pathlib import Path

    from biasatlas.datafiles import DataFileError
    from biasatlas.readers import labels

    folder = Path(str(tmp_path))
    (folder / "xx.yaml").write_text("language: xx\nprovenance: test\nrefusal: r\nunclear: u\n"
                                    "instruction: 'no slots'\n", encoding="utf-8")
    monkeypatch.setattr(labels, "PROMPTS_DIR", folder)
    labels.prompts.cache_clear()
    try:
        with pytest.raises(DataFileError, match=r"xx\.yaml.*\{question\}"):
            labels.words("xx")
    finally:
        labels.prompts.cache_clear()
