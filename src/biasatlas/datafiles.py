"""Reading YAML safely and predictably: the package's data files, and the YAML a user gives (audit files).

Every YAML read here is bounded: at most ``MAX_YAML_BYTES`` of text, nested at most ``MAX_YAML_DEPTH``
deep, and at most ``MAX_YAML_NODES`` values once its aliases are expanded (a "billion laughs" of a few
hundred bytes is refused before anything is built from it; so is an alias to itself).
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Any

import yaml


class _Yaml12BoolLoader(yaml.SafeLoader):
    """SafeLoader where only true/false are booleans (YAML 1.2), so 'Yes', 'No', 'Nei' stay strings."""


_Yaml12BoolLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Yaml12BoolLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


#: The largest YAML file read (bytes), the deepest nesting, the most values with every alias expanded.
MAX_YAML_BYTES = 1024 * 1024
MAX_YAML_DEPTH = 100
MAX_YAML_NODES = 100_000


class DataFileError(ValueError):
    """A data file is missing or malformed; the message names the file."""


class YamlLimitError(yaml.YAMLError):
    """YAML over the limits (nesting, expanded aliases): one line."""

    def __init__(self, problem: str, mark: Any = None) -> None:
        super().__init__(problem)
        self.problem, self.problem_mark = problem, mark


def read_limited(path: Path, limit: int, what: str = "a file") -> bytes:
    """The bytes of ``path``, refusing one larger than ``limit`` (a device or a pipe: once ``limit`` bytes
    are read) with a ValueError; OSError as open() raises it."""
    with open(path, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"{path}: larger than {limit / 2**20:g} MiB, the most {what} may have")
    return data


def _expanded_size(node: yaml.Node, memo: dict[int, int]) -> int:
    """The number of values ``node`` holds once every alias is expanded (an alias to itself: no end)."""
    found = memo.get(id(node))
    if found is not None:
        return found
    memo[id(node)] = MAX_YAML_NODES + 1  # (met again while being counted: a recursive alias)
    size = 1
    if isinstance(node, yaml.SequenceNode):
        size += sum(_expanded_size(child, memo) for child in node.value)
    elif isinstance(node, yaml.MappingNode):
        size += sum(_expanded_size(k, memo) + _expanded_size(v, memo) for k, v in node.value)
    memo[id(node)] = size = min(size, MAX_YAML_NODES + 1)
    return size


class BoundedComposer:
    """Mixed into a loader: nesting deeper than ``MAX_YAML_DEPTH`` is refused while the document is composed
    (PyYAML's composer recurses: 50,000 deep was a RecursionError), and too many expanded values after."""

    _depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._depth += 1
        try:
            if self._depth > MAX_YAML_DEPTH:
                mark = self.peek_event().start_mark  # type: ignore[attr-defined]
                raise YamlLimitError(f"nested more than {MAX_YAML_DEPTH} deep", mark)
            return super().compose_node(parent, index)  # type: ignore[misc]
        finally:
            self._depth -= 1

    def get_single_node(self) -> Any:
        node = super().get_single_node()  # type: ignore[misc]
        if node is not None and _expanded_size(node, {}) > MAX_YAML_NODES:
            raise YamlLimitError(f"more than {MAX_YAML_NODES:,} values once its aliases are expanded "
                                 "(an alias bomb, or an alias to itself)", node.start_mark)
        return node


class _BoundedLoader(BoundedComposer, _Yaml12BoolLoader):
    """The data files' loader, bounded."""


class BoundedSafeLoader(BoundedComposer, yaml.SafeLoader):
    """``yaml.safe_load``'s loader within the limits above: ``yaml.load(text, Loader=BoundedSafeLoader)``
    for YAML a user gives (its errors, :class:`YamlLimitError` included, are ``yaml.YAMLError``)."""


def load_yaml(path: str | Path) -> Any:
    """Parse a YAML file with YAML 1.2 booleans, within the limits above; errors name the file."""
    path = Path(path)
    try:
        text = read_limited(path, MAX_YAML_BYTES, "a YAML file").decode("utf-8")
        return yaml.load(text, Loader=_BoundedLoader)
    except FileNotFoundError as exc:
        raise DataFileError(f"{path}: file not found") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise DataFileError(f"{path}: cannot be read ({exc})") from exc
    except yaml.YAMLError as exc:
        raise DataFileError(f"{path}: not valid YAML: {' '.join(str(exc).split())}") from exc
    except ValueError as exc:
        raise DataFileError(str(exc)) from exc


def data_root() -> Path:
    return Path(str(resources.files("biasatlas") / "data"))
