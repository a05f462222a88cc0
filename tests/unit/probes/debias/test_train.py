"""The training loss: left padding, positions and last-logits-only give the model's own answer loss."""

from __future__ import annotations

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from biasatlas.probes.debias.train import TrainConfig, _answer_loss, _Collator, _total_steps


@pytest.fixture(scope="module")
def tiny() -> LlamaForCausalLM:
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    return LlamaForCausalLM(config).eval()


def _rows() -> list[dict[str, list[int]]]:
    # prompts of different lengths, answers of one and two tokens plus an end token
    return [
        {"input_ids": [5, 6, 7, 8, 9, 10, 11, 40, 2], "labels": [-100] * 7 + [40, 2]},
        {"input_ids": [5, 6, 12, 41, 42, 2], "labels": [-100] * 3 + [41, 42, 2]},
        {"input_ids": [5, 6, 7, 13, 14, 43, 2], "labels": [-100] * 5 + [43, 2]},
    ]


def test_answer_loss_equals_the_models_own_loss_per_row(tiny: LlamaForCausalLM) -> None:
    rows = _rows()
    batch = _Collator(pad_id=0)(rows)
    assert int(batch["keep"]) == 3
    assert batch["input_ids"][1, :3].tolist() == [0, 0, 0]  # left padding
    with torch.no_grad():
        loss, _ = _answer_loss(tiny, batch)
        # reference: each row alone, no padding, the model's own shifted loss; weighted by tokens
        total, tokens = 0.0, 0
        for r in rows:
            ids = torch.tensor([r["input_ids"]])
            out = tiny(input_ids=ids, labels=torch.tensor([r["labels"]]))
            n = sum(1 for x in r["labels"] if x != -100) - 0
            total += float(out.loss) * n
            tokens += n
    assert float(loss) == pytest.approx(total / tokens, rel=1e-4)


def test_steps_count_accumulation_and_epochs() -> None:
    assert _total_steps(33, TrainConfig(batch_size=8, epochs=3)) == 15
    assert _total_steps(33, TrainConfig(batch_size=8, grad_accum=2, epochs=1)) == 3
    assert TrainConfig(rank=4).lora_alpha() == 8


def test_training_can_continue_a_saved_adapter(tiny: LlamaForCausalLM, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Debiasing a LoRA-adapted model (the positive control) goes on training that adapter's own weights."""
    from peft import get_peft_model

    from biasatlas.probes.debias.train import lora_config, wrap_for_training

    config = TrainConfig(rank=2, target_modules=["q_proj", "v_proj"])
    saved = get_peft_model(tiny, lora_config(config, tiny))
    with torch.no_grad():
        for name, p in saved.named_parameters():
            if "lora_B" in name:
                p.fill_(0.5)  # a non-zero delta, unlike a fresh LoRA's B = 0
    saved.save_pretrained(str(tmp_path / "control"))
    base = saved.unload()  # the bare model again

    fresh = wrap_for_training(base, config, None)
    assert all(float(p.abs().sum()) == 0 for n, p in fresh.named_parameters() if "lora_B" in n)
    fresh_base = fresh.unload()
    resumed = wrap_for_training(fresh_base, TrainConfig(rank=8), tmp_path / "control")
    lora_b = [p for n, p in resumed.named_parameters() if "lora_B" in n]
    assert lora_b and all(p.requires_grad for p in lora_b)
    assert all(torch.allclose(p, torch.full_like(p, 0.5)) for p in lora_b)  # the saved weights, rank 2
    assert lora_b[0].shape[1] == 2
