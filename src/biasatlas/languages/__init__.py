"""Language packs: one folder per language under ``data/languages/<code>/`` (see docs/languages.md).

A pack names what each probe needs in its language and where it lives. Light on purpose (no pandas):
the plans of the contact and Samaritan probes import it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from biasatlas.datafiles import DataFileError, load_yaml

#: the twelve languages of the atlas, in display order
ATLAS_LANGUAGES = ("en", "de", "is", "fr", "es", "it", "pt", "hi", "id", "vi", "zh", "ko")
#: a pack folder's record of native-speaker reviews (written by `biasatlas languages review --apply`)
REVIEWS_FILE = "reviews.yaml"
#: the most characters one filled prompt of a pack may have (`languages check` refuses longer ones): the
#: shipped packs' longest is about 1,000; a template that renders megabytes is a mistake, never a question
MAX_PROMPT_CHARS = 20_000
#: the most characters one descriptor (one form of it) may have: the shipped packs' longest has 53
MAX_DESCRIPTOR_CHARS = 500


class LanguagePackError(DataFileError):
    """A language pack is missing or malformed; the message names the file."""


def packs_root() -> Path:
    """The folder holding one pack folder per language."""
    return Path(str(resources.files("biasatlas") / "data" / "languages"))


@dataclass(frozen=True)
class Pack:
    """A language pack's manifest (``pack.yaml``): grammar, file references and provenance rows."""

    code: str
    name: str
    path: Path
    grammar: dict[str, Any]
    files: dict[str, str]
    provenance: tuple[dict[str, Any], ...] = field(default_factory=tuple)
    default_actions: tuple[str, ...] = ("positive",)
    #: the recorded native-speaker reviews (``reviews.yaml``), oldest first
    reviews: tuple[dict[str, Any], ...] = field(default_factory=tuple)

    def file(self, key: str) -> Path | None:
        """The absolute path of a file the manifest names (relative to the pack folder), or None: also None
        for a path outside the pack's folder, its parent (a folder of packs) and the shipped data (no
        ``../../../../etc/passwd``), a symlink loop, and anything not a regular file (a FIFO would hang a read)."""
        rel = self.files.get(key)
        if rel is None:
            return None
        try:
            path = (self.path / rel).resolve(strict=False)
        except (OSError, RuntimeError, ValueError):
            return None
        roots = [self.path.resolve().parent, Path(__file__).resolve().parents[1] / "data"]
        if not any(path.is_relative_to(root) for root in roots):
            return None
        try:
            exists = path.exists()
        except (OSError, ValueError):
            return None
        if exists and not path.is_dir() and not path.is_file():
            return None  # a FIFO, a socket, a device
        return path

    @property
    def reviewed(self) -> bool:
        """True only when a review is recorded and every provenance row says a native speaker reviewed it:
        a flag in the manifest alone never makes a pack reviewed."""
        return bool(self.reviews) and bool(self.provenance) and all(
            row.get("native_speaker_reviewed") for row in self.provenance)

    @property
    def status(self) -> str:
        """'reviewed', or machine-drafted with the files that were reviewed (from the provenance rows)."""
        reviewed = [str(row.get("file")) for row in self.provenance if row.get("native_speaker_reviewed")]
        if self.reviewed:
            return "reviewed"
        status = "machine-drafted, not reviewed by a native speaker"
        return f"{status} (reviewed: {', '.join(reviewed)})" if reviewed else status


def read_pack(folder: Path) -> Pack:
    """Read ``folder/pack.yaml``; errors name the file."""
    path = folder / "pack.yaml"
    if not path.exists():
        raise LanguagePackError(f"{folder}: no pack.yaml")
    data = load_yaml(path)
    if not isinstance(data, dict) or "language" not in data:
        raise LanguagePackError(f"{path}: expected a mapping with 'language'")
    rows = data.get("provenance") or []
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise LanguagePackError(f"{path}: 'provenance' must be a list of rows")
    _types(path, data)
    return Pack(
        code=str(data["language"]),
        name=str(data.get("name", data["language"])),
        path=folder,
        grammar=dict(data.get("grammar") or {}),
        files={str(k): str(v) for k, v in (data.get("files") or {}).items()},
        provenance=tuple(dict(r) for r in rows),
        default_actions=tuple(data.get("default_actions") or ("positive",)),
        reviews=tuple(read_reviews(folder)),
    )


def _types(path: Path, data: dict[str, Any]) -> None:
    """The manifest's keys of the right kinds (a wrong type is one line naming the key, not a traceback)."""
    for key, kind, what in (("grammar", dict, "a mapping"), ("files", dict, "a mapping of file names"),
                            ("default_actions", list, "a list of actions")):
        if data.get(key) is not None and not isinstance(data[key], kind):
            raise LanguagePackError(f"{path}: '{key}' must be {what}, not {type(data[key]).__name__}")
    for key, value in (data.get("files") or {}).items():
        if not isinstance(value, str) or not value or "\x00" in value:
            raise LanguagePackError(f"{path}: files.{key} must be a file name")
    if not all(isinstance(a, str) for a in data.get("default_actions") or []):
        raise LanguagePackError(f"{path}: 'default_actions' must be a list of actions")


def read_reviews(folder: Path) -> list[dict[str, Any]]:
    """The review records of ``folder/reviews.yaml`` ([] when there is none); errors name the file."""
    path = folder / REVIEWS_FILE
    if not path.exists():
        return []
    data = load_yaml(path)
    rows = data.get("reviews") if isinstance(data, dict) else None
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise LanguagePackError(f"{path}: expected a mapping with 'reviews', a list of records")
    for i, row in enumerate(rows):
        counts = row.get("verdicts")
        if not row.get("reviewer") or not isinstance(counts, dict) or not all(
                isinstance(n, int) and n >= 0 for n in counts.values()):
            raise LanguagePackError(f"{path}: reviews[{i}] needs a reviewer and verdict counts")
    return [dict(r) for r in rows]


@cache
def pack(code: str) -> Pack:
    """The shipped pack of ``code``."""
    folder = packs_root() / code
    if not folder.is_dir():
        raise LanguagePackError(f"no language pack {code!r}; shipped: {', '.join(pack_codes())}")
    return read_pack(folder)


def pack_codes() -> list[str]:
    """Codes of the shipped packs, atlas order first."""
    root = packs_root()
    found = {p.name for p in root.iterdir() if (p / "pack.yaml").exists()} if root.is_dir() else set()
    return [c for c in ATLAS_LANGUAGES if c in found] + sorted(found - set(ATLAS_LANGUAGES))
