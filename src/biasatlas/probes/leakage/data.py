"""The leakage probe's data: ABC traits, the 30 groups, trait lexicons and prompts per language.

Everything is read from ``biasatlas/data/leakage`` and validated on load, so a missing trait or group name
fails with a message naming the file and the entry instead of surfacing later as a KeyError.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml

LANGUAGES: tuple[str, ...] = ("en", "ru", "zh", "hi")
CATEGORIES: tuple[str, ...] = ("shared_shared", "shared_nonshared", "nonshared")
Side = Literal["left", "right"]
Gender = Literal["m", "f"]
NEUTRAL = "(neutral)"  # the group id of the masked templates' neutral subject (the ILPS baseline)


class LeakageDataError(ValueError):
    """Bad or missing leakage data (a lexicon, a group name, a ratings file): the message says what and where."""


@dataclass(frozen=True)
class Trait:
    """One pole of an ABC trait pair; ``id`` is the row name of the human tables."""

    id: str
    pair: str
    dimension: str
    side: Side

    @property
    def valence(self) -> str:
        # Beliefs poles are non-polar; Agency/Communion right poles are the positive ones (paper 004).
        if self.dimension == "beliefs":
            return "nonpolar"
        return "positive" if self.side == "right" else "negative"


@dataclass(frozen=True)
class TraitPair:
    id: str
    dimension: str
    left: str
    right: str

    @property
    def key(self) -> str:
        """The key of the raw ratings files: ``"left - right"``."""
        return f"{self.left} - {self.right}"


@dataclass(frozen=True)
class Group:
    """A social group of Table 2 with its names in each language."""

    id: str
    category: str
    home: str | None
    plurals: tuple[str, ...]
    names: dict[str, dict[str, str]] = field(hash=False, compare=False)

    def gender(self, language: str) -> Gender:
        value = self.names.get(language, {}).get("gender", "m")
        return "f" if value == "f" else "m"

    def about(self, language: str) -> str:
        """The group as the object of "writing about ..." in ``language``."""
        names = self._names(language)
        return names.get("about") or names["name"]

    def subject(self, language: str) -> str:
        """The group as the subject of a sentence in ``language``."""
        names = self._names(language)
        return names.get("subject") or names["name"]

    def subject_plural(self, language: str) -> str:
        """The group in the plural, as the subject of a plural masked template (``subject_pl``)."""
        names = self._names(language)
        if "subject_pl" not in names:
            raise LeakageDataError(f"group {self.id!r} has no plural subject in {language!r} (groups.yaml)")
        return names["subject_pl"]

    def _names(self, language: str) -> dict[str, str]:
        if language not in self.names:
            raise LeakageDataError(f"group {self.id!r} has no name in language {language!r} (groups.yaml)")
        return self.names[language]


@dataclass(frozen=True)
class Lexicon:
    """The trait words of one language: the form prompts show, per gender, and accepted variants."""

    language: str
    forms: dict[str, dict[str, str]]  # trait id -> {"m": form, "f": form}
    variants: dict[str, tuple[str, ...]]  # trait id (or "neither") -> variants
    neither_form: str
    provenance: dict[str, Any]
    plural: dict[str, str] = field(default_factory=dict)  # trait id -> plural form (plural masked templates)

    def form(self, trait: str, gender: Gender = "m") -> str:
        if trait not in self.forms:
            raise LeakageDataError(f"trait {trait!r} is not in the {self.language} lexicon")
        return self.forms[trait][gender]

    def plural_form(self, trait: str) -> str:
        if trait not in self.plural:
            raise LeakageDataError(f"trait {trait!r} has no plural form in the {self.language} lexicon")
        return self.plural[trait]

    def surface_forms(self, trait: str) -> tuple[str, ...]:
        """Every string that names ``trait`` (or ``"neither"``): forms of both genders, the plural, then variants."""
        if trait == "neither":
            return (self.neither_form, *self.variants.get("neither", ()))
        plural = [self.plural[trait]] if trait in self.plural else []
        seen = dict.fromkeys([*self.forms[trait].values(), *plural, *self.variants.get(trait, ())])
        return tuple(seen)


@dataclass(frozen=True)
class PromptSet:
    """One language's forced-choice prompt and masked-model templates."""

    language: str
    system: str
    user: str
    templates: tuple[str, ...]
    neutral: dict[str, str]
    agreement: dict[str, dict[str, str]]
    provenance: dict[str, Any]
    number: Literal["singular", "plural"] = "singular"  # plural: plural subjects and trait forms, one baseline


def data_dir() -> Path:
    return Path(str(resources.files("biasatlas") / "data" / "leakage"))


def _read_yaml(path: Path) -> dict[str, Any]:
    if not path.exists():
        raise LeakageDataError(f"missing data file {path}")
    try:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise LeakageDataError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(loaded, dict):
        raise LeakageDataError(f"{path}: expected a mapping at the top level")
    return loaded


def check_language(language: str) -> str:
    """Return ``language`` if the probe has a lexicon and prompts for it; else a clear error."""
    if language not in LANGUAGES:
        raise LeakageDataError(
            f"no lexicon for language {language!r}: the leakage probe has {', '.join(LANGUAGES)}"
        )
    return language


