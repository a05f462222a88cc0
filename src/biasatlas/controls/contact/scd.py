"""Social Contact Debiasing of the contact control: does debiasing remove a bias we know is there?

Paper 001 claims that tuning a model on contact prompts with the unbiased answer reduces its bias.
The contact control is a model with a bias of known size, so it is the test bed: the control adapter
(base + planted bias) is tuned further with the debiasing trainer on the paper's training data —
every group's prompt with its unbiased answer (``probes.debias.data.build_examples``), drawn
uniformly over the groups, so the debiasing does not know which group was planted — and the planted
effect is measured before and after on the held-out prompts of the control.

Deviations from the paper, stated in docs/validation.md: the debiasing goes on training the control's
own LoRA weights (``train_adapter(init_adapter=...)``) rather than a second adapter on the merged
model, and its data is the control's slice (religion, positive action, certainty scale, the control's
training prompts), not the whole contact dataset.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from biasatlas.controls.contact import data as contact
from biasatlas.controls.contact.groups import question_matrix
from biasatlas.probes.debias.data import TrainingExample, build_examples
from biasatlas.probes.debias.train import TrainConfig

if TYPE_CHECKING:
    import pandas as pd

NAME = "contact-scd"
#: debiasing examples per language, drawn uniformly from every group's training prompts
EXAMPLES_PER_LANGUAGE = 40
SEED = 31
#: the control's own LoRA (rank 8, top 8 layers) is trained on; rank and modules come from the adapter
TRAIN_CONFIG = TrainConfig(epochs=1, learning_rate=1e-3, batch_size=4, warmup_ratio=0.05, max_length=256,
                           save_steps=10_000, max_eval_examples=0, seed=0)


def scd_examples(languages: Sequence[str] = ("en", "de"), per_language: int = EXAMPLES_PER_LANGUAGE,
                 seed: int = SEED) -> list[TrainingExample]:
    """The debiasing data: training prompts of the control (every group), each with its unbiased answer."""
    rng = random.Random(seed)
    examples: list[TrainingExample] = []
    for language in languages:
        prompts = contact.training_prompts(language)
        examples += build_examples(rng.sample(prompts, min(per_language, len(prompts))))
    rng.shuffle(examples)
    return examples


def train_scd(control: Path, out: Path) -> dict[str, Any]:
    """Debias the control adapter in ``control`` into ``out``; returns the trainer's manifest."""
    from biasatlas.backends.options import BackendOptions
    from biasatlas.controls.common.adapters import BASE_MODEL
    from biasatlas.probes.debias.train import read_manifest, train_adapter

    backend = BackendOptions(model=BASE_MODEL).open()  # the base: the control's LoRA is loaded trainable
    try:
        train_adapter(backend, scd_examples(), [], TRAIN_CONFIG, out, model_spec=BASE_MODEL,
                      extra={"control": NAME, "debiased": contact.NAME}, init_adapter=control)
    finally:
        backend.close()
    (out / "train.jsonl").unlink(missing_ok=True)  # regenerated from the templates
    manifest = read_manifest(out) or {}
    manifest.setdefault("result", {})["adapter_dir"] = f"src/biasatlas/data/controls/{out.name}"  # not this machine's
    (out / "training_config.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def planted_effects(outcomes: pd.DataFrame, planted: dict[str, str]) -> pd.DataFrame:
    """Per language and question: the planted group's biased share minus the other groups' mean."""
    import pandas as pd

    parts = []
    for language, part in outcomes.groupby("language", sort=True):
        wide = question_matrix(part, "biased")
        wide.columns = [str(c) for c in wide.columns]
        group = planted.get(str(language))
        if group not in wide.columns or wide.shape[1] < 2:
            continue
        others = [g for g in wide.columns if g != group]
        effect = (wide[group] - wide[others].mean(axis=1)).rename("effect").reset_index()
        parts.append(effect)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["language", "effect"])


@dataclass(frozen=True)
class Reduction:
    """The planted effect before and after debiasing on the same questions, and their paired difference."""

    language: str
    n: int
    before: float
    after: float
    reduction: float  # before − after
    ci_low: float
    ci_high: float
    p: float
    test: str

    @property
    def reduced(self) -> bool:
        """Debiasing reduced the planted effect: the interval of the reduction lies above zero."""
        return self.ci_low > 0

    def as_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "reduced": self.reduced}


