"""The local backend: a causal language model run in-process with transformers, batched."""

from __future__ import annotations

import struct
import warnings
from collections import OrderedDict
from dataclasses import replace
from pathlib import Path
from typing import Any, BinaryIO

from biasatlas.backends.base import BackendError
from biasatlas.backends.extras import require_local
from biasatlas.backends.local.choice import ChoiceMixin
from biasatlas.backends.local.converted import load_gguf
from biasatlas.backends.local.generate import GenerateMixin
from biasatlas.backends.local.identity import ModelIdentity, hub_revision, hub_snapshot, identify
from biasatlas.backends.local.models import EMBEDDED_ALIAS, LocalOptions, ModelLocation, locate


def _quiet_gguf_progress() -> None:
    """Silence transformers' per-tensor GGUF de-quantization bar (it ignores disable_progress_bar).

    The bar is a module-level ``tqdm`` in transformers' GGUF loader; replacing it with a disabled
    one keeps a CLI run's stderr to biasatlas' own progress line.
    """
    import functools

    from transformers import modeling_gguf_pytorch_utils as gguf_utils

    bar: Any = getattr(gguf_utils, "tqdm", None)
    if bar is not None and not isinstance(bar, functools.partial):
        gguf_utils.tqdm = functools.partial(bar, disable=True)


_GGUF_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q",
                 11: "<q", 12: "<d"}


def _gguf_file_type(path: Path) -> int | None:
    """``general.file_type`` from a GGUF header, reading key/value pairs only up to that key."""

    def read(handle: BinaryIO, fmt: str) -> Any:
        size = struct.calcsize(fmt)
        data = handle.read(size)
        if len(data) != size:
            raise ValueError("truncated GGUF header")
        return struct.unpack(fmt, data)[0]

    def skip(handle: BinaryIO, kind: int) -> None:
        if kind == 8:  # string
            handle.seek(read(handle, "<Q"), 1)
        elif kind == 9:  # array: element type, count, elements
            inner, count = read(handle, "<I"), read(handle, "<Q")
            if inner in _GGUF_SCALARS:
                handle.seek(count * struct.calcsize(_GGUF_SCALARS[inner]), 1)
            else:
                for _ in range(count):
                    skip(handle, inner)
        else:
            handle.seek(struct.calcsize(_GGUF_SCALARS[kind]), 1)

    with path.open("rb") as handle:
        if handle.read(4) != b"GGUF":
            return None
        read(handle, "<I")  # version
        read(handle, "<Q")  # tensor count
        for _ in range(read(handle, "<Q")):
            key = handle.read(read(handle, "<Q")).decode("utf-8", "replace")
            kind = read(handle, "<I")
            if key == "general.file_type" and kind in _GGUF_SCALARS:
                return int(read(handle, _GGUF_SCALARS[kind]))
            skip(handle, kind)
    return None


#: ``gguf.LlamaFileType`` names (``MOSTLY_`` dropped) of the common types, so that describing a model (every run,
#: also one with nothing to ask) does not import gguf and numpy (~0.5 s); the test pins them to the library's
FILE_TYPES = {0: "ALL_F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K",
              11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S", 17: "Q5_K_M",
              18: "Q6_K", 32: "BF16"}


def gguf_quantization(path: Path) -> str | None:
    """The quantisation type a GGUF file declares (``general.file_type``, e.g. ``Q4_1``), if known."""
    try:
        value = _gguf_file_type(path)
        if value is None:
            return None
        if value in FILE_TYPES:
            return FILE_TYPES[value]
        import gguf  # a rarer type: the library's own name for it

        return str(gguf.LlamaFileType(value).name).removeprefix("MOSTLY_")
    except (OSError, ValueError, KeyError, ImportError, struct.error):
        return None  # an unknown type or an unreadable header: say nothing rather than guess


