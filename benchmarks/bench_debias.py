"""Benchmark of Social Contact Debiasing on a local model: training and evaluation throughput.

Measures, on whatever device the local backend picks (CPU here, a GPU when there is one):
- model load time;
- evaluation: contact prompts scored in choice mode through the runner into a study (prompts/s);
- training: LoRA steps on debiasing examples (examples/s = examples × epochs / training seconds),
  for each LoRA layout asked (all layers, and the top N layers only);
- load of the tuned model with the adapter merged.

    .venv/bin/python benchmarks/bench_debias.py --examples 48 --eval-prompts 96 --json /tmp/bench_debias.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from biasatlas.backends.registry import make_backend
from biasatlas.probes.debias.data import build_examples
from biasatlas.probes.debias.splits import SplitSizes, build_split
from biasatlas.probes.debias.train import TrainConfig, train_adapter
from biasatlas.records import GenerationSettings
from biasatlas.runner import run_plan
from biasatlas.store import Store


def _load_average() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="smollm2")
    ap.add_argument("--examples", type=int, default=48, help="training examples (prompts)")
    ap.add_argument("--eval-prompts", type=int, default=96, help="evaluation prompts (choice mode)")
    ap.add_argument("--epochs", type=float, default=1.0)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--top-layers", type=int, nargs="*", default=[0, 8],
                    help="LoRA layouts to time: 0 = all layers, N = the top N layers")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)

    split = build_split("mixed", seed=0, sizes=SplitSizes(train=args.examples, validation=0, test=args.eval_prompts))
    examples = build_examples(split.train)
    out: dict[str, Any] = {
        "model": args.model,
        "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0], "platform": platform.platform()},
        "load_average_start": _load_average(),
        "examples": len(examples),
        "eval_prompts": len(split.test),
        "training": [],
    }
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        backend: Any = make_backend(args.model)
        out["load_s"] = round(time.perf_counter() - started, 2)
        out["device"] = str(getattr(backend, "device", "?"))
        with Store(Path(tmp) / "study") as store:
            totals = run_plan(split.test, backend, store, GenerationSettings(mode="choice"), progress=False)
        out["evaluation"] = {"prompts": totals.new, "seconds": totals.seconds,
                             "prompts_per_s": round(totals.new / totals.seconds, 3) if totals.seconds else None}
        for i, top in enumerate(args.top_layers):
            if i:  # LoRA layers were injected into the last model: start from clean weights
                backend.close()
                backend = make_backend(args.model)
            config = TrainConfig(epochs=args.epochs, batch_size=args.batch_size, top_layers=top or None,
                                 max_eval_examples=0)
            result = train_adapter(backend, examples, [], config, Path(tmp) / f"adapter-{top}",
                                   model_spec=args.model)
            out["training"].append({"top_layers": top or "all", "steps": result.steps, "seconds": result.seconds,
                                    "examples_per_s": result.examples_per_s, "train_loss": result.train_loss,
                                    "trainable_parameters": result.trainable_parameters})
        backend.close()
        started = time.perf_counter()
        tuned = make_backend(args.model, adapter=str(Path(tmp) / f"adapter-{args.top_layers[-1]}"))
        out["tuned_load_s"] = round(time.perf_counter() - started, 2)
        tuned.close()
    out["load_average_end"] = _load_average()
    text = json.dumps(out, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    return out


if __name__ == "__main__":
    main()
