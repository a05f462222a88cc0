"""LoRA instruction tuning of a local model on debiasing examples (peft + transformers Trainer).

The loss covers only the answer tokens: the prompt is tokenised exactly as the local backend
sends it, and the answer as the backend scores an option, so what is trained is what is measured.
Checkpoints are written under ``<adapter dir>/checkpoints`` and a re-run with the same data and
settings resumes from the last one. The finished adapter (``adapter_config.json``,
``adapter_model.safetensors``) and ``training_config.json`` sit in the adapter directory, which
``--adapter DIR`` (or the model spec ``MODEL+lora:DIR``) applies for any probe.
"""

from __future__ import annotations

import json
import math
import shutil
import time
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from biasatlas.probes.debias.data import TrainingExample, render, write_jsonl
from biasatlas.records import stable_hash

CONFIG_FILE = "training_config.json"
CHECKPOINTS = "checkpoints"


class TrainError(RuntimeError):
    """Training cannot start or continue (e.g. a different run's checkpoints in the directory)."""


class TrainConfig(BaseModel):
    """LoRA and optimiser settings; everything that changes the adapter's weights."""

    model_config = ConfigDict(extra="forbid")
    epochs: float = Field(default=1.0, gt=0)
    learning_rate: float = Field(default=2e-4, gt=0)
    rank: int = Field(default=8, ge=1)
    alpha: int | None = None  # LoRA scaling numerator; default 2 × rank
    dropout: float = Field(default=0.05, ge=0, lt=1)
    batch_size: int = Field(default=8, ge=1)
    grad_accum: int = Field(default=1, ge=1)
    target_modules: list[str] = ["q_proj", "v_proj"]
    # LoRA on the top N transformer layers only (None: all). Backpropagation then stops at the
    # lowest adapted layer, which makes CPU training several times cheaper.
    top_layers: int | None = Field(default=None, ge=1)
    warmup_ratio: float = Field(default=0.0, ge=0, lt=1)
    max_length: int = Field(default=512, ge=16)
    save_steps: int = Field(default=50, ge=1)  # checkpoint every N optimiser steps
    max_eval_examples: int = Field(default=500, ge=0)  # validation loss on at most this many
    seed: int = 0

    def lora_alpha(self) -> int:
        return self.alpha if self.alpha is not None else 2 * self.rank


@dataclass
class TrainResult:
    """What a training run did and how fast."""

    adapter_dir: str
    examples: int
    epochs: float
    steps: int
    seconds: float
    examples_per_s: float
    train_loss: float | None
    eval_loss: float | None
    eval_examples: int
    resumed_from: str | None
    device: str
    trainable_parameters: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def base_model_name(location: Any) -> str:
    """The name recorded as an adapter's base (from a local ``ModelLocation``), which the local
    backend's adapter check accepts: a GGUF model's file stem, a directory's absolute path, a hub id.
    """
    return str(location.name if location.gguf_file else location.path)


def _encode(tokenizer: Any, example: TrainingExample, max_length: int) -> dict[str, list[int]]:
    prompt_text, target = render(tokenizer, example)
    prompt_ids = list(tokenizer(prompt_text, add_special_tokens=False)["input_ids"])
    # The answer is encoded on its own, as the local backend encodes an option it scores.
    answer_ids = tokenizer.encode(example.answer, add_special_tokens=False)
    rest = target[len(example.answer):]
    rest_ids = tokenizer.encode(rest, add_special_tokens=False) if rest else []
    target_ids = answer_ids + rest_ids
    keep = max_length - len(target_ids)
    if keep < 1:
        raise TrainError(f"max_length {max_length} leaves no room for the prompt of {example.prompt.id}")
    prompt_ids = prompt_ids[-keep:]  # very long prompts lose their start, never their answer
    return {
        "input_ids": prompt_ids + target_ids,
        "labels": [-100] * len(prompt_ids) + target_ids,
    }


def _total_steps(n: int, config: TrainConfig) -> int:
    per_epoch = math.ceil(math.ceil(n / config.batch_size) / config.grad_accum)
    return math.ceil(per_epoch * config.epochs)


class _Collator:
    """Left-pads a batch, so every row ends with its answer; padded positions carry no loss.

    ``keep`` is the longest answer of the batch: only the logits of the last ``keep`` + 1
    positions are computed (the vocabulary projection of every prompt token would be wasted).
    """

    def __init__(self, pad_id: int) -> None:
        self.pad_id = pad_id

    def __call__(self, rows: Sequence[dict[str, list[int]]]) -> dict[str, Any]:
        import torch

        width = max(len(r["input_ids"]) for r in rows)
        ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        labels = torch.full((len(rows), width), -100, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, r in enumerate(rows):
            n = len(r["input_ids"])
            ids[i, width - n :] = torch.tensor(r["input_ids"])
            labels[i, width - n :] = torch.tensor(r["labels"])
            mask[i, width - n :] = 1
        keep = max(sum(1 for x in r["labels"] if x != -100) for r in rows)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)  # left padding: the first real token is position 0
        return {"input_ids": ids, "labels": labels, "attention_mask": mask, "position_ids": positions,
                "keep": torch.tensor(keep)}


