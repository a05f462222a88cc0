"""Planted truths of the contact group disparity through the CLI path, many simulated studies at once.

The design is one the CLI runs: Icelandic nationality (10 groups), every scale and both actions. Its size
comes from ``biasatlas power contact --disparity 10 --base-rate 0.5`` (a fake model picks either option
alike: half its decisions are biased), its ``--limit`` from the same answer, and one study is run by
``biasatlas run contact`` with a planted fake model (``fake:NAME?biased=GROUP&rate=R``). That study's stored
answers are the template of every other: a simulated study asks the same prompts of another fake model (its
own name seeds its answers: one study each), whose answers replace the stored ones, and then goes the CLI's
own way from there: the probe's reading (``read.outcomes``), its group statistics (``disparity.statistics``:
questions, the tests, Holm, the headline row). Only the store's round trip and the backend's call loop are
skipped (a test checks that the CLI's study and its simulated twin give the same rows).

    PYTHONPATH=src python tests/helpers/planted_truths.py [--studies 200] [--json figures.json]

prints, per scenario, how often the planted group is the headline and how often any other group differs.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import binom

from biasatlas.backends.registry import make_backend
from biasatlas.probes.contact import disparity
from biasatlas.probes.contact.read import outcomes
from biasatlas.records import Request

ALPHA = 0.05
DESIGN = ["--lang", "is", "--axis", "nationality", "--scale", "all", "--action", "positive,negative"]
PLANTED = "Poland"
#: one group's decisions biased 10 points more often: a planted answer is biased with probability RATE, any
#: other answer is either option alike, so its share is 0.5 + RATE / 2
DISPARITY, BASE_RATE, RATE = 10, 0.5, 0.2
#: a language-wide shift: every group of the axis 15 points more biased
WIDE_RATE = 0.3
#: the framing level of the headline, the only one the checks read
HEADLINE = (disparity.HEADLINE_LEVEL,)
GROUPS = ("Denmark", "Lithuania", "Philippines", "Poland", "Portugal", "Romania", "Spain", "USA", "Ukraine",
          "Venezuela")
SCENARIOS = {
    "planted": f"?biased={PLANTED}&rate={RATE:g}",
    "null": "",
    "language-wide": f"?biased={','.join(GROUPS)}&rate={WIDE_RATE:g}",
}


def invoke(args: list[str]) -> Any:
    from typer.testing import CliRunner

    from biasatlas.cli.main import app

    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return result


def cli_size() -> dict[str, Any]:
    """`biasatlas power contact --disparity 10 --base-rate 0.5`'s row for the design: sets per group, --limit."""
    shown = json.loads(invoke(["power", "contact", "--disparity", str(DISPARITY), "--base-rate", str(BASE_RATE),
                               "--lang", "is", "--axis", "nationality", "--json"]).stdout)
    (row,) = shown["rows"]
    return dict(row)


def cli_plan(limit: int, study: Path) -> dict[str, Any]:
    """The group lines of `biasatlas run contact ... --limit N --plan-only` (one axis)."""
    shown = json.loads(invoke(["run", "contact", "--model", "fake", *DESIGN, "--limit", str(limit),
                               "--study", str(study), "--plan-only"]).stdout)
    (axis,) = shown["power"]["groups"]["axes"]
    return dict(axis)


@dataclass(frozen=True)
class Template:
    """The stored answers of one CLI study and the requests that asked them, in the same order."""

    frame: pd.DataFrame
    requests: list[Request]
    cli_rows: list[dict[str, Any]]  # the CLI study's own group rows (read from its store)


def cli_study(study: Path, limit: int, name: str = "s0") -> Template:
    """Run `biasatlas run contact` with the planted fake model ``name`` and keep its stored answers."""
    import biasatlas
    from biasatlas.probes.contact.read import load_outcomes
    from biasatlas.store import Store

    invoke(["run", "contact", "--model", f"fake:{name}{SCENARIOS['planted']}", *DESIGN, "--limit", str(limit),
            "--study", str(study)])
    with Store(study) as store:
        frame = store.frame(probe="contact")
        rows = disparity.statistics(load_outcomes(store), ALPHA)
    prompts = {p.id: p for p in biasatlas.plan("contact", languages=["is"], axes=["nationality"], scales=["all"],
                                                actions=["positive", "negative"], limit=limit)}
    requests = [Request(prompt=prompts[str(pid)], sample_index=int(i))
                for pid, i in zip(frame["prompt_id"], frame["sample_index"], strict=True)]
    return Template(frame.reset_index(drop=True), requests, rows)


def simulated(template: Template, spec: str, levels: tuple[str, ...] = disparity.LEVELS) -> list[dict[str, Any]]:
    """The group rows of one simulated study: the template's prompts asked of the fake model ``spec``
    (``levels``: the framing levels computed; the headline's alone, ``("all",)``, is a quarter of the work)."""
    backend = make_backend(spec)
    choice = str(template.frame["mode"].iloc[0]) == "choice"
    answers = list(backend.score_choices(template.requests) if choice else backend.generate(template.requests))
    frame = template.frame.assign(model=backend.id, key=[a.key for a in answers], text=[a.text for a in answers])
    frame["option_probs"] = pd.Series([a.option_probs for a in answers], index=frame.index, dtype=object)
    return disparity.statistics(outcomes(frame), ALPHA, levels)


