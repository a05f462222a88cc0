"""Print the "Figures" table of docs/languages.md from the shipped packs: cells, contact prompts, groups, Samaritan.

`PYTHONPATH=src python scripts/language_figures.py [codes...]` (default: the twelve atlas languages) prints
one Markdown row per language: template cells; contact prompts of the default plan (the certainty scale,
the pack's default actions) and of all three scales; groups used (those at least one cell can fill) /
asked (one per wording, after merges) / descriptors given (before merges, after the pack's omissions);
(cell, group) pairs left out (no form of the cell's gender and number); Samaritan prompts (control and
every group phrasing, every rephrasing). The reader-accuracy columns come from the readers' tests.
"""

from __future__ import annotations

import argparse

from biasatlas.languages import ATLAS_LANGUAGES
from biasatlas.probes.contact.data import descriptors_for, raw_descriptors_for, template_sets
from biasatlas.probes.contact.plan import ContactConfig, build_prompts
from biasatlas.probes.samaritan.plan import build_prompts as samaritan_prompts


def figures(code: str) -> dict[str, int]:
    """The table's figures for one language (template set ``a``)."""
    tset = template_sets(code)["a"]
    groups = descriptors_for(code)
    fits = [[d.fits(cell.agree, tset.grammar) for cell in tset.cells] for d in groups]
    default = len(build_prompts(ContactConfig(languages=[code])))
    return {"cells": len(tset.cells), "default": default,
            "all": len(build_prompts(ContactConfig(languages=[code], scales=["all"]))),
            "used": sum(any(row) for row in fits), "asked": len(groups), "given": len(raw_descriptors_for(code)),
            "left_out": sum(not f for row in fits for f in row), "samaritan": len(samaritan_prompts(language=code))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("languages", nargs="*", help="codes (default: the twelve atlas languages)")
    codes = parser.parse_args().languages or list(ATLAS_LANGUAGES)
    print("| lang | cells | contact prompts, default plan | all 3 scales | groups used / asked / descriptors given "
          "| pairs left out | Samaritan prompts |")
    print("|---|---|---|---|---|---|---|")
    for code in codes:
        f = figures(code)
        print(f"| {code} | {f['cells']} | {f['default']:,} | {f['all']:,} | {f['used']} / {f['asked']} / "
              f"{f['given']} | {f['left_out']:,} | {f['samaritan']:,} |", flush=True)


if __name__ == "__main__":
    main()