def _answer_loss(model: Any, inputs: dict[str, Any]) -> tuple[Any, Any]:
    """Mean cross-entropy over the answer tokens, from the logits of the batch's last positions."""
    import torch

    keep = int(inputs["keep"])
    out = model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"],
                position_ids=inputs["position_ids"], logits_to_keep=keep + 1, use_cache=False)
    logits = out.logits[:, :-1, :].float()  # position t predicts token t + 1
    labels = inputs["labels"][:, -keep:]
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1),
                                             ignore_index=-100)
    return loss, out


def run_fingerprint(config: TrainConfig, base: str, train: Sequence[TrainingExample]) -> str:
    """Identity of a training run: settings, base model and the exact examples, in order."""
    return stable_hash(
        {"config": config.model_dump(), "base": base, "examples": [(e.prompt.id, e.answer) for e in train]},
        length=16,
    )


def read_manifest(adapter_dir: Path) -> dict[str, Any] | None:
    path = adapter_dir / CONFIG_FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def is_finished(adapter_dir: Path, fingerprint: str) -> bool:
    """True when ``adapter_dir`` holds a finished adapter of exactly this run."""
    manifest = read_manifest(adapter_dir)
    return bool(
        manifest
        and manifest.get("status") == "finished"
        and manifest.get("fingerprint") == fingerprint
        and (adapter_dir / "adapter_config.json").exists()
    )


def lora_config(config: TrainConfig, model: Any) -> Any:
    """The peft LoraConfig of ``config`` for ``model`` (rank, alpha, dropout, modules, top layers)."""
    from peft import LoraConfig

    missing = [m for m in config.target_modules if not any(n.endswith(m) for n, _ in model.named_modules())]
    if missing:
        raise TrainError(f"the model has no module named {missing[0]!r} to put LoRA on")
    layers: dict[str, Any] = {}
    if config.top_layers is not None:
        total = int(model.config.num_hidden_layers)
        layers = {"layers_to_transform": list(range(max(0, total - config.top_layers), total)),
                  "layers_pattern": "layers"}
    return LoraConfig(
        r=config.rank, lora_alpha=config.lora_alpha(), lora_dropout=config.dropout,
        target_modules=list(config.target_modules), task_type="CAUSAL_LM", **layers,
    )


def wrap_for_training(model: Any, config: TrainConfig, init_adapter: Path | None) -> Any:
    """``model`` with trainable LoRA layers: fresh ones from ``config``, or the saved adapter in
    ``init_adapter`` loaded trainable (its own rank and modules), to go on training it."""
    from peft import PeftModel, get_peft_model

    if init_adapter is None:
        return get_peft_model(model, lora_config(config, model))
    if not (Path(init_adapter) / "adapter_config.json").is_file():
        raise TrainError(f"no adapter to continue in {init_adapter}")
    return PeftModel.from_pretrained(model, str(init_adapter), is_trainable=True)


