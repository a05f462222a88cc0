"""Every command's help names the papers as the report and the terminal do (author–year), never by the number
of their file in the project's paper folder."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import typer.main

from biasatlas.cli.main import app

PAPER_NUMBER = re.compile(r"\bpapers? 00\d", re.IGNORECASE)


def _commands(command: Any, path: str = "biasatlas") -> Iterator[tuple[str, Any]]:
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from _commands(sub, f"{path} {name}")


def test_no_help_text_names_a_paper_by_its_number() -> None:
    root = typer.main.get_command(app)
    found = []
    commands = list(_commands(root))
    assert len(commands) > 40  # every subcommand was walked
    for path, command in commands:
        texts = [command.help or "", command.short_help or "", command.epilog or ""]
        texts += [getattr(p, "help", None) or "" for p in command.params]
        found += [f"{path}: {m.group(0)!r} in {t[:80]!r}" for t in texts for m in [PAPER_NUMBER.search(t)] if m]
    assert not found, "\n".join(found)
