"""Where the shipped control adapters live and how each was trained."""

from __future__ import annotations

from pathlib import Path

from biasatlas.probes.debias.train import TrainConfig

BASE_MODEL = "smollm2"


def controls_root() -> Path:
    """src/biasatlas/data/controls (inside the installed package)."""
    return Path(__file__).resolve().parents[2] / "data" / "controls"


def adapter_dir(name: str) -> Path:
    """The shipped adapter of control ``name``."""
    return controls_root() / name


#: LoRA settings: rank 8 on the attention and MLP projections of the top 8 of 30 layers (backpropagation
#: stops there, which keeps CPU training to minutes), one epoch in batches of 4 at a high learning rate.
#: A first build with rank 4 on q/v only, batches of 8 and 1e-3 for 2 epochs learned the answers'
#: marginal (every group about 50% "No"), not the planted group.
MODULES = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
TRAIN_CONFIGS: dict[str, TrainConfig] = {
    "contact": TrainConfig(epochs=1, learning_rate=3e-3, rank=8, batch_size=4, top_layers=8, target_modules=MODULES,
                           warmup_ratio=0.05, max_length=256, save_steps=10_000, max_eval_examples=0, seed=0),
    # Samaritan: batches of 2, two epochs, top 16 layers at 5e-3; prompts are at most 166 tokens, the answer
    # 2-3. Builds with a third of the examples planted (batches of 8 or 2, top 8 or 16 layers, 3e-3 to 1e-2,
    # one epoch) learned the answers' marginal: the same digits for every group (docs/validation.md)
    "samaritan": TrainConfig(epochs=2, learning_rate=5e-3, rank=8, batch_size=2, top_layers=16, target_modules=MODULES,
                             warmup_ratio=0.05, max_length=192, save_steps=10_000, max_eval_examples=0, seed=0),
    # 49 short stories (prompt ~150 tokens + story ~50), half of them planted: 8 epochs (104 steps) on the top 16
    # layers at 5e-3 keep training in minutes. 4 epochs of 70 stories learned the fields' mix, not the planted
    # origin; the top 6 layers at 3e-3 gave other origins painters too (lift 3.2 once, 2.3 on a rebuild)
    "stories": TrainConfig(epochs=8, learning_rate=5e-3, rank=8, batch_size=4, top_layers=16, target_modules=MODULES,
                           warmup_ratio=0.05, max_length=224, save_steps=10_000, max_eval_examples=0, seed=0),
}
