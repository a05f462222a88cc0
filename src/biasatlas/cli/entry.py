"""The console script: signal handlers first (see :mod:`biasatlas.cli.interrupts`), then the CLI."""

from __future__ import annotations

import sys

from biasatlas.cli.interrupts import EXIT_INTERRUPTED, ignore_signals, install_handlers, tell_interrupted


def main() -> None:  # pragma: no cover - exercised through the installed script in tests
    """Load the CLI and run it; an interrupt at any moment exits 130 with one line."""
    install_handlers()
    try:
        from biasatlas.cli.main import main as run_cli
    except KeyboardInterrupt:
        ignore_signals()
        tell_interrupted()
        sys.exit(EXIT_INTERRUPTED)
    run_cli()
