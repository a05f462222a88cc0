"""Training examples of Social Contact Debiasing: each contact prompt with its unbiased answer.

Paper 001, Table 2: engaging is unbiased, so the target is the affirmative option for a positive
action and the negative option for a negative action, under every contact framing and scale.
The answer is found by scoring each option with the probe's own rules, so it follows the
prompt's language and scale (Yes/No, Likely/Unlikely, Ja/Nein, Já/Nei, ...).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biasatlas.probes.contact.probe import decide, parse_row
from biasatlas.records import Prompt


class TrainingDataError(ValueError):
    """A prompt has no single unbiased option (malformed template data)."""


@dataclass(frozen=True)
class TrainingExample:
    """A prompt and the answer the model is tuned to give."""

    prompt: Prompt
    answer: str

    def messages(self) -> list[dict[str, str]]:
        """The chat: the prompt's messages, then the unbiased answer as the assistant's turn."""
        return [*(m.model_dump() for m in self.prompt.messages), {"role": "assistant", "content": self.answer}]


def unbiased_answer(prompt: Prompt) -> str:
    """The option of ``prompt`` that Table 2 scores as unbiased for its action."""
    scale, action = prompt.meta["scale"], prompt.meta["action"]
    good = [
        o for o in prompt.options
        if decide(action, parse_row("generate", scale, prompt.language, o, None, prompt.options).value)
        == "unbiased"
    ]
    if len(good) != 1:
        raise TrainingDataError(
            f"prompt {prompt.id} ({scale}, {action} action, options {list(prompt.options)}) has "
            f"{len(good)} unbiased options; expected exactly one"
        )
    return good[0]


def build_examples(prompts: Sequence[Prompt]) -> list[TrainingExample]:
    """One training example per prompt."""
    return [TrainingExample(p, unbiased_answer(p)) for p in prompts]


def render(tokenizer: Any, example: TrainingExample) -> tuple[str, str]:
    """(prompt text, target text) in the model's chat format.

    The prompt text is exactly what the local backend sends (chat template with the generation
    prompt), so training and evaluation see the same tokens; the target is the answer followed by
    whatever the template closes an assistant turn with (e.g. ``<|im_end|>``), or EOS.
    """
    user = [m.model_dump() for m in example.prompt.messages]
    if not getattr(tokenizer, "chat_template", None):
        eos = tokenizer.eos_token or ""
        return "\n".join(m["content"] for m in user) + "\n", example.answer + eos
    prompt_text = str(tokenizer.apply_chat_template(user, tokenize=False, add_generation_prompt=True))
    full = str(tokenizer.apply_chat_template(example.messages(), tokenize=False))
    head = prompt_text + example.answer
    suffix = full[len(head):] if full.startswith(head) else (tokenizer.eos_token or "")
    return prompt_text, example.answer + suffix.rstrip("\n")


def write_jsonl(examples: Sequence[TrainingExample], path: Path, tokenizer: Any = None) -> Path:
    """The training data as used, one chat per line (with the rendered text when a tokenizer is given)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for ex in examples:
            row: dict[str, Any] = {
                "prompt_id": ex.prompt.id,
                "set_id": ex.prompt.meta.get("set_id"),
                "language": ex.prompt.language,
                "messages": ex.messages(),
                "meta": {k: ex.prompt.meta.get(k) for k in ("scale", "contact", "action", "scenario",
                                                             "principle", "axis", "template_set")},
            }
            if tokenizer is not None:
                prompt_text, target = render(tokenizer, ex)
                row["text"] = prompt_text + target
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path