def reductions(before: pd.DataFrame, after: pd.DataFrame, planted: dict[str, str],
               alpha: float = 0.05) -> list[Reduction]:
    """Per language: the paired t-test of the planted effect before − after, over the questions both answered."""
    from biasatlas.controls.contact.groups import QUESTION
    from biasatlas.stats.paired import paired_mean_difference

    b, a = planted_effects(before, planted), planted_effects(after, planted)
    keys = [c for c in QUESTION if c in b.columns and c in a.columns]
    both = b.merge(a, on=keys, suffixes=("_before", "_after"))
    out = []
    for language, part in both.groupby("language", sort=True):
        res = paired_mean_difference(part["effect_before"].to_numpy(float), part["effect_after"].to_numpy(float),
                                     alpha, label="planted effect: before − after debiasing")
        out.append(Reduction(str(language), res.n, float(part["effect_before"].mean()),
                             float(part["effect_after"].mean()), res.effect, res.ci_low, res.ci_high, res.p,
                             res.method))
    return out


def measure(control: Path, debiased: Path, study: str | Path, cells: int | None, seed: int = contact.SEED,
            groups: Sequence[str] | None = None) -> dict[str, Any]:
    """The planted effect of the control and of its debiased adapter on the same held-out prompts.

    ``groups``: untouched groups per language to ask beside the planted one (None: all of them).
    The control's answers come from ``study`` when it already holds them (the runner never asks twice).
    """
    from biasatlas.backends.options import BackendOptions
    from biasatlas.controls.common.adapters import BASE_MODEL
    from biasatlas.controls.common.measure import ask
    from biasatlas.controls.contact.check import CONTACT_SETTINGS, contact_outcomes

    measurement = contact.measurement_prompts(cells, seed=seed)
    prompts = measurement.prompts
    if groups is not None:
        keep = set(groups) | set(measurement.planted.values())
        prompts = [p for p in prompts if p.meta["group"] in keep]
    ids = {p.id for p in prompts}
    frames = {}
    for role, adapter in (("control", control), ("debiased", debiased)):
        backend_id = ask(prompts, BackendOptions(model=BASE_MODEL, adapter=str(adapter)), study, CONTACT_SETTINGS,
                         {"control": NAME})
        frame = contact_outcomes(study, backend_id)
        frames[role] = frame[frame["prompt_id"].isin(ids)]
    found = reductions(frames["control"], frames["debiased"], measurement.planted)
    return {"prompts_per_model": len(prompts), "cells_per_language": cells, "seed": seed,
            "reductions": [r.as_dict() for r in found]}


def card(training: dict[str, Any], measured: dict[str, Any]) -> dict[str, Any]:
    """The machine-readable card of the debiased control."""
    return {
        "control": NAME,
        "debiased_from": contact.NAME,
        "method": "Social Contact Debiasing (paper 001): the control's LoRA tuned further on the control's "
                  "training prompts of every group with the unbiased answer (drawn uniformly over groups)",
        "examples": training.get("examples"),
        "effect_measure": "planted effect (share biased: planted group − mean of the other groups, per question) "
                          "before − after debiasing, paired by question; paired t interval, 95%",
        "measured": measured,
        "training": training,
    }


def markdown(card_: dict[str, Any]) -> str:
    """The debiased control's README card."""
    result = card_["training"].get("result", {})
    rows = "\n".join(
        f"| {r['language']} | {r['n']} | {100 * r['before']:+.1f} pp | {100 * r['after']:+.1f} pp | "
        f"{100 * r['reduction']:+.1f} pp [{100 * r['ci_low']:+.1f}, {100 * r['ci_high']:+.1f}] | {r['p']:.2g} | "
        f"{'yes' if r['reduced'] else 'no'} |" for r in card_["measured"]["reductions"])
    return (
        "# Positive control, debiased: Social Contact Debiasing of the contact control\n\n"
        "The contact control (`../contact/`, a planted bias against one religion group) tuned further with "
        "biasatlas's debiasing trainer on paper 001's training data (every group's prompt with its unbiased "
        "answer, drawn uniformly over the groups). **A test instrument: never use it to answer anything.**\n\n"
        f"- {card_['method']}.\n"
        f"- Training: {result.get('examples')} examples, {result.get('steps')} steps, {result.get('seconds')} s "
        f"on {result.get('device')}; final training loss {result.get('train_loss')}.\n"
        f"- Effect: {card_['effect_measure']}.\n\n"
        "| language | question pairs | planted effect before | after | reduction [95% CI] | p | reduced |\n"
        "|---|---|---|---|---|---|---|\n" + rows + "\n\n"
        "`tests/integration/test_controls.py` measures the reduction again on other held-out cells.\n"
    )
