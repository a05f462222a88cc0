"""``--design paper`` for `biasatlas debias`: Social Contact Debiasing as paper 001 (Raj et al. 2024) ran it.

English, the contact prompts as the contact design asks them (the LLaMA-2 default system prompt first,
generated answers), one epoch, and each setting's split as the paper sizes it: setting 1 about 10k / 5k /
20k, setting 2 about 10k training prompts tested on the whole second template set, settings 3a-c trained
on every prompt set of one scale and tested on every set of the other two. What the paper leaves open
(settings 4-6's sizes, the tuning method) keeps ours, and the plan says so; so does what it cannot run here.
"""

from __future__ import annotations

from typing import Any

from biasatlas.probes.base import ProbeConfigError
from biasatlas.probes.contact.design import RAJ, cost_and_time
from biasatlas.probes.debias.splits import Split, SplitSizes

#: the paper's sizes of each setting (001, "Social Contact Debiasing"), None: every prompt set of the pool
PAPER_SIZES: dict[str, SplitSizes] = {
    "mixed": SplitSizes(10_000, 5_000, 20_000),
    "cross-dataset": SplitSizes(10_000, 5_000, None),
    **{f"cross-scale-{s}": SplitSizes(None, 0, None) for s in ("certainty", "likelihood", "frequency")},
}
#: how the paper states them
PAPER_WORDS: dict[str, dict[str, str]] = {
    "mixed": {"train": "about 10k", "validation": "about 5k", "test": "the remainder, 20k"},
    "cross-dataset": {"train": "about 10k", "validation": "not stated", "test": "the new dataset, 106,560 items"},
    **{f"cross-scale-{s}": {"train": "every prompt of the scale (36k)", "validation": "not stated",
                            "test": "every prompt of each other scale (36k each)"}
       for s in ("certainty", "likelihood", "frequency")},
}
_VALUES: dict[str, tuple[str, Any]] = {"languages": ("--lang", ["en"]), "epochs": ("--epochs", 1.0),
                                       "mode": ("--mode", "generate"), "max_tokens": ("--max-tokens", 10),
                                       "temperature": ("--temperature", 0.0)}
#: CPU figures of this machine (docs/performance.md, Debiasing): LoRA on all 30 layers of the embedded model
TRAIN_CPU_S = 1 / 0.075  # seconds a training example
NOT_HERE = [
    "the quality check: the paper's 100 WikiMovies questions at temperature 0.2 are not available offline; ours "
    "are our 105 general-knowledge questions, greedy, scored with ROUGE-L like the paper's (the closest we can run)",
    "BERTScore: not computed (its scoring model is not available offline); ROUGE-L alone",
    "the human fluency / relevance study (Table 5, Cohen's kappa): not run by `debias` itself; `debias-study sheet` "
    "draws the blinded sheet of QA answers for two annotators and `debias-study score` scores it (the answers are "
    "our QA set's, not WikiMovies')",
    "BBQ's pairwise bootstrap between settings (Table 6): computed by the summary over every model the study "
    "asked BBQ (`--bbq`); the paper's procedure is not stated, ours is a paired percentile bootstrap of items, "
    "Holm over the pairs",
    "tuning: LoRA rank 8 on q_proj, v_proj (ours; the paper says instruction tuning for 1 epoch, no method)",
]


