"""Which model a local backend runs: a content digest of what it reads to answer.

Two checkpoints in directories of the same name (``run1/final`` and ``run2/final``) are different
models, and a copy of the same weights is the same model: a local backend's id carries the sha256
of the weights (a GGUF file, or a model directory's weight, config and tokenizer files), or the
commit of a Hugging Face hub snapshot, and the digest of its LoRA adapter. Hashing a large file
takes seconds, so each file's digest is kept in a small JSON sidecar in the user's cache, keyed by
the file's path, size and modification time: a file is hashed again only when it changes.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biasatlas.backends.local.models import LocalOptions, ModelLocation

CACHE_ENV = "BIASATLAS_CACHE_DIR"
SIDECAR = "weights-digests.json"
SHORT = 12  # hex digits of a digest shown in a backend id
WEIGHT_SUFFIXES = {".safetensors", ".bin", ".gguf", ".pt", ".pth"}
# What a model directory holds besides weights that changes answers: config, tokenizer, template.
MODEL_TEXT_FILES = {"tokenizer.model", "merges.txt", "vocab.txt", "chat_template.jinja"}
# Trainer leftovers in a checkpoint directory: never read when the model answers.
NOT_MODEL = {"training_args.bin", "optimizer.pt", "scheduler.pt", "trainer_state.json", "scaler.pt"}


def cache_dir() -> Path:
    """Where biasatlas keeps small per-user caches: $BIASATLAS_CACHE_DIR, else the XDG cache."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "biasatlas"


class DigestCache:
    """sha256 digests of files, remembered by (resolved path, size, mtime) in a JSON sidecar.

    Files under ``min_size`` bytes (configs, tokenizer files) are simply hashed again each time.
    A sidecar that cannot be read or written is ignored: the digest is then computed every time.
    """

    def __init__(self, path: Path | None = None, min_size: int = 1 << 20) -> None:
        self.path = path or cache_dir() / SIDECAR
        self.min_size = min_size
        try:
            loaded = json.loads(self.path.read_text(encoding="utf-8"))
            self.entries: dict[str, str] = loaded if isinstance(loaded, dict) else {}
        except (OSError, ValueError):
            self.entries = {}
        self.hashed = 0  # files of at least min_size hashed (not found in the sidecar) by this object

    @staticmethod
    def _key(file: Path) -> str:
        stat = file.stat()
        return f"{file.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"

    @classmethod
    def _current(cls, key: str) -> bool:
        """Whether ``key`` still describes the file at its path."""
        try:
            return cls._key(Path(key.rsplit("|", 2)[0])) == key
        except OSError:
            return False

    def digest(self, file: Path) -> str:
        """The sha256 (hex) of ``file``'s bytes, read from the sidecar when the file is unchanged."""
        key = self._key(file)
        known = self.entries.get(key)
        if known is not None:
            return known
        h = hashlib.sha256()
        with file.open("rb") as handle:
            while chunk := handle.read(1 << 22):
                h.update(chunk)
        value = h.hexdigest()
        if file.stat().st_size >= self.min_size:
            self.entries[key] = value
            self.hashed += 1
            self._save()
        return value

    def _save(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Entries of files that changed or no longer exist are dropped; a concurrent writer
            # may win the race, which costs at most one hashing again later.
            live = {k: v for k, v in self.entries.items() if self._current(k)}
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".digests-", suffix=".json")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(live, handle, indent=0, sort_keys=True)
            os.replace(tmp, self.path)
        except OSError:
            pass


def model_files(directory: Path) -> list[Path]:
    """The files of a transformers model directory that decide its answers, sorted by name.

    Weights (``*.safetensors``, ``*.bin``, ...), the JSON configs (model, generation, tokenizer,
    chat template) and tokenizer vocabularies; trainer state, optimizer and README are left out.
    """
    files = [
        f for f in directory.iterdir()
        if f.is_file() and f.name not in NOT_MODEL
        and (f.suffix in WEIGHT_SUFFIXES or f.suffix == ".json" or f.name in MODEL_TEXT_FILES)
    ]
    return sorted(files, key=lambda f: f.name)


