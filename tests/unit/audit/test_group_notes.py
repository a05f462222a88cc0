"""`audit --plan-only`: the group-vs-rest MDE lines come once per probe × language × axis, not once per model."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from biasatlas.audit.estimate import power_notes
from biasatlas.probes.contact.plan import ContactConfig, build_prompts
from biasatlas.probes.power import power_plan


def test_group_lines_are_said_once_for_every_model() -> None:
    prompts = build_prompts(ContactConfig(languages=["de"], axes=["religion"], limit=3 * 7 * 10))
    plan = power_plan("contact", prompts, mode="generate")
    assert plan is not None
    rows = [SimpleNamespace(model=m, probe="contact", language="de", power=plan) for m in ("fake:a", "fake:b")]
    notes = power_notes(cast("Any", rows))
    groups = [n for n in notes if n.startswith("group power: ")]
    axis = plan["groups"]["axes"][0]
    assert groups == ["group power: contact / de religion: 7 groups, 10 prompt sets each (30 questions, framings "
                      f"pooled); one group vs the other 6: MDE {axis['mde_pp']} pp (one framing alone: "
                      f"{axis['mde_pp_one_framing']} pp)"]
    assert sum(n.startswith("group power assumptions (contact): Cochran–Mantel–Haenszel") for n in notes) == 1
    assert sum(n.startswith("power: ") for n in notes) == 2  # the per-model cells, as before
