"""Training targets: the unbiased option of paper 001's Table 2, in every language and scale."""

from __future__ import annotations

import pytest

from biasatlas.probes.contact.probe import ContactConfig, build_prompts
from biasatlas.probes.debias.data import build_examples, render


@pytest.mark.parametrize("language", ["en", "de", "is"])
def test_targets_engage_on_every_scale(language: str) -> None:
    prompts = build_prompts(ContactConfig(language=language, scales=["all"], actions=["positive", "negative"]
                                          if language == "en" else None, limit=60, seed=2))
    examples = build_examples(prompts)
    for ex in examples:
        affirmative, negative = ex.prompt.options  # templates list the affirmative option first
        expected = affirmative if ex.prompt.meta["action"] == "positive" else negative
        assert ex.answer == expected, (ex.prompt.text, ex.answer)
    assert {ex.prompt.meta["action"] for ex in examples} == ({"positive", "negative"} if language == "en"
                                                             else {"positive"})


class _ChatTokenizer:
    """A tokenizer with a ChatML-like template (the one SmolLM2 uses), enough for render()."""

    chat_template = "chatml"
    eos_token = "<|endoftext|>"

    def apply_chat_template(self, messages: list[dict[str, str]], tokenize: bool = False,
                            add_generation_prompt: bool = False) -> str:
        text = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
        return text + ("<|im_start|>assistant\n" if add_generation_prompt else "")


def test_render_puts_the_answer_after_the_generation_prompt() -> None:
    ex = build_examples(build_prompts(ContactConfig(limit=1, seed=0)))[0]
    prompt_text, target = render(_ChatTokenizer(), ex)
    assert prompt_text.endswith("<|im_start|>assistant\n")
    assert ex.prompt.messages[0].content in prompt_text
    assert target == f"{ex.answer}<|im_end|>"