def headline(rows: list[dict[str, Any]]) -> dict[str, Any]:
    (row,) = [r for r in rows if r.get("group_headline")]
    return row


def flagged(rows: list[dict[str, Any]]) -> set[str]:
    """The groups that differ in the headline family (the framings pooled, decisions)."""
    return {str(r["group"]) for r in rows if r.get("group") and r.get("contact") == "all"
            and r.get("measure") == "decision" and r.get("significant")}


def chi_squared_omnibus() -> None:
    """The omnibus test by its chi-squared p, not its permutation (the checks read the group rows alone, which
    the omnibus does not touch; its 1000 draws per family are most of a study's time)."""
    from biasatlas.stats import disparity as stats

    stats.PERMUTE_MAX_CELLS = 0


def run_scenario(template: Template, scenario: str, studies: int, first: int = 1,
                 out: Path | None = None) -> dict[str, int]:
    """Over ``studies`` simulated studies: the planted group found as the headline, any other group flagged
    (``out``: the counts so far, written after every study)."""
    found = others = 0
    for i in range(first, first + studies):
        rows = simulated(template, f"fake:s{i}{SCENARIOS[scenario]}", HEADLINE)
        head, differ = headline(rows), flagged(rows)
        found += bool(head.get("significant")) and head.get("group") == PLANTED
        others += bool(differ - ({PLANTED} if scenario == "planted" else set()))
        if out is not None:
            out.write_text(json.dumps({"scenario": scenario, "studies": i - first + 1, "found": found,
                                       "others_flagged": others}))
    return {"studies": studies, "found": found, "others_flagged": others}


def plan_table(limit: int) -> tuple[list[str], np.ndarray]:
    """The groups and the questions' units of the design's plan at ``limit``, by the probe's question logic."""
    import biasatlas
    from biasatlas.probes.contact.disparity import question_rows

    prompts = biasatlas.plan("contact", languages=["is"], axes=["nationality"], scales=["all"],
                             actions=["positive", "negative"], limit=limit)
    frame = pd.DataFrame([{**p.meta, "key": p.messages[0].content, "sample_index": 0, "biased": 0.0,
                           "p_biased": None} for p in prompts])
    rows = question_rows(frame)
    wide = rows.pivot(index="question", columns="group", values="decision")
    units = rows.groupby("question")["unit"].first().reindex(wide.index).astype(str).to_numpy()
    return [str(g) for g in wide.columns], units


def table_rates(groups: list[str], units: np.ndarray, scenario: str, studies: int, seed: int = 7) -> dict[str, int]:
    """The scenario's counts on the plan's question table alone (each group × question answered once, the
    probe's step-down tests): the fast check, without the fake model's answers and the reading."""
    from biasatlas.stats.disparity import binary_groups, step_down

    n, k = len(units), len(groups)
    rate = np.full((n, k), BASE_RATE)
    if scenario == "planted":
        rate[:, groups.index(PLANTED)] += DISPARITY / 100
    elif scenario == "language-wide":
        rate += WIDE_RATE / 2
    rng = np.random.default_rng(seed)
    found = others = 0
    for _ in range(studies):
        table = (rng.random((n, k)) < rate).astype(float)
        differ = {r.group for r in step_down(table, groups, units, ALPHA, binary_groups) if r.p_adj < ALPHA}
        found += PLANTED in differ and scenario == "planted"
        others += bool(differ - ({PLANTED} if scenario == "planted" else set()))
    return {"studies": studies, "found": found, "others_flagged": others}


def band(studies: int, rate: float, level: float = 0.95) -> tuple[int, int]:
    """The binomial ``level`` interval of the count of ``studies`` at ``rate``."""
    return int(binom.ppf((1 - level) / 2, studies, rate)), int(binom.ppf(1 - (1 - level) / 2, studies, rate))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--studies", type=int, default=200)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--table", action="store_true", help="the plan's question table alone (fast)")
    parser.add_argument("--scenario", choices=list(SCENARIOS), action="append", help="these only (default: all)")
    args = parser.parse_args()
    chi_squared_omnibus()
    size = cli_size()
    if args.table:
        groups, units = plan_table(size["limit"])
        for scenario in SCENARIOS:
            print(f"{scenario} (table): {table_rates(groups, units, scenario, args.studies)}", flush=True)
        return
    with tempfile.TemporaryDirectory() as tmp:
        plan = cli_plan(size["limit"], Path(tmp) / "plan")
        template = cli_study(Path(tmp) / "study", size["limit"])
    print(f"size: {size['needed']} prompt sets per group ({size['questions']} questions), --limit {size['limit']}; "
          f"plan: {plan['line']}")
    figures: dict[str, Any] = {"size": size, "plan_line": plan["line"], "scenarios": {}}
    for scenario in args.scenario or list(SCENARIOS):
        start = time.perf_counter()
        progress = args.json.with_suffix(f".{scenario}.json") if args.json else None
        counts: dict[str, Any] = {**run_scenario(template, scenario, args.studies, out=progress),
                                  "seconds": round(time.perf_counter() - start, 1)}
        figures["scenarios"][scenario] = counts
        print(f"{scenario}: {counts}; 95% band at 0.8: {band(args.studies, 0.8)}, at alpha: "
              f"0-{band(args.studies, ALPHA)[1]}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
