"""``design="paper"``: the contact papers' designs, counted on the plan (no model is asked)."""

from __future__ import annotations

import pytest

from biasatlas.probes.base import ProbeConfigError
from biasatlas.probes.contact.design import IKAE_DE_INSTRUCTION, LLAMA2_SYSTEM_PROMPT, dress, plan_block
from biasatlas.probes.contact.probe import PROBE
from biasatlas.records import Prompt


def _block(config: object, prompts: list[Prompt]) -> dict[str, object]:
    """The plan's design entry (without the rest of the plan summary: its power figures take seconds)."""
    settings = PROBE.settings(config)  # type: ignore[arg-type]
    return plan_block(config, prompts, 1, settings.mode, settings.max_tokens)


def test_ikae_design_counts_the_papers_prompts_and_asks_as_it_did() -> None:
    config = PROBE.config(design="paper", languages=["de", "is"], limit=30)
    prompts = PROBE.plan(config)
    block = _block(config, prompts)
    assert block["paper"] == "Ikae et al." and block["asked_prompts"] == 30 and block["limited"] is True
    assert block["prompts"] == {"de nationality": {"ours": 1800, "paper": 1827},
                                "de religion": {"ours": 630, "paper": 630},
                                "is nationality": {"ours": 900, "paper": 900},
                                "is religion": {"ours": 540, "paper": 540}}
    assert any("1,827" in line for line in block["not_as_in_the_paper"])  # the difference is stated
    german = [p for p in prompts if p.language == "de"]
    assert german and all(p.messages[-1].content.endswith("\n" + IKAE_DE_INSTRUCTION) for p in german)
    assert all(len(p.messages) == 1 for p in prompts)  # the paper states no system prompt
    assert {p.meta["action"] for p in prompts} == {"positive"} and {p.meta["scale"] for p in prompts} == {"certainty"}
    assert {p.meta["axis"] for p in prompts} == {"nationality", "religion"}
    settings = PROBE.settings(config)
    assert (settings.mode, settings.temperature, settings.max_tokens) == ("generate", 0.3, 10)
    assert block["requests"] == 30 and block["completion_tokens_at_most"] == 300


def test_raj_design_states_its_sets_against_the_papers_108000() -> None:
    config = PROBE.config(design="paper")
    block = _block(config, [])
    assert block["paper"] == "Raj et al. 2024" and block["limited"] is False
    assert block["prompt_sets"]["ours"] == 111_420 and block["prompt_sets"]["paper"] == 108_000
    assert block["prompt_sets"]["per_scale"] == {
        s: {"ours": 37_140, "paper": 36_000} for s in ("certainty", "frequency", "likelihood")}
    assert "system prompt: the LLaMA-2 chat default" in block["set"]
    settings = PROBE.settings(config)
    assert (settings.mode, settings.temperature, settings.max_tokens) == ("generate", 0.0, 10)


def test_dress_puts_the_llama2_system_prompt_first_in_english_only() -> None:
    english = PROBE.plan(PROBE.config(languages=["en"], axes=["nonce"], limit=3))
    dressed = dress(english)
    assert [m.role for m in dressed[0].messages] == ["system", "user"]
    assert dressed[0].messages[0].content == LLAMA2_SYSTEM_PROMPT
    assert dressed[0].messages[1] == english[0].messages[0]  # the question itself unchanged
    assert dressed[0].meta["set_id"] == english[0].meta["set_id"] and dressed[0].id != english[0].id


def test_without_the_design_nothing_changes() -> None:
    config = PROBE.config(languages=["de"], axes=["religion"], limit=3)
    prompts = PROBE.plan(config)
    assert "design" not in prompts[0].meta and not prompts[0].messages[-1].content.endswith(IKAE_DE_INSTRUCTION)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"scales": ["certainty"]}, "--scale certainty differs from Raj et al. 2024's design"),
        ({"languages": ["de"], "temperature": 0.0}, "--temperature 0.0 differs from Ikae et al.'s design"),
        ({"languages": ["en", "de"]}, "run --lang en and --lang de,is as two runs"),
        ({"languages": ["fr"]}, "no paper fixes a design for --lang fr"),
        ({"scenarios": ["sports"]}, "--scenario keeps part of the design"),
    ],
)
def test_a_value_the_paper_fixes_otherwise_is_refused(values: dict[str, object], message: str) -> None:
    with pytest.raises(ProbeConfigError, match="--design paper: ") as exc:
        PROBE.config(design="paper", **values)
    assert message in str(exc.value)


def test_a_value_equal_to_the_papers_is_accepted() -> None:
    config = PROBE.config(design="paper", languages=["de"], scales=["certainty"], temperature=0.3, limit=3)
    assert PROBE.settings(config).temperature == 0.3
