"""The audit file: models, probes with their configs, languages, samples and seeds, validated.

Every problem is one :class:`AuditError` line naming the file, the key path (``probes.contact.axes``,
``models[1].dtype``) and, for an unknown key or value, the valid choices, before anything runs.
"""

from __future__ import annotations

import tomllib
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from biasatlas.backends.options import BackendOptions
from biasatlas.datafiles import MAX_YAML_BYTES, BoundedComposer, YamlLimitError, read_limited
from biasatlas.probes import PROBE_MODULES, load_probe
from biasatlas.records import scrub_text

#: the probes an audit runs (debias trains an adapter: it has its own command, `biasatlas debias`)
AUDIT_PROBES: tuple[str, ...] = tuple(name for name in PROBE_MODULES if name != "debias")
TOP_KEYS = ("title", "models", "probes", "languages", "samples", "seeds", "reader", "judge_model")
MODEL_KEYS = ("name", *BackendOptions.model_fields, "provider")
#: probe config fields an audit sets elsewhere: ``seed`` by the top-level ``seeds``, ``language`` is a
#: deprecated alias of ``languages``
NOT_PROBE_KEYS = ("seed", "language")
DTYPES = ("auto", "float32", "bfloat16", "float16")


class AuditError(ValueError):
    """An audit file that cannot be run; the message is one line for the user."""


@dataclass(frozen=True)
class ModelEntry:
    """One model of the audit: the name shown in the report and how to reach it."""

    name: str
    options: BackendOptions
    key: str  # its key path in the file, e.g. models[0]
    #: who makes the model (the stories analyses group models by it); None: inferred from the model's name
    provider: str | None = None


@dataclass(frozen=True)
class ProbeEntry:
    """One probe of the audit and the config values the file gives it (languages, seed and samples apart)."""

    name: str
    values: dict[str, Any]
    languages: list[str] | None
    samples: int | None

    @property
    def key(self) -> str:
        return f"probes.{self.name}"


@dataclass
class Audit:
    """A validated audit file."""

    path: Path
    models: list[ModelEntry]
    probes: list[ProbeEntry]
    languages: list[str] | None = None
    samples: int | None = None
    seeds: list[int] = field(default_factory=lambda: [0])
    title: str | None = None
    #: who reads the free-text answers of contact and samaritan (``--reader``); None: the study's recorded reading
    reader: str | None = None
    #: the judge of ``reader: judge|both`` with its own server options (``--judge-model``)
    judge: ModelEntry | None = None
    #: what the file asks that works but deserves a word (a judge that is also a model under test)
    notes: list[str] = field(default_factory=list)

    def error(self, key: str, message: str) -> AuditError:
        return AuditError(f"{self.path}: {key}: {message}")


class _UniqueKeyLoader(BoundedComposer, yaml.SafeLoader):
    """A YAML loader that refuses a key given twice in one mapping (YAML would keep the last silently), within
    the limits of :mod:`biasatlas.datafiles` (size, nesting, aliases)."""