class LocalBackend(GenerateMixin, ChoiceMixin):
    """A causal language model run in-process with transformers, batched.

    Its id names the model by content: ``local:NAME@DIGEST`` where DIGEST is the sha256 of the
    weights (GGUF file or model directory) or the hub snapshot's commit, then ``+lora:DIGEST`` for
    an adapter and ``#`` with any non-default dtype or choice normalisation (see ``identity``).

    A model read from a file or directory is loaded only when it is first needed (a request to
    answer, or its ``model``/``tokenizer``): its id is the content digest, known without loading, so a
    run whose every answer is cached loads nothing (``load()`` loads it at once). A hub id is loaded
    at once: which snapshot answers is known only once it is loaded (or downloaded).
    """

    #: attributes that exist once the model is loaded: reading one before loads it (see __getattr__)
    LOADED_ATTRIBUTES = frozenset({"torch", "tokenizer", "model", "device", "_revision", "_option_cache",
                                   "_prefix_cache", "_can_reuse_prefix", "_stop_ids"})

    def __init__(self, spec: str, options: LocalOptions | None = None) -> None:
        require_local(spec)  # every missing piece in one message (the extra's modules, the embedded model's)
        self.spec = spec
        self.options = options or LocalOptions()
        self.location = locate(spec)
        if self.options.adapter and not Path(self.options.adapter).is_dir():
            raise BackendError(f"adapter directory not found: {self.options.adapter}")
        self.loaded = False
        if self.location.is_hub_id:
            self.load()
        self.identity = self._identify()
        self.id = self.identity.id

    def __getattr__(self, name: str) -> Any:
        # Called only for attributes not set yet: the loaded model's, on first use, load it.
        if name in LocalBackend.LOADED_ATTRIBUTES and not self.__dict__.get("loaded", True):
            self.load()
            return getattr(self, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # ---- loading ------------------------------------------------------------------------------
    def load(self) -> None:
        """Load the model now (once; a setup problem is a BackendError)."""
        if not self.loaded:
            self._load()
            self.loaded = True

    def _load(self) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
        # transformers >= 5 warns on every forward pass that passes past_key_values (our prefix reuse);
        # the call is supported in this version and the warning would flood a run's output.
        warnings.filterwarnings("ignore", message=r".*past_key_values.*deprecated", category=FutureWarning)
        self.torch = torch
        loc = self.location
        dtype = {"auto": "auto", "float32": torch.float32, "bfloat16": torch.bfloat16,
                 "float16": torch.float16}[self.options.dtype]
        model: Any
        try:
            if loc.gguf_file:
                _quiet_gguf_progress()
                self.tokenizer, model = load_gguf(loc, dtype)  # converted once, then read as a folder
            else:
                self.tokenizer = AutoTokenizer.from_pretrained(loc.path)
                model = AutoModelForCausalLM.from_pretrained(loc.path, dtype=dtype)
        except (OSError, ValueError) as exc:
            raise BackendError(f"cannot load local model {loc.path!r}: {exc}") from exc
        self._revision = hub_revision(model) if loc.is_hub_id else None
        if self.options.adapter:
            model = self._apply_adapter(model)
        device = self.options.device
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = torch.device(device)
        self.model = model.to(self.device).eval()
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.tokenizer.padding_side = "left"
        self._option_cache: dict[str, list[int]] = {}
        self._prefix_cache: OrderedDict[tuple[int, ...], list[tuple[Any, Any]]] = OrderedDict()
        self._can_reuse_prefix = self._check_prefix_support()
        self._stop_ids = self._find_stop_ids()

    def _identify(self) -> ModelIdentity:
        """Name the loaded model by content: a hub id by its snapshot's commit."""
        loc = self.location
        if not loc.is_hub_id:
            return identify(loc, self.options)
        revision = self._revision
        if not revision:
            try:
                folder, revision = hub_snapshot(loc.path)
            except (OSError, ValueError) as exc:
                raise BackendError(f"cannot tell which revision of {loc.path!r} was loaded: {exc}") from exc
            if not revision:  # a snapshot without a commit: hash its files instead
                return identify(replace(loc, path=str(folder)), self.options)
        return identify(loc, self.options, revision=revision)

    def _apply_adapter(self, model: Any) -> Any:
        from peft import PeftConfig, PeftModel

        adapter = str(self.options.adapter)
        config = PeftConfig.from_pretrained(adapter)
        base_name = getattr(config, "base_model_name_or_path", None) or ""
        loc: ModelLocation = self.location
        wanted = {loc.name, loc.path, EMBEDDED_ALIAS, str(Path(loc.path) / (loc.gguf_file or ""))}
        if base_name and not any(base_name == w or base_name.endswith(w) for w in wanted if w):
            raise BackendError(f"adapter {adapter} was trained on {base_name!r}, not on {loc.name!r}")
        try:
            return PeftModel.from_pretrained(model, adapter).merge_and_unload()
        except (RuntimeError, ValueError, KeyError) as exc:
            raise BackendError(f"adapter {adapter} does not fit model {loc.name}: {exc}") from exc

    # ---- what a run records -------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        """The model's identity and settings, recorded in each run's config.

        Loading nothing: a model not loaded (a run whose answers were all cached) has no loaded dtype,
        device or prefix reuse to report (None); its identity is the same.
        """
        loc, ident, o = self.location, self.identity, self.options
        loaded = self.loaded
        quantization: str | None = None
        if loc.gguf_file:
            quantization = gguf_quantization(Path(loc.path) / loc.gguf_file)
        elif loaded:
            qconfig = getattr(self.model.config, "quantization_config", None)
            if qconfig is not None:
                method = qconfig.get("quant_method") if isinstance(qconfig, dict) else getattr(
                    qconfig, "quant_method", None)
                quantization = str(method) if method is not None else "unknown"
        return {
            "backend": "local",
            "model": self.spec,
            "path": loc.path,
            "gguf_file": loc.gguf_file,
            "weights_sha256": ident.weights_digest,
            "revision": ident.revision,
            "adapter": o.adapter,
            "adapter_digest": ident.adapter_digest,
            "quantization": quantization,  # of the file; transformers de-quantizes GGUF weights
            "dtype": o.dtype,
            "loaded_dtype": (str(getattr(self.model, "dtype", "")).removeprefix("torch.") or None) if loaded else None,
            "device": str(self.device) if loaded else None,
            "batch_size": o.batch_size,
            "reuse_prefix": (o.reuse_prefix and self._can_reuse_prefix) if loaded else None,
            "choice_norm": o.choice_norm,
        }

    def close(self) -> None:
        if self.loaded:
            self._prefix_cache.clear()
