"""The paper's fine-tuning settings (001, "Social Contact Debiasing") as named, seeded splits.

A split is drawn in whole prompt sets (the no / positive / negative contact prompts of one
question stay together), balanced over the prompt scales of each pool, and is leak-free: no
test (or validation) prompt shares a prompt set or a prompt text with a training prompt. The
same setting, language, seed and sizes always give the same prompts.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from biasatlas.probes.contact import probe as contact
from biasatlas.probes.contact.data import PRINCIPLES, SCALES, SCENARIOS, descriptors_for, languages, template_sets
from biasatlas.records import Prompt, stable_hash

PARTS = ("train", "validation", "test")
# Paper 001, setting 6 lists these six as its (randomly chosen) training dimensions.
PAPER_TRAIN_AXES = ("ability", "age", "body_type", "characteristics", "cultural", "gender_and_sex")


class SplitError(ValueError):
    """A setting cannot be built (unknown name, a language without the data it needs...)."""


@dataclass(frozen=True)
class Setting:
    """One fine-tuning setting: which contact prompts train the model and which test it.

    ``train`` and ``test`` are ContactConfig filters; ``None`` for a filter means "all levels".
    ``shared_pool`` settings draw train, validation and test from one pool (setting 1).
    """

    name: str
    number: str
    title: str
    train: dict[str, Any]
    test: dict[str, Any]
    shared_pool: bool = False


def _scale_setting(number: str, scale: str) -> Setting:
    others = [s for s in SCALES if s != scale]
    return Setting(
        f"cross-scale-{scale}", number, f"Cross {scale} prompt-scale generalisation",
        train={"scales": [scale]}, test={"scales": others},
    )


SETTINGS: dict[str, Setting] = {
    s.name: s
    for s in (
        Setting("mixed", "1", "Cross-prompt-scale generalisation (mixed)", {}, {}, shared_pool=True),
        Setting("cross-dataset", "2", "Cross-dataset generalisation (template set a -> b)",
                train={"template_set": "a"}, test={"template_set": "b"}),
        _scale_setting("3a", "certainty"),
        _scale_setting("3b", "likelihood"),
        _scale_setting("3c", "frequency"),
        Setting("cross-scenario", "4", "Cross-scenario generalisation",
                train={"scenarios": list(SCENARIOS[:2])}, test={"scenarios": list(SCENARIOS[2:])}),
        Setting("cross-principle", "5", "Cross-principle generalisation",
                train={"principles": list(PRINCIPLES[:3])}, test={"principles": list(PRINCIPLES[3:])}),
        Setting("cross-dimension", "6", "Bias-dimension-specific fine-tuning (6 axes -> the other 7)",
                train={"axes": "train"}, test={"axes": "test"}),
    )
}


def setting_names() -> list[str]:
    return list(SETTINGS)


def get_setting(name: str) -> Setting:
    """The setting called ``name``; an unknown name is an error listing the valid ones."""
    if name not in SETTINGS:
        raise SplitError(f"unknown setting {name!r}; valid: {', '.join(SETTINGS)}")
    return SETTINGS[name]


#: a part of ``None`` prompts takes every prompt set of its pool (paper 001's settings 2 and 3a-c, ``--design paper``)
ALL_SETS = 10**12


@dataclass(frozen=True)
class SplitSizes:
    """Target sizes in prompts (paper 001 setting 1: about 10k train, 5k validation, 20k test); ``None``: the
    whole pool (what is left of it after the parts drawn before)."""

    train: int | None = 10_000
    validation: int | None = 5_000
    test: int | None = 20_000

    @classmethod
    def from_limit(cls, limit: int) -> SplitSizes:
        """``limit`` prompts in all, shared in the default 2 : 1 : 4 proportion."""
        if limit < 6:
            raise SplitError(f"--limit {limit} is too small: a split needs at least 6 prompts (2 prompt sets)")
        default = SIZES
        total = default[0] + default[1] + default[2]
        train = round(limit * default[0] / total)
        validation = round(limit * default[1] / total)
        return cls(train=max(train, 3), validation=validation, test=max(limit - train - validation, 3))

    @classmethod
    def for_evaluation(cls, limit: int, part: str = "test") -> SplitSizes:
        """Sizes whose evaluated ``part`` holds at most ``limit`` prompts (whole prompt sets of three),
        the other parts in the default 2 : 1 : 4 proportion to it (``--limit``: evaluation prompts)."""
        if part not in PARTS:
            raise SplitError(f"unknown split part {part!r}; valid: {', '.join(PARTS)}")
        if limit < 3:
            raise SplitError(f"--limit {limit} is too small: the evaluation needs at least one prompt set (3 prompts)")
        default = dict(zip(PARTS, SIZES, strict=True))
        sizes = {name: round(limit * default[name] / default[part]) for name in PARTS}
        sizes[part] = 3 * (limit // 3)
        return cls(**sizes)

    def sets(self) -> dict[str, int]:
        """Whole prompt sets (three prompts each) per part; train and test get at least one."""
        def whole(prompts: int | None) -> int:
            return ALL_SETS if prompts is None else round(prompts / 3)

        return {"train": max(1, whole(self.train)), "validation": whole(self.validation),
                "test": max(1, whole(self.test))}


SIZES = (10_000, 5_000, 20_000)  # the default parts (train, validation, test), in prompts


@dataclass
class Split:
    """Train / validation / test prompts of one setting, and how they were drawn."""

    setting: Setting
    language: str
    seed: int
    train: list[Prompt]
    validation: list[Prompt]
    test: list[Prompt]
    info: dict[str, Any] = field(default_factory=dict)

    def part(self, name: str) -> list[Prompt]:
        if name not in PARTS:
            raise SplitError(f"unknown split part {name!r}; valid: {', '.join(PARTS)}")
        return list(getattr(self, name))

    def fingerprint(self) -> str:
        """A hash of every part's prompt ids: two splits are the same split iff it is equal."""
        return stable_hash({p: sorted(x.id for x in self.part(p)) for p in PARTS}, length=16)

    def summary(self) -> dict[str, Any]:
        """Sizes and factor counts per part, JSON-ready."""
        parts: dict[str, Any] = {}
        for name in PARTS:
            prompts = self.part(name)
            parts[name] = {
                "prompts": len(prompts),
                "prompt_sets": len({p.meta["set_id"] for p in prompts}),
                **{f: dict(sorted(Counter(str(p.meta.get(f)) for p in prompts).items()))
                   for f in ("scale", "scenario", "principle", "axis", "template_set")},
            }
        return {**self.info, "fingerprint": self.fingerprint(), "parts": parts}


