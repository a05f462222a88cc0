"""What an audit knows of a model before it runs: its backend id, a token counter and its prices.

The backend id (and with it every cache key) is computed without loading the model: a local model's
id needs only the weights' digest (cached per file, see ``backends.local.identity``), an HTTP
model's only the server URL and settings (the backend is built without contacting the server).
Masked and span-filling models are known once loaded. Tokens are counted with the model's own
tokenizer where it is at hand: a model directory's or downloaded hub snapshot's ``tokenizer.json``
(the ``tokenizers`` library), a GGUF file's vocabulary read by llama.cpp (``llama-cpp-python``, the
``server`` extra; only the vocabulary is loaded, about a second). Otherwise (HTTP models, a GGUF
without llama.cpp installed) with the stated approximation of 4 characters per token.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from biasatlas.backends.base import BackendError
from biasatlas.backends.options import BackendOptions

CHARS_PER_TOKEN = 4
APPROXIMATION = f"≈ {CHARS_PER_TOKEN} characters per token"


@dataclass
class ModelInfo:
    """A model's backend id (None with ``id_note`` when it cannot be told before loading), token counter, prices."""

    backend_id: str | None
    count_tokens: Callable[[str], int]
    tokens_by: str
    id_note: str | None = None
    price_prompt: float | None = None  # USD per million tokens
    price_completion: float | None = None


def approximate_tokens(text: str) -> int:
    """Tokens of ``text`` at 4 characters per token (rounded up)."""
    return -(-len(text) // CHARS_PER_TOKEN)


def _tokenizer(folder: Path) -> Callable[[str], int] | None:
    """A counter from the folder's ``tokenizer.json`` (the fast ``tokenizers`` library), if both exist."""
    file = folder / "tokenizer.json"
    if not file.is_file():
        return None
    try:
        from tokenizers import Tokenizer
    except ImportError:
        return None
    try:
        tokenizer = Tokenizer.from_file(str(file))
    except Exception:  # a file the library cannot read: fall back to the approximation
        return None
    return lambda text: len(tokenizer.encode(text, add_special_tokens=False).ids)


def _gguf_tokenizer(file: Path) -> Callable[[str], int] | None:
    """A counter from a GGUF file's vocabulary via llama.cpp, if installed (its log lines kept off the terminal)."""
    import importlib.util
    import os

    if importlib.util.find_spec("llama_cpp") is None:
        return None
    import llama_cpp

    saved = os.dup(2)  # llama.cpp writes to the C stderr even with verbose=False
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            try:
                model = llama_cpp.Llama(model_path=str(file), vocab_only=True, verbose=False)
            finally:
                os.dup2(saved, 2)
    except Exception:  # a file llama.cpp cannot read: fall back to the approximation
        return None
    finally:
        os.close(saved)
    return lambda text: len(model.tokenize(text.encode("utf-8"), add_bos=False, special=False))


def _local(spec: str, options: BackendOptions) -> tuple[str, Path]:
    """A local model's backend id and where its tokenizer is (a folder, or the GGUF file)."""
    from biasatlas.backends.local.identity import hub_snapshot, identify
    from biasatlas.backends.local.models import LocalOptions, locate
    from biasatlas.backends.registry import check_local_target

    adapter = options.adapter
    if "+lora:" in spec:
        spec, _, adapter = spec.partition("+lora:")
    kind, _, rest = spec.partition(":")
    target = rest if kind in {"hf", "local"} else spec
    check_local_target(spec, target)
    location = locate(target)
    defaults = LocalOptions()
    local_options = LocalOptions(adapter=adapter, dtype=options.dtype or defaults.dtype,  # type: ignore[arg-type]
                                 choice_norm=options.choice_norm or defaults.choice_norm)
    if adapter and not Path(adapter).is_dir():
        raise BackendError(f"adapter directory not found: {adapter}")
    if not location.is_hub_id:
        where = Path(location.path) / location.gguf_file if location.gguf_file else Path(location.path)
        return identify(location, local_options).id, where
    try:
        snapshot, revision = hub_snapshot(location.path)
    except (OSError, ValueError, ImportError) as exc:
        raise LookupError(f"{location.path} is not downloaded yet ({exc})") from None
    if revision:
        return identify(location, local_options, revision=revision).id, snapshot
    return identify(replace(location, path=str(snapshot)), local_options).id, snapshot


def check_model(options: BackendOptions) -> None:
    """Raise the BackendError a run would raise opening this model (``--plan-only``): nothing is loaded, no server
    is contacted (a server that is down, or a file that does not load, is found by the run)."""
    model_info(options, tokens=False)


def _http_id(options: BackendOptions) -> str:
    """An HTTP model's id: the backend is built without the server check, then closed."""
    settings = [s for s in options.http if not s.startswith("check=")]
    backend = options.model_copy(update={"http": [*settings, "check=false"]}).open()
    try:
        return backend.id
    finally:
        backend.close()


def _prices(options: BackendOptions) -> tuple[float | None, float | None]:
    """USD per million prompt and completion tokens from the ``--http`` settings (checked by the run's opening)."""
    from biasatlas.backends.openai_compat import OpenAIOptions, parse_settings

    http = OpenAIOptions(**parse_settings(options.http))  # type: ignore[arg-type]
    return http.price_prompt, http.price_completion


def _check_adapter(adapter: str | None, kind: str) -> None:
    """An adapter is a LoRA folder (with ``adapter_config.json``) on a local model, or a BackendError."""
    if not adapter:
        return
    if kind in ("fake", "openai"):
        raise BackendError(f"adapter {adapter}: an adapter applies to a local model only, not a {kind} model")
    if not Path(adapter).is_dir():
        raise BackendError(f"adapter directory not found: {adapter}")
    if not (Path(adapter) / "adapter_config.json").is_file():
        raise BackendError(f"{adapter} is not a LoRA adapter (no adapter_config.json)")


def model_info(options: BackendOptions, *, tokens: bool = True) -> ModelInfo:
    """What the audit needs to know of a model before running it (a BackendError when it cannot be used).

    Every check the run makes when it opens the model is made, with its message, except those that need the
    model loaded or its server reached; ``tokens=False`` skips finding a token counter (a check only).
    """
    spec = options.model
    kind = spec.partition(":")[0]
    info = ModelInfo(None, approximate_tokens, APPROXIMATION)
    _check_adapter(options.adapter or (spec.partition("+lora:")[2] if "+lora:" in spec else None), kind)
    if options.http:  # a run refuses settings it cannot parse, whatever the model
        from biasatlas.backends.openai_compat import parse_settings

        parse_settings(options.http)
    if kind in ("masked", "span"):
        info.id_note = "masked and span-filling models are named once loaded"
    elif kind == "fake":
        from biasatlas.backends.fake import spec_id

        info.backend_id = spec_id(spec.partition(":")[2])  # a malformed plant is the run's BackendError
    elif kind == "openai":
        info.backend_id = _http_id(options)  # first: the run's own checks and messages (key, URL, settings)
        if options.http:
            info.price_prompt, info.price_completion = _prices(options)
    else:
        from biasatlas.backends.extras import require_local

        # the imports the run needs, checked as the run checks them (--plan-only must not pass where it refuses)
        require_local(spec.partition("+lora:")[0].removeprefix("local:").removeprefix("hf:"))
        try:
            info.backend_id, where = _local(spec, options)
        except LookupError as exc:
            info.id_note = str(exc)
            return info
        counter = None if not tokens else _gguf_tokenizer(where) if where.suffix == ".gguf" else _tokenizer(where)
        if counter is not None:
            info.count_tokens, info.tokens_by = counter, "the model's tokenizer"
    return info
