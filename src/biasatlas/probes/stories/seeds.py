"""Seeds of the story probe: attribute vocabularies, scenarios and prompt templates per language.

Files live in ``data/stories/seeds`` (layout and schema in its README.md). Every language is
checked against English: the same dimension, value and scenario keys, the same prompted values,
a provenance block, and templates with their placeholders. A published StereoTales seeds folder
(``attributes.<lang>.yaml`` as ``{dimension: {values: [...], template_choices: [...]}}``,
scenarios as ``{group: [text, ...]}``, ``prompts.<lang>.yaml`` with ``scenario_based``) is read too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from biasatlas.datafiles import MAX_YAML_BYTES, BoundedSafeLoader, read_limited

LANGUAGES = ("en", "fr", "es", "it", "pt", "nl", "uk", "ar", "hi", "zh")
PUBLISHED_LANGUAGE_ALIASES = {"nl": "du"}  # the published folder names Dutch "du"
UNKNOWN = "unknown"


class SeedError(ValueError):
    """A seed file is missing or malformed; the message names the file and what is wrong."""


@dataclass(frozen=True)
class Value:
    key: str
    label: str
    prompt: str | None = None


@dataclass(frozen=True)
class Dimension:
    key: str
    label: str
    values: tuple[Value, ...]
    aspect: str | None = None

    @property
    def aspect_text(self) -> str:
        """How the story prompt names this dimension: ``aspect``, else the label without its parenthesis."""
        if self.aspect:
            return self.aspect
        return re.sub(r"\s*[(\uff08].*?[)\uff09]", "", self.label).strip() or self.label

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(v.key for v in self.values)

    def value(self, key: str) -> Value:
        for v in self.values:
            if v.key == key:
                return v
        raise KeyError(key)


@dataclass(frozen=True)
class Scenario:
    key: str
    group: str
    text: str


@dataclass(frozen=True)
class Seeds:
    """Everything one language needs to build prompts."""

    language: str
    dimensions: dict[str, Dimension]
    scenarios: tuple[Scenario, ...]
    story_template: str
    extraction_template: str
    refusal_markers: tuple[str, ...]
    provenance: dict[str, dict[str, Any]] = field(default_factory=dict)
    aspect_separator: str = ", "

    @property
    def aspects_text(self) -> str:
        """Every dimension's aspect, in order: what ``{aspects}`` of the story template becomes."""
        return self.aspect_separator.join(d.aspect_text for d in self.dimensions.values())

    @property
    def prompted(self) -> list[tuple[Dimension, Value]]:
        """The (dimension, value) pairs given to a protagonist as its single attribute."""
        return [(d, v) for d in self.dimensions.values() for v in d.values if v.prompt]


def seeds_root() -> Path:
    return Path(str(resources.files("biasatlas") / "data" / "stories" / "seeds"))


def available_languages(root: Path | None = None) -> list[str]:
    """Languages with an attributes file in ``root`` (the bundled seeds by default)."""
    folder = (root or seeds_root()) / "attributes"
    found = []
    for path in sorted(folder.glob("attributes.*.yaml")):
        lang = path.name.split(".")[1]
        found.append({v: k for k, v in PUBLISHED_LANGUAGE_ALIASES.items()}.get(lang, lang))
    return found


def _read_yaml(path: Path) -> Any:
    try:
        text = read_limited(path, MAX_YAML_BYTES, "a seeds file").decode("utf-8")
        return yaml.load(text, Loader=BoundedSafeLoader)  # a user's folder: aliases and depth bounded
    except yaml.YAMLError as exc:
        raise SeedError(f"{path}: not valid YAML ({exc})") from exc
    except UnicodeDecodeError as exc:
        raise SeedError(f"{path}: not UTF-8 text ({exc})") from exc
    except ValueError as exc:  # larger than the limit
        raise SeedError(str(exc)) from exc


def _file(root: Path, kind: str, stem: str, language: str) -> Path:
    for lang in (language, PUBLISHED_LANGUAGE_ALIASES.get(language, language)):
        path = root / kind / f"{stem}.{lang}.yaml"
        if path.exists():
            return path
    have = ", ".join(available_languages(root)) or "none"
    raise SeedError(
        f"no {kind} seeds for language {language!r} (expected {root / kind / f'{stem}.{language}.yaml'}); "
        f"languages with seeds: {have}"
    )


def _provenance(path: Path, data: dict[str, Any], required: bool) -> dict[str, Any]:
    prov = data.get("provenance")
    if prov is None:
        if required:
            raise SeedError(f"{path}: no `provenance` block (language, author, native_speaker_reviewed)")
        return {"author": "unknown (published StereoTales seeds)", "native_speaker_reviewed": None}
    missing = [k for k in ("language", "author", "native_speaker_reviewed") if k not in prov]
    if missing:
        raise SeedError(f"{path}: provenance lacks {missing}")
    return dict(prov)


def slug(text: str) -> str:
    """A key from a published value: lower case, parentheses dropped, words joined by '_'."""
    text = re.sub(r"\(.*?\)", " ", str(text).lower())
    return re.sub(r"[^0-9a-z]+", "_", text).strip("_") or "value"


