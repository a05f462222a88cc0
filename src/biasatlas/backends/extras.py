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
