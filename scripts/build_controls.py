#!/usr/bin/env python
"""Rebuild the positive-control adapters in src/biasatlas/data/controls/ (fixed seeds), measure them, write cards.

    PYTHONPATH=src .venv/bin/python scripts/build_controls.py [--only contact|stories] [--study build/controls]

Each control: train a LoRA adapter of the embedded model on the probe's own templates with a planted
bias (biasatlas.controls.<probe>), measure base + adapter and the base model on held-out prompts
through the probe, write control.json and README.md beside the adapter. Prints the time each step took.
Torch runs on one thread unless OMP_NUM_THREADS says otherwise: on a shared 2-core machine two threads
were five times slower than one.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")


def power(card: dict, study: Path, figure: Path, out: Path) -> None:
    """Power curves from the stored answers (no model asked): control adapter and base model."""
    import json

    from biasatlas.controls.figure import plot_power
    from biasatlas.controls.measure import contact_outcomes
    from biasatlas.controls.power import power_curve

    planted = card["planted"]["groups"]
    sizes = [1, 2, 3, 4, 6, 8]
    answers = {role: contact_outcomes(study, card["measurement"][role]["backend_id"]) for role in ("adapter", "base")}
    # the analytic MDE uses the base model's spread: the planted answers all flip (spread 0, MDE undefined)
    curves = {role: power_curve(answers[role], planted, sizes, noise=answers["base"]) for role in answers}
    effects = {lang: f["effect"] for lang, f in card["measured_effect"].items()}
    plot_power(curves["adapter"], curves["base"], effects, figure)
    (out / "power.json").write_text(json.dumps(curves, indent=2) + "\n", encoding="utf-8")
    for row in curves["adapter"]:
        print(f"  power {row['language']} k={row['prompt_sets']}: {row['detection_rate']:.2f} "
              f"(MDE {row['analytic_mde']:.3f})")


def build_stories(args: argparse.Namespace) -> None:
    """The stories control: train, measure adapter and base model through generate -> extract -> mine, card."""
    from biasatlas.controls import build, stories_build
    from biasatlas.controls.registry import adapter_dir

    out, study = adapter_dir("stories"), Path(args.study) / "stories"
    started = time.perf_counter()
    if not args.skip_training:
        if out.exists():
            shutil.rmtree(out)
        if study.exists():
            shutil.rmtree(study)  # stories of an older adapter would be reused under the same id
        stories_build.train_stories(out)
        (out / "train.jsonl").unlink(missing_ok=True)  # regenerated from the seeds; kept out of the wheel
        print(f"stories: trained in {time.perf_counter() - started:.0f} s", flush=True)
    measured = stories_build.measure_stories(out, study)
    card = stories_build.stories_card(build.training_manifest(out), measured)
    build.write_card(out, card, stories_build.stories_markdown(card))
    size = sum(f.stat().st_size for f in out.iterdir())
    print(f"stories: measured; adapter directory {size / 1e6:.2f} MB; total {time.perf_counter() - started:.0f} s")
    for role in ("adapter", "base"):
        v = measured[role]["verdict"]
        print(f"  {role}: arts {v['count']} of {v['known']}, lift {v['lift']}, found {v['detected']}, "
              f"false flags {v['false_flags']} ({measured[role]['seconds']} s)")


def main() -> int:
    from biasatlas.controls import build, cards
    from biasatlas.controls.registry import adapter_dir

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["contact", "stories"], action="append", help="build only these controls")
    parser.add_argument("--study", default="build/controls", help="study directory of the measurements")
    parser.add_argument("--cells", type=int, default=build.CARD_CELLS, help="held-out cells per language")
    parser.add_argument("--skip-training", action="store_true", help="measure the shipped adapters again")
    parser.add_argument("--power", default="docs/images/validation-power.png",
                        help="where to draw the power curves ('' skips them)")
    args = parser.parse_args()
    wanted = args.only or ["contact", "stories"]
    study = Path(args.study)
    for name in wanted:
        if name == "stories":
            build_stories(args)
            continue
        out = adapter_dir(name)
        started = time.perf_counter()
        if not args.skip_training:
            if out.exists():
                shutil.rmtree(out)
            if study.exists():
                shutil.rmtree(study)  # answers of an older adapter would be reused under the same id
            build.train_contact(out)
            (out / "train.jsonl").unlink(missing_ok=True)  # regenerated from the templates; kept out of the wheel
            print(f"{name}: trained in {time.perf_counter() - started:.0f} s", flush=True)
        training = build.training_manifest(out)
        measured = build.measure_contact(out, study, cells=args.cells)
        card = build.contact_card(training, measured)
        build.write_card(out, card, cards.contact_markdown(card))
        sizes = sum(f.stat().st_size for f in out.iterdir())
        print(f"{name}: measured; adapter directory {sizes / 1e6:.2f} MB; total {time.perf_counter() - started:.0f} s")
        for v in measured["adapter"]["verdicts"]:
            print(f"  {v['language']}: planted {v['planted']}, found {v['detected']}, effect "
                  f"{v['found'] and v['found']['effect']}, false flags {v['false_flags']}")
        if args.power:
            power(card, study, Path(args.power), out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