# ---- drawing --------------------------------------------------------------------------------
def _axes_split(language: str, seed: int) -> tuple[list[str], list[str]]:
    """Training and test axes of setting 6: the paper's six for English, else a seeded ~6/13 share."""
    axes = sorted({d.axis for d in descriptors_for(language)})
    if len(axes) < 2:
        raise SplitError(f"language {language!r} has only {len(axes)} axis; cross-dimension needs two or more")
    if all(a in axes for a in PAPER_TRAIN_AXES):
        train = list(PAPER_TRAIN_AXES)
    else:
        k = max(1, min(len(axes) - 1, round(len(axes) * 6 / 13)))
        train = sorted(random.Random(_derive(seed, language, "axes")).sample(axes, k))
    return train, [a for a in axes if a not in train]


def resolve_filter(filters: dict[str, Any], language: str, seed: int) -> dict[str, Any]:
    """A setting's filter as ContactConfig fields (all scales unless the filter names some)."""
    out = {"scales": list(SCALES), **filters}
    if out.get("axes") in ("train", "test"):
        train, test = _axes_split(language, seed)
        out["axes"] = train if out["axes"] == "train" else test
    if "template_set" in out:
        sets = template_sets(language)
        if out["template_set"] not in sets:
            raise SplitError(
                f"setting needs template set {out['template_set']!r} for language {language!r}, "
                f"which has only: {', '.join(sets)}"
            )
    return out


def _derive(seed: int, *parts: str) -> int:
    """A sub-seed for one draw, stable across runs and Python versions."""
    return int(stable_hash([seed, *parts], length=12), 16)


