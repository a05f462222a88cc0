"""The configuration of a debiasing run: setting, evaluation part, LoRA training and quality checks."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from biasatlas.probes.base import PaperDesign, ProbeConfig
from biasatlas.probes.debias.splits import PARTS, setting_names
from biasatlas.probes.debias.train import TrainConfig

NAME = "debias"
TITLE = "Social Contact Debiasing (before / after LoRA tuning)"
DEFAULT_MAX_TOKENS = 10  # contact answers are one word (as the contact probe)
_TRAIN = TrainConfig()


class DebiasConfig(ProbeConfig):
    """Social Contact Debiasing: which setting, what is evaluated, how the adapter is trained.

    ``limit`` counts evaluation prompts (whole contact prompt sets); the training and validation
    parts keep the default 2 : 1 : 4 proportion to the test part. One language per run (the
    adapter is trained on it). ``seed`` draws the split and seeds training. The LoRA alpha is
    ``lora_alpha`` (None: 2 × rank); ``train_batch_size`` is the training batch (the backend's
    ``batch_size`` is that of evaluation).
    """

    setting: str = "mixed"
    eval_on: str = "test"
    epochs: float = Field(default=_TRAIN.epochs, gt=0)
    learning_rate: float = Field(default=_TRAIN.learning_rate, gt=0)
    rank: int = Field(default=_TRAIN.rank, ge=1)
    lora_alpha: int | None = Field(default=None, ge=1)
    train_batch_size: int = Field(default=_TRAIN.batch_size, ge=1)
    grad_accum: int = Field(default=_TRAIN.grad_accum, ge=1)
    target_modules: list[str] = Field(default_factory=lambda: list(_TRAIN.target_modules))
    top_layers: int | None = Field(default=None, ge=1)
    retrain: bool = False
    qa: bool = True
    qa_limit: int | None = Field(default=None, ge=1)
    bbq: list[str] | None = None
    bbq_limit: int | None = Field(default=None, ge=1)
    #: ``paper``: paper 001's design (:mod:`biasatlas.probes.debias.design`: sizes, system prompt, decoding)
    design: PaperDesign = None

    @field_validator("setting")
    @classmethod
    def _setting(cls, value: str) -> str:
        if value not in setting_names():
            raise ValueError(f"unknown setting {value!r}; valid: {', '.join(setting_names())}")
        return value

    @field_validator("eval_on")
    @classmethod
    def _eval_on(cls, value: str) -> str:
        if value not in PARTS:
            raise ValueError(f"unknown --eval-on {value!r}; valid: {', '.join(PARTS)}")
        return value

    @field_validator("languages")
    @classmethod
    def _one_language(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and len(value) != 1:
            raise ValueError("debiasing trains and evaluates one language per run; give one --lang")
        return value

    @field_validator("limit")
    @classmethod
    def _limit(cls, value: int | None) -> int | None:
        if value is not None and value < 3:
            raise ValueError("the evaluation needs at least one prompt set (3 prompts)")
        return value

    @field_validator("target_modules", mode="before")
    @classmethod
    def _modules(cls, value: Any) -> list[str]:
        parts = value.split(",") if isinstance(value, str) else list(value)
        names = [str(m).strip() for m in parts if str(m).strip()]
        if not names:
            raise ValueError("name at least one module for LoRA (e.g. q_proj,v_proj)")
        return names

    @property
    def language(self) -> str:
        return (self.languages or ["en"])[0]

    def train_config(self) -> TrainConfig:
        """The LoRA and optimiser settings of this run (seeded by ``seed``)."""
        return TrainConfig(
            epochs=self.epochs, learning_rate=self.learning_rate, rank=self.rank, alpha=self.lora_alpha,
            batch_size=self.train_batch_size, grad_accum=self.grad_accum, target_modules=self.target_modules,
            top_layers=self.top_layers, seed=self.seed,
        )