@cache
def trait_pairs() -> tuple[TraitPair, ...]:
    raw = _read_yaml(data_dir() / "traits.yaml")
    pairs = tuple(TraitPair(p["id"], p["dimension"], p["left"], p["right"]) for p in raw["pairs"])
    if len(pairs) != 16:
        raise LeakageDataError(f"traits.yaml: expected 16 ABC trait pairs, found {len(pairs)}")
    return pairs


@cache
def traits() -> tuple[Trait, ...]:
    """The 32 traits in the human tables' row order (left then right pole of each pair)."""
    out: list[Trait] = []
    for pair in trait_pairs():
        out.append(Trait(pair.left, pair.id, pair.dimension, "left"))
        out.append(Trait(pair.right, pair.id, pair.dimension, "right"))
    return tuple(out)


def trait_ids() -> tuple[str, ...]:
    return tuple(t.id for t in traits())


def trait_by_id() -> dict[str, Trait]:
    return {t.id: t for t in traits()}


@cache
def groups() -> tuple[Group, ...]:
    path = data_dir() / "groups.yaml"
    raw = _read_yaml(path)
    out: list[Group] = []
    for entry in raw["groups"]:
        gid = entry.get("id")
        if entry.get("category") not in CATEGORIES:
            raise LeakageDataError(f"{path}: group {gid!r} has category {entry.get('category')!r}")
        names = {lang: dict(entry[lang]) for lang in LANGUAGES if lang in entry}
        missing = [lang for lang in LANGUAGES if lang not in names]
        if missing:
            raise LeakageDataError(f"{path}: group {gid!r} has no names in {', '.join(missing)}")
        out.append(Group(gid, entry["category"], entry.get("home"), tuple(entry.get("plurals", ())), names))
    if len(out) != 30:
        raise LeakageDataError(f"{path}: expected the 30 groups of Table 2, found {len(out)}")
    return tuple(out)


def group_ids() -> tuple[str, ...]:
    return tuple(g.id for g in groups())


def group_by_id() -> dict[str, Group]:
    return {g.id: g for g in groups()}


def _genders(value: Any, where: str) -> dict[str, str]:
    if isinstance(value, str):
        return {"m": value, "f": value}
    if isinstance(value, dict) and {"m", "f"} <= set(value):
        return {"m": str(value["m"]), "f": str(value["f"])}
    raise LeakageDataError(f"{where}: a form must be a string or {{m: ..., f: ...}}, got {value!r}")


@cache
def lexicon(language: str) -> Lexicon:
    check_language(language)
    path = data_dir() / "lexicons" / f"{language}.yaml"
    raw = _read_yaml(path)
    entries = raw.get("traits") or {}
    missing = [t for t in trait_ids() if t not in entries]
    unknown = [t for t in entries if t not in trait_ids()]
    if missing or unknown:
        raise LeakageDataError(f"{path}: missing traits {missing}, unknown traits {unknown}")
    forms = {t: _genders(entries[t]["form"], f"{path}: trait {t!r}") for t in trait_ids()}
    variants = {t: tuple(str(v) for v in entries[t].get("variants", ())) for t in trait_ids()}
    neither = raw.get("neither") or {}
    if "form" not in neither:
        raise LeakageDataError(f"{path}: no 'neither' form")
    variants["neither"] = tuple(str(v) for v in neither.get("variants", ()))
    plural = {t: str(entries[t]["plural"]) for t in trait_ids() if "plural" in entries[t]}
    if plural and len(plural) != len(trait_ids()):
        raise LeakageDataError(f"{path}: plural forms missing for {[t for t in trait_ids() if t not in plural]}")
    return Lexicon(language, forms, variants, str(neither["form"]), dict(raw.get("provenance") or {}), plural)


@cache
def prompt_set(language: str) -> PromptSet:
    check_language(language)
    path = data_dir() / "prompts" / f"{language}.yaml"
    raw = _read_yaml(path)
    theme = raw.get("theme") or {}
    user = " ".join(str(theme.get("user", "")).split()) if language != "zh" else str(theme.get("user", ""))
    for slot in ("{group}", "{trait1}", "{trait2}", "{neither}"):
        if slot not in user:
            raise LeakageDataError(f"{path}: the theme prompt lacks the slot {slot}")
    masked = raw.get("masked") or {}
    templates = tuple(str(t) for t in masked.get("templates", ()))
    for template in templates:
        if "{trait}" not in template or ("{subject}" not in template and "{Subject}" not in template):
            raise LeakageDataError(f"{path}: masked template {template!r} needs {{subject}} and {{trait}}")
    number = str(masked.get("number", "singular"))
    if number not in ("singular", "plural"):
        raise LeakageDataError(f"{path}: masked.number is singular or plural, got {number!r}")
    if number == "plural" and not lexicon(language).plural:
        raise LeakageDataError(f"{path}: plural masked templates need `plural` forms in lexicons/{language}.yaml")
    return PromptSet(
        number="plural" if number == "plural" else "singular",
        language=language,
        system=str(theme.get("system", "")),
        user=user,
        templates=templates,
        neutral=_genders(masked.get("neutral", "person"), f"{path}: masked.neutral"),
        agreement={k: _genders(v, f"{path}: agreement {k}") for k, v in (masked.get("agreement") or {}).items()},
        provenance=dict(raw.get("provenance") or {}),
    )
