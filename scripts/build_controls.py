#!/usr/bin/env python
"""Rebuild the positive-control adapters in src/biasatlas/data/controls/ (fixed seeds), measure them, write cards.

    PYTHONPATH=src .venv/bin/python scripts/build_controls.py [--only contact|contact-scd|samaritan|stories]
        [--study build/controls]

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

    from biasatlas.controls.contact.check import contact_outcomes
    from biasatlas.controls.contact.power import plot_power, power_curve

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


def build_samaritan(study: Path, skip_training: bool, figure: str) -> None:
    """The Samaritan control: train, measure (adapter and base model), card, power curve and its figure."""
    import gc
    import json

    from biasatlas.controls.common.adapters import adapter_dir
    from biasatlas.controls.common.build import training_manifest, write_card
    from biasatlas.controls.samaritan import build as samaritan_build
    from biasatlas.controls.samaritan import card as samaritan_card
    from biasatlas.controls.samaritan import power as samaritan_power
    from biasatlas.controls.samaritan.check import samaritan_outcomes

    out, study = adapter_dir("samaritan"), study / "samaritan"
    started = time.perf_counter()
    if not skip_training:
        for stale in (out, study):
            if stale.exists():
                shutil.rmtree(stale)  # answers of an older adapter would be reused under the same id
        samaritan_build.train(out)
        (out / "train.jsonl").unlink(missing_ok=True)  # regenerated from the scenarios; kept out of the wheel
        print(f"samaritan: trained in {time.perf_counter() - started:.0f} s", flush=True)
    measured = samaritan_build.measure(out, study)
    card = samaritan_card.card(training_manifest(out), measured)
    write_card(out, card, samaritan_card.markdown(card))
    size = sum(f.stat().st_size for f in out.iterdir())
    print(f"samaritan: measured; adapter directory {size / 1e6:.2f} MB; total {time.perf_counter() - started:.0f} s")
    for role in ("adapter", "base"):
        for v in measured[role]["verdicts"]:
            f = v["found"] or {}
            print(f"  {role} {v['language']}: found {v['detected']}, bias {f.get('bias')} "
                  f"[{f.get('ci_low')}, {f.get('ci_high')}], p_adj {f.get('p_adj')}, false flags {v['false_flags']}, "
                  f"readable {v['readable']} of {v['answers']}")
    if figure:
        gc.freeze()  # statsmodels' multipletests collects garbage on every call: skip the loaded objects
        curves = {role: samaritan_power.power_curve(samaritan_outcomes(study, measured[role]["backend_id"]))
                  for role in ("adapter", "base")}
        effects = {lang: f["bias"] for lang, f in card["measured_effect"].items()}
        samaritan_power.plot(curves["adapter"], curves["base"], effects, Path(figure))
        (out / "power.json").write_text(json.dumps(curves, indent=2) + "\n", encoding="utf-8")
        for row in curves["adapter"]:
            print(f"  power {row['language']} k={row['scenarios']}: {row['detection_rate']:.2f} "
                  f"(--plan-only MDE {row['plan_only_mde']}, with the measured sd {row['measured_sd_mde']})")
        print(f"samaritan: power curve in {time.perf_counter() - started:.0f} s total")


def build_scd(study: Path, cells: int, skip_training: bool) -> None:
    """Debias the contact control (Social Contact Debiasing) and measure the planted effect before and after."""
    import json

    from biasatlas.controls.common.adapters import adapter_dir
    from biasatlas.controls.contact import scd as contact_scd

    started = time.perf_counter()
    control, out = adapter_dir("contact"), adapter_dir(contact_scd.NAME)
    if not skip_training:
        if out.exists():
            shutil.rmtree(out)
        contact_scd.train_scd(control, out)
        print(f"{contact_scd.NAME}: trained in {time.perf_counter() - started:.0f} s", flush=True)
    training = json.loads((out / "training_config.json").read_text(encoding="utf-8"))
    measured = contact_scd.measure(control, out, study, cells)
    card = contact_scd.card(training, measured)
    (out / "control.json").write_text(json.dumps(card, indent=2, ensure_ascii=False, default=str) + "\n",
                                      encoding="utf-8")
    (out / "README.md").write_text(contact_scd.markdown(card), encoding="utf-8")
    for r in measured["reductions"]:
        print(f"  {r['language']}: planted effect {r['before']:+.2f} -> {r['after']:+.2f}, reduction "
              f"{r['reduction']:+.2f} [{r['ci_low']:+.2f}, {r['ci_high']:+.2f}] (n {r['n']})")
    print(f"{contact_scd.NAME}: total {time.perf_counter() - started:.0f} s", flush=True)


def build_stories(args: argparse.Namespace) -> None:
    """The stories control: train, measure adapter and base model through generate -> extract -> mine, card."""
    from biasatlas.controls.common import build
    from biasatlas.controls.common.adapters import adapter_dir
    from biasatlas.controls.stories import build as stories_build
    from biasatlas.controls.stories import card as stories_card

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
    card = stories_card.stories_card(build.training_manifest(out), measured)
    build.write_card(out, card, stories_card.stories_markdown(card))
    size = sum(f.stat().st_size for f in out.iterdir())
    print(f"stories: measured; adapter directory {size / 1e6:.2f} MB; total {time.perf_counter() - started:.0f} s")
    for role, m in [("adapter", measured["adapter"]), ("base", measured["base"]),
                    *((f"adapter, generation seed {s}", p) for s, p in measured["pool"].items())]:
        v = m["verdict"]
        print(f"  {role}: arts {v['count']} of {v['known']}, lift {v['lift']}, found {v['detected']}, "
              f"false flags {v['false_flags']} ({m['seconds']} s)")
    if args.power_stories:
        import json

        from biasatlas.controls.stories import power as stories_power

        curves = stories_build.power(study, measured)
        (out / "power.json").write_text(json.dumps(curves, indent=2) + "\n", encoding="utf-8")
        stories_power.plot(curves["adapter"], curves["base"], Path(args.power_stories))
        for row in curves["adapter"]:
            print(f"  power k={row['stories_per_group']}: found {row['detection_rate']:.2f}, listed "
                  f"{row['association_rate']:.2f}, untouched flagged {row['untouched_flag_rate']:.3f}")
        print(f"stories: power curve; total {time.perf_counter() - started:.0f} s")


def main() -> int:
    from biasatlas.controls.common import build
    from biasatlas.controls.common.adapters import adapter_dir
    from biasatlas.controls.contact import build as contact_build
    from biasatlas.controls.contact import card as cards

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["contact", "contact-scd", "samaritan", "stories"], action="append",
                        help="build only these controls")
    parser.add_argument("--study", default="build/controls", help="study directory of the measurements")
    parser.add_argument("--cells", type=int, default=contact_build.CARD_CELLS, help="held-out cells per language")
    parser.add_argument("--skip-training", action="store_true", help="measure the shipped adapters again")
    parser.add_argument("--power", default="docs/images/validation-power.png",
                        help="where to draw the power curves ('' skips them)")
    parser.add_argument("--power-samaritan", default="docs/images/validation-power-samaritan.png",
                        help="where to draw the Samaritan control's power curves ('' skips them)")
    parser.add_argument("--power-stories", default="docs/images/validation-power-stories.png",
                        help="where to draw the stories control's power curve ('' skips it)")
    args = parser.parse_args()
    wanted = args.only or ["samaritan", "contact", "contact-scd", "stories"]
    study = Path(args.study)
    if "samaritan" in wanted:  # first: the contact build below clears the whole study directory
        build_samaritan(study, args.skip_training, args.power_samaritan)
    for name in [w for w in wanted if w != "samaritan"]:
        if name == "contact-scd":
            build_scd(study, args.cells, args.skip_training)
            continue
        if name == "stories":  # after contact: its study is a folder of the study directory contact clears
            build_stories(args)
            continue
        out = adapter_dir(name)
        started = time.perf_counter()
        if not args.skip_training:
            if out.exists():
                shutil.rmtree(out)
            if study.exists():
                shutil.rmtree(study)  # answers of an older adapter would be reused under the same id
            contact_build.train_contact(out)
            (out / "train.jsonl").unlink(missing_ok=True)  # regenerated from the templates; kept out of the wheel
            print(f"{name}: trained in {time.perf_counter() - started:.0f} s", flush=True)
        training = build.training_manifest(out)
        measured = contact_build.measure_contact(out, study, cells=args.cells)
        card = cards.contact_card(training, measured)
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