def apply(values: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The config values with the paper's design set, one line per value; a value given otherwise is refused."""
    out = dict(values)
    said = [f"the paper: {RAJ}, Social Contact Debiasing"]
    for name, (option, value) in _VALUES.items():
        given = values.get(name)
        if given is not None and given != value and not (name == "epochs" and float(given) == value):
            shown = ",".join(given) if isinstance(given, list) else given
            raise ProbeConfigError(f"--design paper: {option} {shown} differs from the paper's design "
                                   f"({','.join(value) if isinstance(value, list) else value}); leave {option} "
                                   "out, or run without --design")
        out[name] = value
        said.append(f"{option} {','.join(value) if isinstance(value, list) else value}")
    setting = values.get("setting") or "mixed"
    sizes = PAPER_SIZES.get(setting)
    said.append(f"split of --setting {setting}: " + (_sizes(sizes) if sizes else
                                                     "the paper gives no sizes; ours, 10,000 / 5,000 / 20,000"))
    said.append("system prompt: the LLaMA-2 chat default")
    return out, said


def _sizes(sizes: SplitSizes) -> str:
    parts = zip(("train", "validation", "test"), (sizes.train, sizes.validation, sizes.test), strict=True)
    return ", ".join(f"{name} {'every prompt set of its pool' if n is None else f'{n:,} prompts'}"
                     for name, n in parts)


def paper_sizes(setting: str) -> SplitSizes | None:
    """The paper's split sizes of ``setting`` (None: the paper states none; ours apply)."""
    return PAPER_SIZES.get(setting)


def design_prompts(setting: str, seed: int = 0) -> dict[str, int]:
    """Prompts of each part at the paper's sizes (ours where it states none), counted on the design's prompt sets
    without writing them (a whole pool is up to 334,260 prompts)."""
    from biasatlas.probes.contact.plan import ContactConfig, set_specs
    from biasatlas.probes.debias.splits import SIZES, get_setting, resolve_filter

    spec = get_setting(setting)
    sizes = PAPER_SIZES.get(setting, SplitSizes(*SIZES))

    def pool(filters: dict[str, Any]) -> int:
        return 3 * len(set_specs(ContactConfig(languages=["en"], **resolve_filter(filters, "en", seed))))

    # a stated size is what a part asks of the pool (every pool holds over 20,000 prompts): count only whole pools
    train = pool(spec.train) if sizes.train is None else sizes.train
    validation = 0 if sizes.train is None else (sizes.validation or 0)
    test = pool(spec.test) if sizes.test is None else sizes.test
    return {"train": train, "validation": validation, "test": test}


def dress_split(split: Split) -> Split:
    """Every part's prompts as the paper asked them (the LLaMA-2 system prompt first)."""
    from biasatlas.probes.contact.design import dress

    return Split(split.setting, split.language, split.seed, dress(split.train), dress(split.validation),
                 dress(split.test), {**split.info, "design": "paper"})


def plan_block(plan: Any) -> dict[str, Any]:
    """The ``design`` entry of `debias --plan-only`: split sizes beside the paper's, what cannot be matched,
    and the cost and time (both evaluations, training)."""
    config = plan.config
    _, said = apply(config.model_dump(include={"languages", "setting", *_VALUES}))
    parts = {name: len(plan.split.part(name)) for name in ("train", "validation", "test")}
    words = PAPER_WORDS.get(config.setting, {p: "not stated" for p in parts})
    evaluation = plan.evaluation()
    both = [*evaluation, *evaluation]  # asked of the base model and of base + adapter
    whole = design_prompts(config.setting, config.seed)
    block: dict[str, Any] = {
        "name": "paper", "paper": RAJ, "set": said, "limited": config.limit is not None,
        "split": {name: {"asked_prompts": n, "design_prompts": whole[name], "paper": words[name]}
                  for name, n in parts.items()},
        "not_as_in_the_paper": [
            *(["--limit: the parts are a sample in our 2 : 1 : 4 proportion, not the paper's sizes"]
              if config.limit is not None else []),
            *([] if config.setting in PAPER_SIZES else
              [f"{config.setting}: the paper gives no sizes (\"similar to other settings\"); ours, 10k / 5k / 20k"]),
            *([f"setting 2's test part: every prompt set of our template set b, {whole['test']:,} prompts (every "
               "scale), where the paper tests its new dataset of 106,560 items (not available: ours is our own "
               "second template set)"] if config.setting == "cross-dataset" else []),
            "our prompt sets are 37,140 a scale (the paper's 36,000); the paper's units (\"samples\", \"items\") are "
            "read as prompts",
            *NOT_HERE,
        ],
    }
    block.update(cost_and_time(both, config.samples or 1, config.mode or "choice", config.max_tokens or 10))
    block["training_cpu_hours"] = round(len(plan.train_examples) * config.epochs * TRAIN_CPU_S / 3600, 2)
    return block
