"""Warnings about a plan held until the run's inputs are known to be usable.

Planning warns about the draw (groups left out, import rows that do not fit); when the model, the server or the
study database then turns out unusable, the command ends on that one error line, without a warning about a plan
that was never asked. The warnings are shown once the checks have passed.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def hold_warnings() -> Iterator[list[warnings.WarningMessage]]:
    """Record the warnings raised inside (filters as outside) instead of showing them."""
    with warnings.catch_warnings(record=True) as held:
        yield held


def release_warnings(held: list[warnings.WarningMessage]) -> None:
    """Show warnings recorded by :func:`hold_warnings`, in order, as they would have been shown."""
    for warning in held:
        warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    held.clear()
