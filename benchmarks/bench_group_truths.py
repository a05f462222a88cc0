"""Planted truths of the contact group disparity through the CLI path, 200 simulated studies per scenario.

A planted group of 10 (Icelandic nationality, every scale and both actions) refused 10 points more often, no
group planted, and every group 15 points more biased, at the size `biasatlas power contact --disparity 10
--base-rate 0.5` gives 80% power: how often the planted group is the headline, and how often any other group
is flagged (the simulation: ``tests/helpers/planted_truths.py``; the figures: docs/methods.md, "Group
disparity: the default balanced draw, power of the headline and planted truths").

    PYTHONPATH=src .venv/bin/python benchmarks/bench_group_truths.py --studies 200 --json truths.json
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "helpers"))

from planted_truths import main

if __name__ == "__main__":
    main()