def _draw_sets(filters: dict[str, Any], language: str, n_sets: int, seed: int, tag: str) -> list[list[Prompt]]:
    """``n_sets`` prompt sets from a pool, spread evenly over its scales, each as its prompts."""
    scales = list(filters["scales"])
    order = scales[:]
    random.Random(_derive(seed, tag, "order")).shuffle(order)
    quota = {s: n_sets // len(scales) for s in scales}
    for s in order[: n_sets % len(scales)]:
        quota[s] += 1
    groups: list[list[Prompt]] = []
    for scale in scales:
        if quota[scale] == 0:
            continue
        config = contact.ContactConfig(
            languages=[language], **{**filters, "scales": [scale]}, seed=_derive(seed, tag, scale) % (2**31),
        )
        by_set: dict[str, list[Prompt]] = defaultdict(list)
        for p in contact.draw_prompt_sets(config, quota[scale]):
            by_set[p.meta["set_id"]].append(p)
        groups.extend(by_set.values())
    return groups


def _deal(groups: list[list[Prompt]], counts: Sequence[int], seed: int, tag: str) -> list[list[list[Prompt]]]:
    """Shuffle prompt sets (seeded) and cut them into consecutive parts of the given sizes.

    Each scale's sets are shuffled, then interleaved scale by scale, so every part keeps the balance.
    """
    by_scale: dict[str, list[list[Prompt]]] = defaultdict(list)
    for g in groups:
        by_scale[g[0].meta["scale"]].append(g)
    queues = []
    for scale in sorted(by_scale):
        items = sorted(by_scale[scale], key=lambda g: g[0].meta["set_id"])
        random.Random(_derive(seed, tag, scale)).shuffle(items)
        queues.append(items)
    interleaved = [q[i] for i in range(max(map(len, queues), default=0)) for q in queues if i < len(q)]
    parts: list[list[list[Prompt]]] = []
    start = 0
    for count in counts:
        parts.append(interleaved[start : start + count])
        start += count
    return parts


def _drop_leaks(held_out: list[list[Prompt]], seen: list[list[Prompt]]) -> tuple[list[list[Prompt]], int]:
    """Drop held-out prompt sets that share a set id or any prompt text with ``seen``."""
    texts = {p.text for g in seen for p in g}
    ids = {g[0].meta["set_id"] for g in seen}
    kept = [g for g in held_out if g[0].meta["set_id"] not in ids and not any(p.text in texts for p in g)]
    return kept, len(held_out) - len(kept)


def build_split(
    setting: str,
    *,
    language: str = "en",
    seed: int = 0,
    sizes: SplitSizes | None = None,
    limit: int | None = None,
) -> Split:
    """Draw the train / validation / test prompts of a setting (seeded, reproducible, leak-free).

    ``limit`` (total prompts) scales the default sizes down; ``sizes`` sets them directly.
    """
    spec = get_setting(setting)
    if language not in languages():
        raise SplitError(f"unknown language {language!r}; valid: {', '.join(languages())}")
    if sizes is None:
        sizes = SplitSizes.from_limit(limit) if limit is not None else SplitSizes()
    n = sizes.sets()
    train_filter = resolve_filter(spec.train, language, seed)
    test_filter = resolve_filter(spec.test, language, seed)
    if spec.shared_pool:
        pool = _draw_sets(train_filter, language, n["train"] + n["validation"] + n["test"], seed, "pool")
        train, validation, test = _deal(pool, [n["train"], n["validation"], n["test"]], seed, "deal")
    else:
        pool = _draw_sets(train_filter, language, n["train"] + n["validation"], seed, "train")
        train, validation = _deal(pool, [n["train"], n["validation"]], seed, "deal")
        test = _draw_sets(test_filter, language, n["test"], seed, "test")
    validation, dropped_val = _drop_leaks(validation, train)
    test, dropped_test = _drop_leaks(test, train + validation)
    if not train or not test:
        raise SplitError(f"setting {setting!r} gave an empty {'train' if not train else 'test'} part")
    info = {
        "setting": spec.name,
        "number": spec.number,
        "title": spec.title,
        "language": language,
        "seed": seed,
        "requested_prompts": {"train": sizes.train, "validation": sizes.validation, "test": sizes.test},
        "train_filter": train_filter,
        "test_filter": test_filter,
        "dropped_for_overlap": {"validation": dropped_val, "test": dropped_test},
    }
    flat = [[p for g in part for p in g] for part in (train, validation, test)]
    return Split(spec, language, seed, flat[0], flat[1], flat[2], info)
