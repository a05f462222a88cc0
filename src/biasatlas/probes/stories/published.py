"""Published StereoTales vocabularies read in the bundled keys: value mapping and seeds folders.

The published seeds and exports write values as English text ("senior (65+)", "Atheist/Agnostic");
the analysis pools by the bundled keys (``age.senior``, ``religion.nonreligious``).
:class:`ValueMapper` maps one to the other (key, label or slug match, then the alias table
``data/stories/import_aliases.yaml``), and :func:`folder_seeds` reads a seeds folder given to
``run stories --seeds DIR`` (the published layout or ours) as :class:`Seeds` in the bundled keys:
values of another language by their position in the folder's English file, scenarios keyed by
the English text, so languages pool by value and scenario as with the bundled seeds.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from biasatlas.probes.stories.extract import match_value
from biasatlas.probes.stories.seeds import (
    LANGUAGES,
    Dimension,
    Scenario,
    SeedError,
    Seeds,
    Value,
    load_seeds,
    slug,
)


@lru_cache(maxsize=1)
def _aliases() -> dict[str, dict[str, str]]:
    path = Path(str(resources.files("biasatlas") / "data" / "stories" / "import_aliases.yaml"))
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return {d: {slug(k): v for k, v in m.items()} for d, m in (data.get("aliases") or {}).items()}


class ValueMapper:
    """Published value text -> bundled key: key/label/slug match, then the alias table."""

    def __init__(self) -> None:
        self.dims = load_seeds("en").dimensions
        self.aliases = _aliases()

    def dimension(self, name: str) -> Dimension | None:
        return self.dims.get(str(name).strip().lower().replace(" ", "_"))

    def value(self, dim: Dimension, raw: Any) -> str | None:
        found = match_value(raw, dim)
        if found is not None:
            return found
        return self.aliases.get(dim.key, {}).get(slug(str(raw)))


def _english(root: str, language: str) -> Seeds:
    """The folder's English seeds (the reference of positions); the language's own when it has none."""
    try:
        return load_seeds("en", root)
    except SeedError:
        return load_seeds(language, root)


def folder_seeds(root: str, language: str) -> Seeds:
    """The seeds of ``language`` in folder ``root``, dimensions and values in the bundled keys.

    A prompted value that maps to no bundled value is an error naming the file's dimension and
    value; an unprompted one is left out.
    """
    folder = Path(root)
    if not folder.is_dir():
        raise SeedError(f"--seeds {root}: no such folder")
    seeds = load_seeds(language, root)
    english = _english(root, language)
    mapper = ValueMapper()
    dims: dict[str, Dimension] = {}
    for dkey, dim in seeds.dimensions.items():
        bundled = mapper.dimension(dkey)
        if bundled is None:
            raise SeedError(f"{root}: attribute {dkey!r} of {language!r} is none of the bundled attributes "
                            f"({', '.join(mapper.dims)})")
        reference = english.dimensions.get(dkey, dim)
        values: list[Value] = []
        for i, value in enumerate(dim.values):
            ref = reference.values[i] if i < len(reference.values) else value
            key = mapper.value(bundled, ref.label) or mapper.value(bundled, ref.key)
            if key is None or key == "unknown":
                if value.prompt:
                    raise SeedError(f"{root}: {dkey} value {ref.label!r} maps to no value of the bundled {dkey} "
                                    f"({', '.join(bundled.keys)}); add it to data/stories/import_aliases.yaml")
                continue
            values.append(Value(key, value.label, value.prompt))
        dims[bundled.key] = Dimension(bundled.key, dim.label, tuple(values), dim.aspect)
    return Seeds(
        language=language,
        dimensions=dims,
        scenarios=_scenario_keys(seeds, english),
        story_template=seeds.story_template,
        extraction_template=seeds.extraction_template or load_seeds("en").extraction_template,
        refusal_markers=seeds.refusal_markers
        or (load_seeds(language).refusal_markers if language in LANGUAGES else ()),
        provenance=seeds.provenance,
        aspect_separator=seeds.aspect_separator,
    )


def _scenario_keys(seeds: Seeds, english: Seeds) -> tuple[Scenario, ...]:
    """Scenarios keyed like the English file's: same group, same position within the group."""
    by_group: dict[str, list[Scenario]] = {}
    for scenario in english.scenarios:
        by_group.setdefault(scenario.group, []).append(scenario)
    out = []
    seen: dict[str, int] = {}
    for scenario in seeds.scenarios:
        j = seen.get(scenario.group, 0)
        seen[scenario.group] = j + 1
        ref = by_group.get(scenario.group, [])
        key = ref[j].key if j < len(ref) else scenario.key
        out.append(Scenario(key, scenario.group, scenario.text))
    return tuple(out)