def _mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"key {key!r} is given twice", key_node.start_mark
            )
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def read_file(path: Path) -> dict[str, Any]:
    """The file's content (TOML for ``.toml``, else YAML) as a mapping."""
    if not path.is_file():
        raise AuditError(f"{path}: no such audit file")
    try:
        text = read_limited(path, MAX_YAML_BYTES, "an audit file").decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise AuditError(f"{path}: cannot be read ({exc})") from None
    except ValueError as exc:  # larger than the limit
        raise AuditError(str(exc)) from None
    try:
        if path.suffix.lower() == ".toml":
            data: Any = tomllib.loads(text)
        else:
            data = yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader subclass, bounded
    except (tomllib.TOMLDecodeError, RecursionError) as exc:  # (tomllib recurses too: 50,000 deep)
        detail = f"nested too deep ({exc})" if isinstance(exc, RecursionError) else str(exc)
        raise AuditError(f"{path}: not valid TOML: {detail}") from None
    except YamlLimitError as exc:
        mark = exc.problem_mark
        raise AuditError(f"{path}: refused{f' at line {mark.line + 1}' if mark else ''}: {exc.problem}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise AuditError(f"{path}: not valid YAML{where}: {problem}") from None
    if not isinstance(data, dict):
        raise AuditError(f"{path}: expected a mapping with the keys {', '.join(TOP_KEYS)}")
    return data


def load_audit(path: str | Path) -> Audit:
    """Read and validate an audit file; an :class:`AuditError` (one line) for anything wrong in it."""
    path = Path(path)
    data = read_file(path)
    audit = Audit(path=path, models=[], probes=[])
    for key in data:
        if key not in TOP_KEYS:
            raise audit.error(str(key), f"unknown key; valid: {', '.join(TOP_KEYS)}")
    for key in ("models", "probes"):
        if not data.get(key):
            raise audit.error(key, "missing or empty: an audit needs at least one model and one probe")
    if data.get("title") is not None:
        audit.title = str(data["title"])
    audit.seeds = _seeds(audit, data.get("seeds", 0))
    audit.samples = _positive(audit, "samples", data.get("samples"))
    audit.probes = _probes(audit, data["probes"])
    audit.languages = _top_languages(audit, data.get("languages"))
    audit.models = _models(audit, data["models"])
    audit.reader, audit.judge = _reader(audit, data.get("reader"), data.get("judge_model"))
    return audit


# ---- top-level values ----------------------------------------------------------------------
def _positive(audit: Audit, key: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise audit.error(key, f"must be a whole number of at least 1 (got {value!r})")
    return value


def _seeds(audit: Audit, value: Any) -> list[int]:
    values = value if isinstance(value, list) else [value]
    if not values:
        raise audit.error("seeds", "give at least one seed")
    for i, seed in enumerate(values):
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise audit.error(f"seeds[{i}]", f"must be a whole number (got {seed!r})")
    if len(set(values)) < len(values):
        raise audit.error("seeds", f"a seed is given twice ({values})")
    return list(values)


def _language_list(audit: Audit, key: str, value: Any) -> list[str]:
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list) or not items:
        raise audit.error(key, f"expected a list of language codes (got {value!r})")
    languages = [str(item).strip() for item in items]
    if len(set(languages)) < len(languages):
        raise audit.error(key, f"a language is given twice ({languages})")
    return languages


def _top_languages(audit: Audit, value: Any) -> list[str] | None:
    """The audit's languages: each must be a language of at least one audited probe."""
    if value is None:
        return None
    languages = _language_list(audit, "languages", value)
    known = sorted({lang for p in audit.probes for lang in load_probe(p.name).languages})
    for i, lang in enumerate(languages):
        if lang not in known:
            raise audit.error(f"languages[{i}]", f"unknown language {lang!r}; valid: {', '.join(known)}")
    for entry in audit.probes:
        probe = load_probe(entry.name)
        if entry.languages is None and not set(languages) & set(probe.languages):
            raise audit.error(
                "languages",
                f"{entry.name} has none of {', '.join(languages)}; give {entry.key}.languages "
                f"(valid for {entry.name}: {', '.join(probe.languages)})",
            )
    return languages


# ---- models --------------------------------------------------------------------------------
def _models(audit: Audit, value: Any) -> list[ModelEntry]:
    if not isinstance(value, list):
        raise audit.error("models", "expected a list of models, each a mapping with 'model' and 'name'")
    models: list[ModelEntry] = []
    for i, raw in enumerate(value):
        models.append(_model(audit, f"models[{i}]", raw))
    names = [m.name for m in models]
    for i, name in enumerate(names):
        if names.index(name) != i:
            raise audit.error(f"models[{i}].name", f"{name!r} is the name of models[{names.index(name)}] too; "
                              "give each model its own name")
    return models


def _model(audit: Audit, key: str, raw: Any) -> ModelEntry:
    if isinstance(raw, str):
        raw = {"model": raw}
    if not isinstance(raw, dict):
        raise audit.error(key, f"expected a mapping with 'model' and 'name' (got {raw!r})")
    for option in raw:
        if option not in MODEL_KEYS:
            raise audit.error(f"{key}.{option}", f"unknown model option; valid: {', '.join(MODEL_KEYS)}")
    if not raw.get("model"):
        raise audit.error(f"{key}.model", "missing: the model spec (see `biasatlas models`)")
    values = {k: v for k, v in raw.items() if k not in ("name", "provider") and v is not None}
    if values.get("dtype") is not None and values["dtype"] not in DTYPES:
        raise audit.error(f"{key}.dtype", f"unknown dtype {values['dtype']!r}; valid: {', '.join(DTYPES)}")
    if "http" in values:
        values["http"] = _http(audit, f"{key}.http", values["http"])
    here = audit.path.parent
    if isinstance(values.get("adapter"), str):
        values["adapter"] = _relative(here, values["adapter"])
    if isinstance(values["model"], str) and values["model"].endswith(".gguf"):
        values["model"] = _relative(here, values["model"])
    try:
        options = BackendOptions(**values)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        if error["loc"] and error["type"] != "value_error":  # a value error says what it got; others are shown it
            message += f" (got {error.get('input')!r})"
        raise audit.error(f"{key}{where}", scrub_text(message)) from None  # a URL given may hold credentials
    name = raw.get("name")
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise audit.error(f"{key}.name", f"must be a non-empty text (got {name!r})")
    provider = raw.get("provider")
    if provider is not None and (not isinstance(provider, str) or not provider.strip()):
        raise audit.error(f"{key}.provider", f"must be a non-empty text (got {provider!r})")
    return ModelEntry(name=(name or options.model).strip(), options=options, key=key,
                      provider=provider.strip() if provider else None)


def _http(audit: Audit, key: str, value: Any) -> list[str]:
    """HTTP settings as NAME=VALUE items: from a mapping or a list; names and values checked."""
    from biasatlas.backends.openai_compat import SETTABLE, OpenAIOptions

    if isinstance(value, dict):
        pairs = [(str(k), v) for k, v in value.items()]
    elif isinstance(value, list):
        pairs = []
        for item in value:
            name, sep, text = str(item).partition("=")
            if not sep:
                raise audit.error(key, f"{item!r}: expected NAME=VALUE or a mapping; valid names: "
                                  f"{', '.join(SETTABLE)}")
            pairs.append((name.strip(), text.strip()))
    else:
        raise audit.error(key, f"expected a mapping of settings (got {value!r}); valid: {', '.join(SETTABLE)}")
    items: list[str] = []
    for name, setting in pairs:
        if name.replace("-", "_") not in SETTABLE:
            raise audit.error(f"{key}.{name}", f"unknown HTTP setting; valid: {', '.join(SETTABLE)}")
        text = str(setting).lower() if isinstance(setting, bool) else str(setting)
        items.append(f"{name.replace('-', '_')}={text}")
    try:
        OpenAIOptions.model_validate(dict(item.split("=", 1) for item in items))
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"])
        raise audit.error(f"{key}.{where}", f"{error['msg']} (got {error.get('input')!r})") from None
    return items


def _relative(here: Path, value: str) -> str:
    """A relative path is read from the audit file's folder."""
    path = Path(value).expanduser()
    return value if path.is_absolute() else str(here / path)


# ---- the reader ----------------------------------------------------------------------------
def _reader(audit: Audit, reader: Any, judge: Any) -> tuple[str | None, ModelEntry | None]:
    """``reader`` and ``judge_model`` as ``--reader`` and ``--judge-model`` take them: a judge reading needs its
    judge, the rules take none; the judge is a model spec or a mapping of model options (its own server)."""
    from biasatlas.readers import JUDGED_PROBES, READERS

    if reader is not None and reader not in READERS:
        raise audit.error("reader", f"unknown reader {reader!r}; valid: {', '.join(READERS)}")
    if judge is not None and reader not in ("judge", "both"):
        raise audit.error("judge_model", "is used by reader: judge or reader: both only")
    if reader in ("judge", "both"):
        if not judge:
            raise audit.error("judge_model", f"missing: reader: {reader} needs the model that reads the answers "
                              "(a model spec, or a mapping with model and its own base_url, api_key_env, http)")
        if not any(p.name in JUDGED_PROBES for p in audit.probes):
            raise audit.error("reader", f"a judge reads the answers of {', '.join(JUDGED_PROBES)}; the audit "
                              "runs neither")
    if not judge:
        return reader, None
    if isinstance(judge, dict) and "name" in judge:
        raise audit.error("judge_model.name", "the judge has no display name; valid: "
                          + ", ".join(k for k in MODEL_KEYS if k not in ("name", "provider")))
    from biasatlas.reading_step import judge_notes, same_model

    entry = _model(audit, "judge_model", judge)
    # as `run --judge-model` says them: where an HTTP judge is asked, and a judge that is a model under test
    audit.notes.extend(judge_notes(entry.options, [m.options for m in audit.models], "judge_model.base_url"))
    for model in audit.models:
        if same_model(entry.options, model.options):
            audit.notes.append(f"judge_model is {model.key} ({model.name}), a model under test: it reads its own "
                               "answers; a judge of another family reads them without its blind spots")
    return reader, entry


# ---- probes --------------------------------------------------------------------------------
def _probes(audit: Audit, value: Any) -> list[ProbeEntry]:
    if not isinstance(value, dict):
        raise audit.error("probes", "expected a mapping of probe name to its config, e.g. {contact: {limit: 30}}")
    entries = []
    for name, raw in value.items():
        key = f"probes.{name}"
        if name not in AUDIT_PROBES:
            raise audit.error(key, f"unknown probe; valid: {', '.join(AUDIT_PROBES)}")
        if raw is None:
            raw = {}
        if not isinstance(raw, dict):
            raise audit.error(key, f"expected a mapping of config keys (got {raw!r})")
        entries.append(_probe(audit, name, raw))
    return entries


def probe_keys(name: str) -> list[str]:
    """The config keys an audit file may give a probe."""
    return [k for k in load_probe(name).config_model.model_fields if k not in NOT_PROBE_KEYS]


def _probe(audit: Audit, name: str, raw: dict[str, Any]) -> ProbeEntry:
    probe = load_probe(name)
    model_fields = probe.config_model.model_fields
    valid = probe_keys(name)
    values: dict[str, Any] = {}
    for key, value in raw.items():
        where = f"probes.{name}.{key}"
        if key == "seed":
            raise audit.error(where, "give seeds at the top level (seeds: [0, 1]); valid here: " + ", ".join(valid))
        if key not in valid:
            raise audit.error(where, f"unknown config key of {name}; valid: {', '.join(valid)}")
        if value is None:
            continue
        annotation = model_fields[key].annotation
        if isinstance(value, str) and _accepts(annotation, list) and not _accepts(annotation, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if isinstance(value, str) and _accepts(annotation, Path):
            value = _relative(audit.path.parent, value)
        values[key] = value
    languages = None
    if "languages" in values:
        languages = _language_list(audit, f"probes.{name}.languages", values.pop("languages"))
        for i, lang in enumerate(languages):
            if lang not in probe.languages:
                raise audit.error(f"probes.{name}.languages[{i}]", f"{lang!r} is not a language of {name}; "
                                  f"valid: {', '.join(probe.languages)}")
    mode = values.get("mode")
    if mode is not None and mode not in probe.modes:
        raise audit.error(f"probes.{name}.mode", f"{mode!r} is not a mode of {name}; valid: {', '.join(probe.modes)}")
    samples = _positive(audit, f"probes.{name}.samples", values.pop("samples", None))
    return ProbeEntry(name=name, values=values, languages=languages, samples=samples)


def _accepts(annotation: Any, kind: type) -> bool:
    """Whether a field's type is ``kind``, a generic of it, or a union holding one (``list[str] | None``: list)."""
    if annotation is kind or typing.get_origin(annotation) is kind:
        return True
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return any(_accepts(arg, kind) for arg in typing.get_args(annotation))
    return False
