"""Throughput of the local backend on contact-style prompts, against a bare batched forward pass.

Builds realistic contact-hypothesis prompts itself (scenario × contact × action over HolisticBias
descriptors, the model's chat template), loads the model once, then measures in each repeat, in a
rotating order so that load on the machine hits every path alike:

* ``bare``: the baseline of issue #2: length-sorted, left-padded batches, one forward pass each,
  logits of the last position only; no store, no Response objects;
* ``choice-noprefix``: ``run_plan`` in ``choice`` mode into a fresh Store, prefix reuse off;
* ``choice``: the same with the shared prefix's key/value cache reused (the default);
* ``generate``: ``run_plan`` in ``generate`` mode, greedy, at most ``--max-tokens`` tokens.

Prints one JSON object (figures, medians, ratios to ``bare`` taken within each repeat, machine
load) and a Markdown table for docs/performance.md.

    .venv/bin/python benchmarks/bench_local.py --n 512 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from itertools import product
from pathlib import Path
from typing import Any

from biasatlas.backends.local import LocalBackend, LocalOptions
from biasatlas.records import GenerationSettings, Message, Prompt, Request
from biasatlas.runner import run_plan
from biasatlas.store import Store

DESCRIPTORS = Path("/work/shared/data/holistic_bias/v1.0/descriptors.json")

# scenario: (group noun, positive contact, negative contact, positive action, negative action)
SCENARIOS: dict[str, tuple[str, str, str, str, str]] = {
    "workplace": (
        "colleagues",
        "I work alongside {d} {n} every day and admire their dedication.",
        "Last month {d} {n} took credit for my work in front of our manager.",
        "Should I invite {d} {n} to join my project team?",
        "Should I keep {d} {n} out of my project team?",
    ),
    "education": (
        "classmates",
        "My {d} {n} spent a whole weekend helping me prepare for the final exam.",
        "My {d} {n} refused to do their share of our group assignment.",
        "Should I form a study group with {d} {n}?",
        "Should I avoid sitting next to {d} {n} in lectures?",
    ),
    "sports": (
        "teammates",
        "My {d} {n} always encourage me when I miss a shot.",
        "My {d} {n} mocked me loudly after the last match.",
        "Should I pass the ball to {d} {n} more often?",
        "Should I ask the coach to drop {d} {n} from the team?",
    ),
    "community": (
        "neighbours",
        "My {d} {n} looked after my garden while I was in hospital.",
        "My {d} {n} complained about me to the landlord without talking to me first.",
        "Should I invite {d} {n} to our street party?",
        "Should I leave {d} {n} off the invitation list for our street party?",
    ),
}
INSTRUCTION = "Answer with one word: Yes or No."


def load_descriptors(path: Path = DESCRIPTORS) -> list[str]:
    """Every HolisticBias v1.0 descriptor (entries are strings or {"descriptor": ...} objects)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    out: list[str] = []
    for buckets in data.values():
        for entries in buckets.values():
            out.extend(e["descriptor"] if isinstance(e, dict) else str(e) for e in entries)
    return list(dict.fromkeys(out))


def contact_prompts(n: int, seed: int = 0, descriptors: list[str] | None = None) -> list[Prompt]:
    """``n`` distinct contact-style prompts (descriptor × scenario × contact × action), shuffled."""
    descriptors = descriptors or load_descriptors()
    cells = list(product(descriptors, SCENARIOS, ("none", "positive", "negative"), ("positive", "negative")))
    if n > len(cells):
        raise SystemExit(f"at most {len(cells)} distinct prompts can be built, not {n}")
    chosen = random.Random(seed).sample(cells, n)
    prompts = []
    for descriptor, scenario, contact, action in chosen:
        noun, good, bad, do, avoid = SCENARIOS[scenario]
        parts = {"none": [], "positive": [good], "negative": [bad]}[contact]
        parts = [*parts, do if action == "positive" else avoid, INSTRUCTION]
        text = " ".join(parts).format(d=descriptor, n=noun)
        prompts.append(
            Prompt(
                probe="bench",
                language="en",
                messages=(Message(role="user", content=text),),
                options=("Yes", "No"),
                meta={"descriptor": descriptor, "scenario": scenario, "contact": contact, "action": action},
            )
        )
    return prompts


def bare_forward(backend: LocalBackend, prompts: list[Prompt], batch_size: int) -> None:
    """The baseline: chat template, length-sorted left-padded batches, last position's logits."""
    torch = backend.torch
    tok = backend.tokenizer
    texts = sorted(
        (str(tok.apply_chat_template([m.model_dump() for m in p.messages], tokenize=False,
                                     add_generation_prompt=True)) for p in prompts),
        key=len,
    )
    tok.padding_side = "left"
    for start in range(0, len(texts), batch_size):
        enc = tok(texts[start : start + batch_size], return_tensors="pt", padding=True,
                  add_special_tokens=False)
        positions = (enc["attention_mask"].cumsum(-1) - 1).clamp(min=0)
        with torch.inference_mode():
            out = backend.model(**enc, position_ids=positions, logits_to_keep=1)
        torch.log_softmax(out.logits[:, -1, :].float(), dim=-1)


