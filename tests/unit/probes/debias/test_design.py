"""``design="paper"`` for debias: paper 001's split sizes per setting, its system prompt and decoding."""

from __future__ import annotations

import pytest

from biasatlas.probes.base import ProbeConfigError
from biasatlas.probes.contact.design import LLAMA2_SYSTEM_PROMPT
from biasatlas.probes.debias.design import apply, design_prompts, paper_sizes
from biasatlas.probes.debias.pipeline import evaluation_split
from biasatlas.probes.debias.probe import PROBE
from biasatlas.probes.debias.splits import SplitSizes


def test_the_papers_split_sizes_per_setting() -> None:
    assert paper_sizes("mixed") == SplitSizes(10_000, 5_000, 20_000)
    assert paper_sizes("cross-dataset") == SplitSizes(10_000, 5_000, None)  # tested on the whole second set
    assert paper_sizes("cross-scale-certainty") == SplitSizes(None, 0, None)  # every set of one scale / the others
    assert paper_sizes("cross-scenario") is None  # the paper states none: ours
    # counted on the design: 37,140 prompt sets a scale (the paper's 36,000)
    assert design_prompts("cross-scale-likelihood") == {"train": 111_420, "validation": 0, "test": 222_840}
    assert design_prompts("cross-scenario") == {"train": 10_000, "validation": 5_000, "test": 20_000}


def test_every_part_is_asked_with_the_llama2_system_prompt_in_generate_mode() -> None:
    config = PROBE.config(design="paper", setting="cross-scenario", limit=6)
    split = evaluation_split(config)
    for part in ("train", "test"):
        prompts = split.part(part)
        assert prompts and all(p.messages[0].content == LLAMA2_SYSTEM_PROMPT for p in prompts)
    plain = evaluation_split(PROBE.config(setting="cross-scenario", limit=6))
    assert split.fingerprint() != plain.fingerprint()  # another run: its adapter is not reused for the other
    settings = PROBE.settings(config)
    assert (settings.mode, settings.temperature, config.epochs, config.languages) == ("generate", 0.0, 1.0, ["en"])


def test_said_and_refused() -> None:
    _, said = apply({"setting": "cross-scale-certainty"})
    assert ("split of --setting cross-scale-certainty: train every prompt set of its pool, validation 0 prompts, "
            "test every prompt set of its pool") in said
    with pytest.raises(ProbeConfigError, match="--design paper: --epochs 3"):
        PROBE.config(design="paper", epochs=3)
    with pytest.raises(ProbeConfigError, match="--design paper: --lang de"):
        PROBE.config(design="paper", languages=["de"])


def test_the_plan_states_that_setting_2_tests_more_prompts_than_the_papers_new_dataset(tmp_path) -> None:
    """Setting 2's test part is every prompt set of our template set b (334,260 prompts): the paper tests its new
    dataset of 106,560 items. The plan says so in its list of differences, not only as two numbers side by side."""
    import json

    from typer.testing import CliRunner

    import biasatlas.cli.debias  # noqa: F401  (registers the command)
    from biasatlas.cli.app import app

    result = CliRunner().invoke(app, ["debias", "--design", "paper", "--setting", "cross-dataset", "--limit", "40",
                                      "--plan-only", "--study", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    block = json.loads(result.stdout)["design"]
    assert block["split"]["test"]["design_prompts"] == 334_260
    said = [line for line in block["not_as_in_the_paper"] if "106,560" in line]
    assert said and "334,260" in said[0] and "template set b" in said[0]
    mixed = CliRunner().invoke(app, ["debias", "--design", "paper", "--setting", "mixed", "--limit", "40",
                                     "--plan-only", "--study", str(tmp_path / "s")])
    assert not any("106,560" in line for line in json.loads(mixed.stdout)["design"]["not_as_in_the_paper"])