def train_adapter(
    backend: Any,
    train: Sequence[TrainingExample],
    validation: Sequence[TrainingExample],
    config: TrainConfig,
    adapter_dir: Path,
    *,
    model_spec: str,
    extra: dict[str, Any] | None = None,
    progress: bool = False,
    init_adapter: Path | None = None,
) -> TrainResult:
    """Tune ``backend.model`` (a loaded LocalBackend) with LoRA and save the adapter in ``adapter_dir``.

    The backend's model is changed in place (LoRA layers are injected): do not use the backend
    for answers afterwards; open a fresh one with the adapter. ``init_adapter``: go on training that
    saved adapter (open ``backend`` without it) instead of fresh LoRA layers of ``config``'s shape.
    """
    import torch
    from transformers import Trainer, TrainingArguments
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    if not train:
        raise TrainError("no training examples")
    tokenizer, model = backend.tokenizer, backend.model
    base = base_model_name(backend.location)
    fingerprint = run_fingerprint(config, base, train)
    if init_adapter is not None:
        from biasatlas.backends.local.identity import adapter_digest

        fingerprint = stable_hash({"run": fingerprint, "init_adapter": adapter_digest(str(init_adapter))}, length=16)
    adapter_dir.mkdir(parents=True, exist_ok=True)
    checkpoints = adapter_dir / CHECKPOINTS
    previous = read_manifest(adapter_dir)
    resume = bool(
        previous and previous.get("fingerprint") == fingerprint and checkpoints.is_dir()
        and any(checkpoints.glob("checkpoint-*"))
    )
    if not resume and checkpoints.exists():
        shutil.rmtree(checkpoints)  # another run's checkpoints: they cannot be resumed by this one
    manifest: dict[str, Any] = {
        "status": "running",
        "fingerprint": fingerprint,
        "model_spec": model_spec,
        "base_model": base,
        "backend_id": backend.id,
        "config": config.model_dump(),
        "examples": {"train": len(train), "validation": len(validation)},
        **(extra or {}),
    }
    (adapter_dir / CONFIG_FILE).write_text(json.dumps(manifest, indent=2, default=str), encoding="utf-8")
    write_jsonl(train, adapter_dir / "train.jsonl", tokenizer)

    train_rows = [_encode(tokenizer, e, config.max_length) for e in train]
    eval_rows = [_encode(tokenizer, e, config.max_length) for e in validation[: config.max_eval_examples]]
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    if getattr(getattr(model, "hf_quantizer", None), "quantization_config", None) is not None and str(
        getattr(model.hf_quantizer.quantization_config, "quant_method", "")
    ).lower().endswith("gguf"):
        # A GGUF model is de-quantized to plain float tensors when loaded; only the flag remains,
        # and it makes the Trainer refuse to train. The weights LoRA sits on are ordinary tensors.
        model.hf_quantizer = None
        model.is_quantized = False
    model.train()
    peft_model = wrap_for_training(model, config, init_adapter)
    trainable = sum(p.numel() for p in peft_model.parameters() if p.requires_grad)
    on_gpu = backend.device.type == "cuda"
    args = TrainingArguments(
        output_dir=str(checkpoints),
        num_train_epochs=config.epochs,
        per_device_train_batch_size=config.batch_size,
        per_device_eval_batch_size=config.batch_size,
        gradient_accumulation_steps=config.grad_accum,
        learning_rate=config.learning_rate,
        lr_scheduler_type="linear",
        warmup_steps=int(config.warmup_ratio * _total_steps(len(train_rows), config)),
        logging_steps=max(1, min(10, math.ceil(len(train_rows) / config.batch_size))),
        save_strategy="steps",
        save_steps=config.save_steps,
        save_total_limit=1,
        report_to=[],
        seed=config.seed,
        data_seed=config.seed,
        use_cpu=not on_gpu,
        bf16=on_gpu and bool(torch.cuda.is_bf16_supported()),
        disable_tqdm=not progress,
        remove_unused_columns=False,
        dataloader_num_workers=0,
        log_level="error",
        prediction_loss_only=True,
    )
    class _AnswerTrainer(Trainer):
        def compute_loss(self, model: Any, inputs: Any, return_outputs: bool = False,
                         num_items_in_batch: Any = None) -> Any:
            loss, out = _answer_loss(model, inputs)
            return (loss, out) if return_outputs else loss

    trainer = _AnswerTrainer(model=peft_model, args=args, train_dataset=train_rows,
                             data_collator=_Collator(int(tokenizer.pad_token_id)))
    if not progress:
        from transformers import PrinterCallback

        trainer.remove_callback(PrinterCallback)  # no loss dicts on stdout
    started = time.perf_counter()
    with warnings.catch_warnings():
        # peft looks for the base model's config.json (on disk, then on the Hub) at every checkpoint
        # to see whether embeddings changed; LoRA here never touches them, and a GGUF has none.
        warnings.filterwarnings("ignore", message=r"(Could not find a config file|Unable to fetch remote)")
        output = trainer.train(resume_from_checkpoint=True if resume else None)
    seconds = time.perf_counter() - started
    eval_loss = None
    if eval_rows:
        eval_loss = float(trainer.evaluate(eval_dataset=eval_rows)["eval_loss"])  # type: ignore[arg-type]
    peft_model.peft_config["default"].base_model_name_or_path = base
    peft_model.save_pretrained(str(adapter_dir), save_embedding_layers=False)
    shutil.rmtree(checkpoints, ignore_errors=True)  # the final adapter replaces them
    peft_model.eval()
    result = TrainResult(
        adapter_dir=str(adapter_dir),
        examples=len(train_rows),
        epochs=config.epochs,
        steps=int(output.global_step),
        seconds=round(seconds, 2),
        examples_per_s=round(len(train_rows) * config.epochs / seconds, 3) if seconds > 0 else float("nan"),
        train_loss=float(output.training_loss) if output.training_loss is not None else None,
        eval_loss=eval_loss,
        eval_examples=len(eval_rows),
        resumed_from="last checkpoint" if resume else None,
        device=str(backend.device),
        trainable_parameters=int(trainable),
    )
    history = [
        {k: v for k, v in row.items() if k in ("step", "epoch", "loss", "learning_rate")}
        for row in trainer.state.log_history if "loss" in row
    ]
    manifest.update(status="finished", result=result.as_dict(), loss_history=history)
    (adapter_dir / CONFIG_FILE).write_text(json.dumps(manifest, indent=2, default=str), encoding="utf-8")
    return result
