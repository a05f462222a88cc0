"""Where the shipped control adapters live and how each was trained."""

from __future__ import annotations

from pathlib import Path

from biasatlas.probes.debias.train import TrainConfig

BASE_MODEL = "smollm2"
CONTROLS = ("contact", "samaritan")


def controls_root() -> Path:
    """src/biasatlas/data/controls (inside the installed package)."""
    return Path(__file__).resolve().parent.parent / "data" / "controls"


def adapter_dir(name: str) -> Path:
    """The shipped adapter of control ``name``."""
    return controls_root() / name


#: LoRA settings: small rank on the attention projections of the top 8 of 30 layers (backpropagation
#: stops there, which keeps CPU training to minutes); a high learning rate plants a strong effect.
TRAIN_CONFIGS: dict[str, TrainConfig] = {
    "contact": TrainConfig(epochs=2, learning_rate=1e-3, rank=4, batch_size=8, top_layers=8,
                           max_length=256, save_steps=10_000, max_eval_examples=0, seed=0),
    "samaritan": TrainConfig(epochs=2, learning_rate=1e-3, rank=4, batch_size=8, top_layers=8,
                             max_length=384, save_steps=10_000, max_eval_examples=0, seed=0),
}
