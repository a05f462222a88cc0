"""The run's last lines: each family's group-disparity headline of the study as it now stands (loads the probes;
the block a probe adds to its section is :mod:`biasatlas.report.disparity_block`)."""

from __future__ import annotations

from typing import Any


def print_run_headline(probe_name: str, study: Any, console: Any) -> None:
    """The run's last lines: each family's group-disparity headline of the study as it now stands."""
    if probe_name not in ("contact", "samaritan"):
        return
    from biasatlas.probes import load_probe
    from biasatlas.store import Store
    from biasatlas.tidy.disparity import headline_lines

    # not read-only: a read-only connection cannot checkpoint, and would leave the -wal file behind the run
    with Store(study) as store:
        if probe_name == "contact":  # only the group rows: the whole summary costs a run ~0.7 s more
            from biasatlas.probes.contact.disparity import statistics
            from biasatlas.probes.contact.read import load_outcomes

            rows = statistics(load_outcomes(store))
        else:
            rows = load_probe(probe_name).summarise(store).get("statistics") or []
    for row, text in headline_lines(rows):
        where = " · ".join(str(row[k]) for k in ("model", "mode", "language") if row.get(k))
        console.print(f"group disparity {where}: {text}", markup=False, soft_wrap=True)
