"""The console script: a Ctrl-C while the CLI is still loading gives the same clean line as one mid-run."""

from __future__ import annotations

import sys


def main() -> None:  # pragma: no cover - exercised through the installed script in tests
    """Load the CLI and run it; an interrupt during the load exits 130 with one line."""
    try:
        from biasatlas.cli.main import main as run_cli
    except KeyboardInterrupt:
        sys.stderr.write("interrupted before anything was asked: nothing to resume\n")
        sys.exit(130)
    run_cli()
