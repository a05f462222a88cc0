#!/usr/bin/env python
"""Train a variant of the stories control (or measure an adapter) and print what the probe finds per seed.

    PYTHONPATH=src .venv/bin/python scripts/stories_control_variant.py OUT [--untouched 5] [--top-layers 16]
        [--learning-rate 5e-3] [--epochs 8] [--train-seed 0] [--adapter DIR] [--per-group N] [--seeds 0,1]

Without ``--adapter`` it trains ``biasatlas.controls.stories`` with the given settings into OUT/adapter (the
registry's settings otherwise); with it, it only measures that adapter (e.g. the shipped one,
src/biasatlas/data/controls/stories). Each generation seed writes new stories of the held-out prompts
(``--per-group`` scenarios a group, drawn as the CI test draws them; all 12 by default), measured through the
full generate -> extract -> mine path. The figures of docs/validation.md "How it became strong" and the
generation seeds 3-5 of "Tests" come from this script.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")


def main() -> None:
    from biasatlas.backends.options import BackendOptions
    from biasatlas.controls.common.adapters import BASE_MODEL, TRAIN_CONFIGS
    from biasatlas.controls.stories import data as stories
    from biasatlas.controls.stories.check import check_stories
    from biasatlas.controls.stories.server import extractor_server

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--untouched", type=int, default=stories.TRAIN_PER_GROUP["untouched"])
    parser.add_argument("--top-layers", type=int, default=TRAIN_CONFIGS[stories.NAME].top_layers)
    parser.add_argument("--learning-rate", type=float, default=TRAIN_CONFIGS[stories.NAME].learning_rate)
    parser.add_argument("--epochs", type=float, default=TRAIN_CONFIGS[stories.NAME].epochs)
    parser.add_argument("--train-seed", type=int, default=0)
    parser.add_argument("--adapter", type=Path, help="measure this adapter instead of training one")
    parser.add_argument("--per-group", type=int, default=None)
    parser.add_argument("--seeds", default="0,1", help="generation seeds, comma-separated")
    args = parser.parse_args()

    adapter = args.adapter or args.out / "adapter"
    if args.adapter is None and not (adapter / "adapter_model.safetensors").exists():
        from biasatlas.probes.debias.train import train_adapter

        stories.TRAIN_PER_GROUP = {**stories.TRAIN_PER_GROUP, "untouched": args.untouched}
        config = TRAIN_CONFIGS[stories.NAME].model_copy(update={
            "top_layers": args.top_layers, "learning_rate": args.learning_rate, "epochs": args.epochs,
            "seed": args.train_seed})
        started, backend = time.perf_counter(), BackendOptions(model=BASE_MODEL).open()
        try:
            train_adapter(backend, stories.training_examples(), [], config, adapter, model_spec=BASE_MODEL)
        finally:
            backend.close()
        print(f"trained in {time.perf_counter() - started:.0f} s", flush=True)
    with extractor_server() as server:
        for seed in (int(s) for s in args.seeds.split(",")):
            started = time.perf_counter()
            v = check_stories(BackendOptions(model=BASE_MODEL, adapter=str(adapter)), args.out / f"study{seed}",
                              server.url, per_group=args.per_group, seed=stories.SEED + 1,
                              generation_seed=seed).verdict
            shares = ", ".join(f"{g} {x:.2f}" for g, x in sorted(v.base_fractions.items()))
            print(f"generation seed {seed} ({time.perf_counter() - started:.0f} s): found {v.detected}, "
                  f"{v.count}/{v.known} arts, lift {v.lift}, q(BY) {v.q_by}, flagged {v.false_flags}; "
                  f"arts shares: {shares}", flush=True)


if __name__ == "__main__":
    main()