def _dimensions(path: Path, data: dict[str, Any]) -> dict[str, Dimension]:
    if "dimensions" in data:  # biasatlas schema
        out = {}
        for dkey, spec in (data["dimensions"] or {}).items():
            if not isinstance(spec, dict) or not isinstance(spec.get("values"), dict):
                raise SeedError(f"{path}: dimension {dkey!r} needs `label` and a `values` mapping")
            values = []
            for vkey, v in spec["values"].items():
                if not isinstance(v, dict) or "label" not in v:
                    raise SeedError(f"{path}: value {dkey}.{vkey} needs a `label`")
                if vkey == UNKNOWN:
                    raise SeedError(f"{path}: {dkey}.unknown is implicit; do not list it")
                values.append(Value(str(vkey), str(v["label"]), v.get("prompt")))
            aspect = spec.get("aspect")
            out[str(dkey)] = Dimension(str(dkey), str(spec.get("label", dkey)), tuple(values),
                                       str(aspect) if aspect else None)
        return out
    # published layout: {dimension: {values: [...], template_choices: [... | null]}}
    out = {}
    for dkey, spec in data.items():
        if dkey == "provenance":
            continue
        if not isinstance(spec, dict) or not isinstance(spec.get("values"), list):
            raise SeedError(f"{path}: dimension {dkey!r} has no `values` list")
        choices = spec.get("template_choices") or [None] * len(spec["values"])
        published = tuple(Value(slug(v), str(v), c) for v, c in zip(spec["values"], choices, strict=False))
        out[str(dkey)] = Dimension(str(dkey), str(dkey).replace("_", " "), published)
    return out


def _scenarios(path: Path, data: dict[str, Any]) -> tuple[Scenario, ...]:
    if "scenarios" in data:
        items = data["scenarios"] or []
        bad = [i for i, s in enumerate(items) if not isinstance(s, dict) or {"key", "group", "text"} - set(s)]
        if bad:
            raise SeedError(f"{path}: scenarios {bad} need `key`, `group` and `text`")
        return tuple(Scenario(str(s["key"]), str(s["group"]), str(s["text"])) for s in items)
    out = []
    for group, texts in data.items():
        if group == "provenance":
            continue
        for text in texts or []:
            out.append(Scenario(slug(text), str(group), str(text)))
    return tuple(out)


def _load_raw(root: Path, language: str, strict: bool) -> Seeds:
    a_path = _file(root, "attributes", "attributes", language)
    s_path = _file(root, "scenarios", "scenario", language)
    p_path = _file(root, "prompts_template", "prompts", language)
    a_data, s_data, p_data = (_read_yaml(p) or {} for p in (a_path, s_path, p_path))
    for path, data in ((a_path, a_data), (s_path, s_data), (p_path, p_data)):
        if not isinstance(data, dict):
            raise SeedError(f"{path}: expected a mapping at the top level")
    provenance = {
        "attributes": _provenance(a_path, a_data, strict),
        "scenarios": _provenance(s_path, s_data, strict),
        "prompts": _provenance(p_path, p_data, strict),
    }
    story = p_data.get("story") or p_data.get("scenario_based")
    if not story:
        raise SeedError(f"{p_path}: no `story` template")
    story = str(story).replace("{context}", "{scenario}").replace("{character}", "{protagonist}")
    # the bundled prompts name every aspect of the profile (the published prompt names 13, not all 19)
    for placeholder in ("{scenario}", "{protagonist}", *(("{aspects}",) if strict else ())):
        if placeholder not in story:
            raise SeedError(f"{p_path}: the story template lacks {placeholder}")
    return Seeds(
        language=language,
        dimensions=_dimensions(a_path, a_data),
        scenarios=_scenarios(s_path, s_data),
        story_template=story,
        extraction_template=str(p_data.get("extraction") or ""),
        refusal_markers=tuple(str(m).lower() for m in p_data.get("refusal_markers") or ()),
        provenance=provenance,
        aspect_separator=str(p_data.get("aspect_separator") or ", "),
    )


def _check_against(seeds: Seeds, reference: Seeds) -> None:
    """Keys must match the reference language exactly; every difference is named."""
    problems = []
    if set(seeds.dimensions) != set(reference.dimensions):
        problems.append(
            f"dimensions missing {sorted(set(reference.dimensions) - set(seeds.dimensions))}, "
            f"extra {sorted(set(seeds.dimensions) - set(reference.dimensions))}"
        )
    for dkey, ref in reference.dimensions.items():
        dim = seeds.dimensions.get(dkey)
        if dim is None:
            continue
        if set(dim.keys) != set(ref.keys):
            problems.append(
                f"{dkey}: values missing {sorted(set(ref.keys) - set(dim.keys))}, "
                f"extra {sorted(set(dim.keys) - set(ref.keys))}"
            )
        prompted = {v.key for v in dim.values if v.prompt}
        ref_prompted = {v.key for v in ref.values if v.prompt}
        if prompted != ref_prompted:
            problems.append(f"{dkey}: prompted values {sorted(prompted)} differ from {sorted(ref_prompted)}")
    keys = {s.key for s in seeds.scenarios}
    ref_keys = {s.key for s in reference.scenarios}
    if keys != ref_keys:
        problems.append(f"scenarios missing {sorted(ref_keys - keys)}, extra {sorted(keys - ref_keys)}")
    if problems:
        raise SeedError(f"seeds for {seeds.language!r} do not match the English keys: " + "; ".join(problems))


@lru_cache(maxsize=32)
def load_seeds(language: str = "en", root: str | None = None) -> Seeds:
    """The validated seeds of ``language`` (bundled by default, or a seeds folder ``root``).

    Bundled seeds must carry provenance and match the English keys; a foreign folder is read
    leniently (published layouts have no provenance block).
    """
    bundled = root is None
    base = seeds_root() if root is None else Path(root)
    seeds = _load_raw(base, language, strict=bundled)
    if bundled:
        if language != "en":
            english = load_seeds("en")
            _check_against(seeds, english)
            if not seeds.extraction_template:
                seeds = _with_extraction(seeds, english.extraction_template)
        if not seeds.extraction_template:
            raise SeedError(f"seeds for {language!r}: no extraction prompt")
    return seeds


def _with_extraction(seeds: Seeds, template: str) -> Seeds:
    from dataclasses import replace

    return replace(seeds, extraction_template=template)
