"""The guards every writer of a file or folder runs before writing (never over a study's own files)."""

from __future__ import annotations

from pathlib import Path

from biasatlas.cli.common import fail

#: the first bytes of every SQLite database file (a study's biasatlas.db, or any other)
SQLITE_HEADER = b"SQLite format 3\x00"


def study_file_names() -> frozenset[str]:
    """The names of a study directory's own files: its database, the database's logs and the writer's lock."""
    from biasatlas.lock import LOCK_NAME
    from biasatlas.store import DB_NAME

    return frozenset({DB_NAME, *(DB_NAME + s for s in ("-wal", "-shm", "-journal")), LOCK_NAME})


def check_output_file(path: Path, *, replace: bool, option: str = "--out") -> None:
    """The guard every writer of one file runs first: one line, exit 2, for a target it must not write.

    Never a directory, a study's own file (its database, logs, lock) nor any SQLite database, whatever its
    name (the header bytes tell); an existing ordinary file only with ``replace`` (a command's ``--force``,
    or a command that rewrites its own output, such as the report).
    """
    target = path.resolve() if path.exists() or path.is_symlink() else path
    if path.exists() and not path.is_file():
        fail(f"{option} {path} exists and is not a file")
    head = b""
    if path.is_file():
        try:
            with path.open("rb") as handle:
                head = handle.read(len(SQLITE_HEADER))
        except OSError:
            pass  # unreadable: the write itself fails with its own line
    if head == SQLITE_HEADER:
        fail(f"{option} {path} is a SQLite database (a study's?): refusing to write over it")
    if target.name in study_file_names():
        fail(f"{option} {path}: {target.name} is a study's own file (its database, a log of it or its writer "
             "lock); write elsewhere")
    if path.is_file() and not replace:
        fail(f"{option} {path} exists; pass --force to replace it, or choose a new name")


def check_output_dir(path: Path, option: str = "--out") -> None:
    """The guard of a writer into a folder: the folder may not be a file (a study database above all)."""
    if path.exists() and not path.is_dir():
        fail(f"{option} {path} exists and is not a folder")