def combined_digest(named: Iterable[tuple[str, str]]) -> str:
    """One sha256 over (file name, file digest) pairs: a directory's digest."""
    h = hashlib.sha256()
    for name, digest in named:
        h.update(f"{name}\0{digest}\n".encode())
    return h.hexdigest()


def weights_digest(location: ModelLocation, cache: DigestCache | None = None) -> str:
    """sha256 of a GGUF file's bytes, or of a model directory's files (names and bytes)."""
    cache = cache or DigestCache()
    if location.gguf_file:
        return cache.digest(Path(location.path) / location.gguf_file)
    return combined_digest((f.name, cache.digest(f)) for f in model_files(Path(location.path)))


def hub_revision(model: Any) -> str | None:
    """The commit a model was loaded from, where transformers records it (4.x: ``config._commit_hash``)."""
    value = getattr(getattr(model, "config", None), "_commit_hash", None)
    return str(value) if value else None


def hub_snapshot(repo_id: str, cache_dir: str | None = None) -> tuple[Path, str | None]:
    """The local snapshot directory of a hub model already downloaded, and its commit if known.

    The Hugging Face cache keeps each revision in ``snapshots/<commit>/``; a snapshot found
    elsewhere has no commit to tell (None).
    """
    from transformers.utils import cached_file

    config = cached_file(repo_id, "config.json", cache_dir=cache_dir, local_files_only=True)
    if config is None:
        raise OSError(f"no config.json of {repo_id} in the local cache")
    folder = Path(config).parent
    commit = folder.name if folder.parent.name == "snapshots" else None
    return folder, commit


def adapter_digest(adapter: str) -> str:
    """A short digest of an adapter's weights and config, so a retrained adapter never reuses old answers."""
    h = hashlib.sha256()
    for file in sorted(Path(adapter).glob("*")):
        if file.is_file() and file.suffix in {".safetensors", ".bin", ".json"}:
            h.update(file.name.encode())
            h.update(file.read_bytes())
    return h.hexdigest()[:SHORT]


@dataclass(frozen=True)
class ModelIdentity:
    """A local model's backend id and what it was made from (recorded with every run)."""

    id: str
    weights_digest: str | None  # sha256 of the weights (files), None for a hub snapshot
    revision: str | None  # the hub snapshot's commit, None for files
    adapter_digest: str | None


def identify(location: ModelLocation, options: LocalOptions, revision: str | None = None,
             cache: DigestCache | None = None) -> ModelIdentity:
    """The identity of the model at ``location`` run with ``options``.

    A hub id is named by its snapshot's commit (``revision``, known once loaded); files and
    directories by the sha256 of their content.
    """
    digest = None if revision else weights_digest(location, cache)
    adapter = adapter_digest(options.adapter) if options.adapter else None
    ident = backend_id(location, revision or str(digest), options, adapter)
    return ModelIdentity(ident, digest, revision, adapter)


def backend_id(location: ModelLocation, model_digest: str, options: LocalOptions,
               adapter: str | None = None) -> str:
    """``local:NAME@DIGEST[+lora:ADAPTER][#FLAGS]``.

    NAME is for people; DIGEST (weights digest or hub commit, 12 hex digits) and the adapter digest
    tell models apart. Settings that change answers follow after ``#``, comma-separated, only when
    they are not the default (so ids of default runs stay short), as in the HTTP backend's ids:
    the dtype (``bfloat16``, ``float16``, ``auto``) and ``mean`` (choice scores averaged per token).
    """
    ident = f"local:{location.label or location.name}@{model_digest[:SHORT]}"
    if adapter:
        ident += f"+lora:{adapter}"
    defaults = LocalOptions()
    flags: list[str] = []
    if options.dtype != defaults.dtype:
        flags.append(options.dtype)
    if options.choice_norm != defaults.choice_norm:
        flags.append(options.choice_norm)
    return f"{ident}#{','.join(flags)}" if flags else ident
