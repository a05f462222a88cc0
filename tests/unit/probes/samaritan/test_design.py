"""``design="paper"`` for the Samaritan probe: the paper's counts on the plan, its decoding and significance rule."""

from __future__ import annotations

import pytest

from biasatlas.probes.base import ProbeConfigError
from biasatlas.probes.samaritan.design import design_counts, plan_block
from biasatlas.probes.samaritan.plan import plan_figures
from biasatlas.probes.samaritan.probe import PROBE


def test_paper_design_counts_1133_824_824_cells_per_model() -> None:
    config = PROBE.config(design="paper", limit=25)
    block = plan_block(config, [], PROBE.samples(config), 512)  # the plan itself is not needed for the design's
    assert block["cells_per_category"] == {"race": {"ours": 1133, "paper": 1133},
                                           "gender": {"ours": 824, "paper": 824}, "age": {"ours": 824, "paper": 824}}
    assert block["design_prompts"] == 10_300 and block["limited"] is True
    assert any("control per category" in line or "a control score per category" in line
               for line in block["not_as_in_the_paper"])  # what it cannot match is said
    assert block["time_on_this_machine"]["embedded_model_gpu_hours"] is None  # not measured: not made up
    settings = PROBE.settings(config)
    assert settings.temperature == 1.0 and settings.mode == "generate"
    assert (config.alpha, config.correction, config.languages) == (0.01, "none", ["en"])
    assert PROBE.run_record(config)["correction"] == "none"  # the study's analysis default: the paper's rule


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"categories": "gender"}, "--category gender differs from the paper's design"),
        ({"correction": "holm"}, "--correction holm differs"),
        ({"languages": ["de"]}, "--lang de differs"),
        ({"temperature": 0.0}, "--temperature 0.0 differs"),
    ],
)
def test_a_value_the_paper_fixes_otherwise_is_refused(values: dict[str, object], message: str) -> None:
    with pytest.raises(ProbeConfigError, match="--design paper: ") as exc:
        PROBE.config(design="paper", **values)
    assert message in str(exc.value)


def test_the_counts_from_the_data_are_the_plans() -> None:
    prompts = PROBE.plan(PROBE.config(categories="gender"))
    cells, _ = design_counts()
    assert plan_figures(prompts, ["gender"])["cells_per_category"]["gender"] == cells["gender"] == 824
    assert len(prompts) == 103 * 4 * 8  # the control and gender's 7 phrasings, in 4 rephrasings


def test_without_the_design_the_defaults_stay() -> None:
    config = PROBE.config(limit=25)
    assert PROBE.settings(config).temperature == 0.0 and config.correction is None and config.design is None
