"""GGUF models converted once: transformers' de-quantized weights kept in the user's cache.

transformers reads a GGUF file by parsing its metadata in Python and de-quantizing every tensor,
which takes 40-90 s for the embedded 135M model on a 2-core machine, on every load. The result is
an ordinary float model, so the first load writes it to ``<cache>/converted/`` as a transformers
folder (safetensors, config, tokenizer, generation config), and later loads read that folder in a
second or two. The weights are the same numbers (the float32 tensors transformers produced), so the
answers are identical; the backend id still names the GGUF file's digest.

The folder is keyed by the GGUF file's sha256 and the transformers version (its conversion code
can change between releases). It is written under a temporary name and renamed when complete, so
a crash never leaves a half-written folder that a later load would use; a folder that cannot be
read is ignored and the GGUF file read instead. Models whose float32 weights exceed
``$BIASATLAS_CONVERTED_MAX_MB`` (default 2048) are not kept; ``0`` turns the cache off.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from biasatlas.backends.local.identity import DigestCache, cache_dir
from biasatlas.backends.local.models import ModelLocation

MAX_MB_ENV = "BIASATLAS_CONVERTED_MAX_MB"
DEFAULT_MAX_MB = 2048
#: written last: a folder without it is not complete
DONE = "biasatlas-converted.json"


def max_bytes() -> int:
    """The largest float32 model kept converted, in bytes (0: the cache is off)."""
    raw = os.environ.get(MAX_MB_ENV, "").strip()
    try:
        mb = float(raw) if raw else DEFAULT_MAX_MB
    except ValueError:
        mb = DEFAULT_MAX_MB
    return max(0, int(mb * (1 << 20)))


def converted_dir(gguf: Path, transformers_version: str, digests: DigestCache | None = None) -> Path:
    """Where the converted copy of ``gguf`` is kept (whether or not it exists yet)."""
    digest = (digests or DigestCache()).digest(gguf)
    return cache_dir() / "converted" / f"{digest[:32]}-transformers-{transformers_version}"


def _complete(folder: Path) -> bool:
    return (folder / DONE).is_file()


def load_converted(folder: Path, dtype: Any) -> tuple[Any, Any] | None:
    """The tokenizer and model kept in ``folder``, or None where there is none or it cannot be read."""
    if not _complete(folder):
        return None
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(str(folder))
        model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=dtype)
    except Exception:  # any failure to read our own copy (safetensors raises its own
        return None  # error class for a damaged file) means: read the GGUF file as if there were none
    return tokenizer, model


def save_converted(folder: Path, tokenizer: Any, model: Any, source: Path) -> bool:
    """Keep a GGUF-loaded ``model`` (float32) and its tokenizer in ``folder``; whether it was kept.

    Nothing is kept for a model above the size limit, or where the cache cannot be written (a
    read-only home, a full disk): the load still succeeded, only the next one is slow again.
    """
    from safetensors.torch import save_model

    size = sum(p.numel() for p in model.parameters()) * 4
    if size == 0 or size > max_bytes() or _complete(folder):
        return False
    config = model.config.to_dict()
    config.pop("quantization_config", None)  # the tensors are plain floats now
    tmp: Path | None = None
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}-"))
        save_model(model, str(tmp / "model.safetensors"))  # tied weights stored once
        (tmp / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True), encoding="utf-8")
        model.generation_config.save_pretrained(str(tmp))
        tokenizer.save_pretrained(str(tmp))
        (tmp / DONE).write_text(json.dumps({"source": str(source), "float32_bytes": size}), encoding="utf-8")
        if folder.exists():  # not complete (checked above): made by hand or another tool, never by us
            shutil.rmtree(folder, ignore_errors=True)
        os.replace(tmp, folder)  # atomic: a reader sees no folder or a complete one
        return True
    except OSError:  # another process finished first (folder not empty), or the cache is not writable
        return False
    finally:
        if tmp is not None and tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def load_gguf(location: ModelLocation, dtype: Any) -> tuple[Any, Any]:
    """The tokenizer and model of a GGUF ``location``: from the converted copy when there is one,
    else from the GGUF file (keeping a converted copy for next time)."""
    import torch
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = Path(location.path) / str(location.gguf_file)
    cached = max_bytes() > 0 and dtype in (torch.float32, torch.bfloat16, torch.float16)
    folder = converted_dir(gguf, transformers.__version__) if cached else None
    if folder is not None:
        loaded = load_converted(folder, dtype)
        if loaded is not None:
            return loaded
    tokenizer = AutoTokenizer.from_pretrained(location.path, gguf_file=location.gguf_file)
    if folder is None:
        return tokenizer, AutoModelForCausalLM.from_pretrained(location.path, gguf_file=location.gguf_file,
                                                               dtype=dtype)
    # Converted in float32, the dtype transformers de-quantizes to; another dtype is a cast of it.
    model = AutoModelForCausalLM.from_pretrained(location.path, gguf_file=location.gguf_file,
                                                 dtype=torch.float32)
    save_converted(folder, tokenizer, model, gguf)
    if dtype != torch.float32:
        model = model.to(dtype)
    return tokenizer, model