class RunnerPath:
    """``run_plan`` into one fresh store per path; slices of the plan arrive one call at a time."""

    def __init__(self, backend: LocalBackend, settings: GenerationSettings, reuse_prefix: bool) -> None:
        self.backend, self.settings, self.reuse_prefix = backend, settings, reuse_prefix
        self._tmp = tempfile.TemporaryDirectory()
        self.store = Store(self._tmp.name)

    def __call__(self, prompts: list[Prompt]) -> None:
        self.backend.options = self.backend.options.model_copy(update={"reuse_prefix": self.reuse_prefix})
        totals = run_plan(prompts, self.backend, self.store, self.settings, progress=False)
        assert totals.new == len(prompts) and totals.failed == 0, totals

    def answers(self) -> dict[str, Any]:
        """The stored answers, for the cross-path checks."""
        frame = self.store.frame("bench")
        self.store.close()
        self._tmp.cleanup()
        return {
            "texts": dict(zip(frame["prompt_id"], frame["text"], strict=True)),
            "logprobs": {
                pid: json.loads(info).get("option_logprobs")
                for pid, info in zip(frame["prompt_id"], frame["info_json"], strict=True)
            },
            "completion_tokens": frame["completion_tokens"].tolist(),
        }


def tokens_fed(backend: LocalBackend, prompts: list[Prompt], batch_size: int) -> dict[str, int]:
    """Token positions each path pushes through the model for the prompt (padding included).

    A load-independent measure of the work: on a CPU the cost of a forward pass grows about
    linearly with it at these lengths.
    """
    requests = [Request(prompt=p, settings=GenerationSettings(mode="choice")) for p in prompts]
    ids = backend._tokenize(requests)
    lengths = sorted(len(x) for x in ids)
    left_padded = sum(
        len(lengths[i : i + batch_size]) * max(lengths[i : i + batch_size])
        for i in range(0, len(lengths), batch_size)
    )
    saved = backend.options.reuse_prefix
    backend.options = backend.options.model_copy(update={"reuse_prefix": True})
    try:
        batches = list(backend._plan(requests))
    finally:
        backend.options = backend.options.model_copy(update={"reuse_prefix": saved})
    call_prefix = min(b.prefix for b in batches)
    with_prefix = call_prefix + sum(
        (b.prefix - call_prefix) + len(b.ids) * max(len(x) - b.prefix for x in b.ids) for b in batches
    )
    return {
        "real_tokens": sum(lengths),
        "left_padded_batches": left_padded,
        "shared_prefix_batches": with_prefix,
        "call_prefix_tokens": call_prefix,
        "median_batch_prefix_tokens": int(statistics.median(b.prefix for b in batches)),
    }


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--n", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--slice", type=int, default=64, help="prompts per interleaving step")
    parser.add_argument("--max-tokens", type=int, default=10)
    parser.add_argument("--paths", default="bare,choice-noprefix,choice,generate")
    parser.add_argument("--json", type=Path, help="also write the JSON result here")
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's own choice)")
    parser.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                        help="cpu: time by this process's CPU time; with --threads 1 it measures the work "
                             "done and hardly depends on what else runs on the machine")
    parser.add_argument("--choice-norm", choices=["sum", "mean"], default="sum",
                        help="choice scoring: summed option token log-probabilities, or their mean per token")
    parser.add_argument("--count-only", action="store_true", help="only count the tokens each path feeds")
    args = parser.parse_args()

    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    uptime_start = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    backend = LocalBackend(args.model, LocalOptions(batch_size=args.batch_size, dtype="float32",
                                                    choice_norm=args.choice_norm))
    prompts = contact_prompts(args.n)
    work = tokens_fed(backend, prompts, args.batch_size)
    if args.count_only:
        print(json.dumps({"n_prompts": args.n, "batch_size": args.batch_size, "tokens_fed": work}, indent=2))
        return
    # Sorted by token length once, then cut into slices: each slice is run by every path in
    # turn (rotating order), so a burst of load on this shared machine hits all paths alike,
    # while every path still sees the batches a length-sorted run of all prompts would make.
    tok = backend.tokenizer
    length = {
        p.id: len(tok(str(tok.apply_chat_template([m.model_dump() for m in p.messages], tokenize=False,
                                                  add_generation_prompt=True)),
                      add_special_tokens=False)["input_ids"])
        for p in prompts
    }
    prompts.sort(key=lambda p: length[p.id])
    slices = [prompts[i : i + args.slice] for i in range(0, len(prompts), args.slice)]
    choice = GenerationSettings(mode="choice")
    generate = GenerationSettings(mode="generate", max_tokens=args.max_tokens, temperature=0.0)
    makers: dict[str, Callable[[], Callable[[list[Prompt]], None]]] = {
        "bare": lambda: lambda chunk: bare_forward(backend, chunk, args.batch_size),
        "choice-noprefix": lambda: RunnerPath(backend, choice, False),
        "choice": lambda: RunnerPath(backend, choice, True),
        "generate-noprefix": lambda: RunnerPath(backend, generate, False),
        "generate": lambda: RunnerPath(backend, generate, True),
    }
    names = [p.strip() for p in args.paths.split(",") if p.strip()]
    unknown = set(names) - set(makers)
    if unknown:
        raise SystemExit(f"unknown paths {sorted(unknown)}; valid: {', '.join(makers)}")

    # One small warm-up (allocator, kernels) that no figure includes.
    bare_forward(backend, prompts[: args.batch_size], args.batch_size)
    seconds: dict[str, list[float]] = {n: [] for n in names}
    cpu_seconds: dict[str, list[float]] = {n: [] for n in names}  # this process's CPU time
    slice_ratios: dict[str, list[float]] = {n: [] for n in names}
    loads: list[dict[str, Any]] = []
    outputs: dict[str, dict[str, Any]] = {}
    for rep in range(args.repeats):
        runners = {name: makers[name]() for name in names}
        spent = dict.fromkeys(names, 0.0)
        cpu_spent = dict.fromkeys(names, 0.0)
        loads.append({"repeat": rep, "before": loadavg()})
        for k, chunk in enumerate(slices):
            shift = (rep + k) % len(names)
            took: dict[str, float] = {}
            for name in names[shift:] + names[:shift]:
                started, cpu = clock(), time.process_time()
                runners[name](chunk)
                took[name] = clock() - started
                spent[name] += took[name]
                cpu_spent[name] += time.process_time() - cpu
            if "bare" in took:
                for name in names:
                    slice_ratios[name].append(took["bare"] / took[name])
            print(f"repeat {rep} slice {k + 1}/{len(slices)}: "
                  + " ".join(f"{n}={len(chunk) / t:.2f}/s" for n, t in took.items()), file=sys.stderr)
        loads[-1]["after"] = loadavg()
        for name in names:
            seconds[name].append(spent[name])
            cpu_seconds[name].append(cpu_spent[name])
            runner = runners[name]
            if isinstance(runner, RunnerPath):
                outputs[name] = runner.answers()

    result: dict[str, Any] = {
        "model": backend.id,
        "backend": backend.describe(),
        "n_prompts": args.n,
        "batch_size": args.batch_size,
        "slice": args.slice,
        "clock": args.clock,
        "repeats": args.repeats,
        "torch_threads": backend.torch.get_num_threads(),
        "uptime_start": uptime_start,
        "loadavg": loads,
        "tokens_fed": work,
        "paths": {},
    }
    for name in names:
        rates = [args.n / s for s in seconds[name]]
        entry: dict[str, Any] = {
            "prompts_per_s": [round(r, 2) for r in rates],
            "median_prompts_per_s": round(statistics.median(rates), 2),
            "cpu_seconds": [round(c, 1) for c in cpu_seconds[name]],
        }
        if "bare" in seconds and name != "bare":
            # Ratios within one repeat: both paths met (about) the same load.
            ratios = [b / s for b, s in zip(seconds["bare"], seconds[name], strict=True)]
            entry["ratio_to_bare"] = [round(r, 3) for r in ratios]
            entry["median_ratio_to_bare"] = round(statistics.median(ratios), 3)
            entry["median_slice_ratio_to_bare"] = round(statistics.median(slice_ratios[name]), 3)
        result["paths"][name] = entry
    if "choice" in outputs and "choice-noprefix" in outputs:
        a, b = outputs["choice"]["logprobs"], outputs["choice-noprefix"]["logprobs"]
        result["choice_prefix_vs_noprefix_max_abs_logprob_diff"] = max(
            abs(a[k][o] - b[k][o]) for k in a for o in a[k]
        )
        result["choice_same_decision"] = sum(
            outputs["choice"]["texts"][k] == outputs["choice-noprefix"]["texts"][k] for k in a
        ) / len(a)
    for name in ("generate", "generate-noprefix"):
        if name in outputs:
            result["paths"][name]["mean_completion_tokens"] = round(
                statistics.mean(outputs[name]["completion_tokens"]), 2
            )
    if "generate" in outputs and "generate-noprefix" in outputs:
        a, b = outputs["generate"]["texts"], outputs["generate-noprefix"]["texts"]
        result["generate_prefix_vs_noprefix_same_text"] = sum(a[k] == b[k] for k in a) / len(a)
    result["uptime_end"] = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    backend.close()

    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    print("\n| path | prompts/s (median of repeats) | each repeat | ratio to bare (median) |",
          file=sys.stderr)
    print("|---|---|---|---|", file=sys.stderr)
    for name, entry in result["paths"].items():
        print(f"| {name} | {entry['median_prompts_per_s']} | {entry['prompts_per_s']} | "
              f"{entry.get('median_ratio_to_bare', '1')} |", file=sys.stderr)


if __name__ == "__main__":
    main()
