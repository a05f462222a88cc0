"""Checks made before any work starts: can this model be tuned, does this adapter fit it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from biasatlas.backends.base import BackendError
from biasatlas.probes.debias.train import CONFIG_FILE, base_model_name


class AdapterError(ValueError):
    """A model cannot be tuned here, or an adapter was trained on another base model."""


def tunable_location(spec: str) -> Any:
    """The local model location of ``spec``; an error when the spec is not a local model.

    Debiasing trains LoRA weights, so it needs the weights in this process: HTTP models
    (``openai:...``) and the scripted test backend cannot be tuned.
    """
    from biasatlas.backends.local import locate
    from biasatlas.backends.registry import ALIASES, BACKENDS

    kind, _, rest = spec.partition(":")
    if "+lora:" in spec:
        raise AdapterError(f"give the base model ({spec.split('+lora:')[0]}) and the adapter with --adapter")
    is_local = spec in ALIASES or kind in {"hf", "local"} or (not rest and kind not in BACKENDS) or spec.endswith(
        ".gguf")
    if not is_local:
        raise AdapterError(
            f"model {spec!r} cannot be fine-tuned: debiasing trains LoRA weights and needs a local "
            "transformers model ('smollm2', a Hugging Face id or directory, or a .gguf file), not an "
            f"{kind or 'HTTP'} backend"
        )
    target = rest if kind in {"hf", "local"} else spec
    try:
        return locate(target)
    except BackendError as exc:
        raise AdapterError(str(exc)) from exc


def adapter_base(adapter_dir: Path) -> str:
    """The base model an adapter directory says it was trained on."""
    config = adapter_dir / "adapter_config.json"
    if not config.is_file():
        raise AdapterError(f"{adapter_dir} is not a LoRA adapter (no adapter_config.json)")
    try:
        return str(json.loads(config.read_text(encoding="utf-8")).get("base_model_name_or_path") or "")
    except json.JSONDecodeError as exc:
        raise AdapterError(f"{config}: not JSON ({exc.msg})") from exc


def check_adapter(location: Any, adapter_dir: Path) -> None:
    """Raise AdapterError unless ``adapter_dir`` was trained on the model at ``location``.

    Compares the adapter's recorded base (and, for adapters biasatlas trained, its training
    manifest) with the name biasatlas records for this model; an adapter that names no base is
    accepted only when it was not trained by biasatlas.
    """
    expected = base_model_name(location)
    recorded = adapter_base(adapter_dir)
    manifest_path = adapter_dir / CONFIG_FILE
    manifest = json.loads(manifest_path.read_text(encoding="utf-8")) if manifest_path.exists() else {}
    names = {n for n in (recorded, manifest.get("base_model")) if n}
    wanted = {expected, location.name, location.path}
    if names and not names & wanted:
        raise AdapterError(
            f"adapter {adapter_dir} was trained on {sorted(names)[0]!r}, not on {expected!r}; "
            "pass the model it was trained on (or train a new adapter for this model)"
        )
