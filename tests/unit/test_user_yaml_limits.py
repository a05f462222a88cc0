"""YAML files a user gives to the leakage and stories probes (a name map, a seeds folder, the marked groups)
are read within the data files' limits: an alias bomb or a deep nesting is a one-line error at once, not a
MemoryError or a RecursionError (they were read with yaml.safe_load, unbounded)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml

from biasatlas.probes.leakage.data import LeakageDataError
from biasatlas.probes.leakage.ratings import load_name_map
from biasatlas.probes.stories import harm, seeds

#: nine lists of nine aliases to the list before: 9**9 values once expanded
BOMB = "bomb: [" + ", ".join(
    ["&a [" + ", ".join(["lol"] * 9) + "]"]
    + [f"&{chr(ord('b') + i)} [" + ", ".join([f"*{chr(ord('a') + i)}"] * 9) + "]" for i in range(8)]
) + "]\n"
DEEP = "x: " + "[" * 5000 + "]" * 5000 + "\n"


@pytest.mark.parametrize("text", [BOMB, DEEP], ids=["alias bomb", "nested 5000 deep"])
def test_a_leakage_name_map(tmp_path: Path, text: str) -> None:
    path = tmp_path / "names.yaml"
    path.write_text(text)
    started = time.monotonic()
    with pytest.raises(LeakageDataError, match="cannot parse the name map"):
        load_name_map(path)
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("text", [BOMB, DEEP], ids=["alias bomb", "nested 5000 deep"])
def test_a_seeds_file(tmp_path: Path, text: str) -> None:
    path = tmp_path / "attributes.en.yaml"
    path.write_text(text)
    with pytest.raises(seeds.SeedError, match="not valid YAML"):
        seeds._read_yaml(path)


def test_a_seeds_file_over_the_size_limit(tmp_path: Path) -> None:
    path = tmp_path / "attributes.en.yaml"
    path.write_text("x: " + "a" * (2 << 20))
    with pytest.raises(seeds.SeedError, match="larger than"):
        seeds._read_yaml(path)


@pytest.mark.parametrize("text", [BOMB, DEEP], ids=["alias bomb", "nested 5000 deep"])
def test_a_marked_groups_file(tmp_path: Path, text: str) -> None:
    path = tmp_path / "marked.yaml"
    path.write_text(text)
    with pytest.raises(yaml.YAMLError):
        harm.marked_groups(path)


def test_the_shipped_marked_groups_still_load() -> None:
    assert harm.marked_groups()
