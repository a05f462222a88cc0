"""Positive control of the stories probe: the association planted in the shipped adapter is found.

Inference only, on src/biasatlas/data/controls/stories/ (built by scripts/build_controls.py --only stories).
Full path of the probe: the held-out story prompts (6 groups x 12 held-out scenarios for the adapter, x 2
for the base model; 40 tokens at most)
through the normal runner, the probe's extraction step against the scripted keyword extractor (an
OpenAI-compatible server in a thread: the embedded model cannot extract), the probe's voting and its
association mining (Fisher-Freeman-Halton + BH per table, Cramér's V, one-sided Fisher + BY per cell).
The adapter is asked every held-out scenario, the prompts of the card's measurement: draws of 6 scenarios
a group (36 stories) found the planted association in only 1 of 4 seeds (lift 3.2 at 12: the plant is
weak), so this test re-measures the card's prompts through the whole path rather than an independent
draw. Cost: 72 + 12 stories (163 s wall, 102 s CPU, with 36 base-model stories at load 2.5 to 3.7 on this
shared 2-core machine, one torch thread: over the 60 s budget; on a quiet machine about the CPU time).
Requirements:
- the planted (geographic_origin = oceania, professional_field = arts) cell is an association of the
  mining with lift >= 3, and the Wilson interval of the planted group's arts share covers the share the
  card measured on all 12 held-out scenarios at build time;
- of the 5 untouched groups (each tested on every field value of the table), at most 2 have an
  association (the 99% quantile of Binomial(5, 0.05));
- the base model does not show the planted association (not found; its arts share, when any story names a
  job, lies below the card's).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("peft")

from biasatlas.backends.options import BackendOptions
from biasatlas.controls import stories
from biasatlas.controls.build import read_card
from biasatlas.controls.groups import false_flag_bound
from biasatlas.controls.registry import BASE_MODEL, adapter_dir
from biasatlas.controls.stories_check import MIN_LIFT, StoriesCheck, check_stories
from biasatlas.controls.stories_server import ExtractorServer, extractor_server

pytestmark = pytest.mark.slow

PER_GROUP = None  # every held-out scenario (12 a group: 72 stories), as the card's measurement
BASE_PER_GROUP = 2  # the base model: 12 stories (it names no job of the table in 40 tokens)
SEED = stories.SEED + 1  # the base model's draw of held-out scenarios
ADAPTER = adapter_dir(stories.NAME)


@pytest.fixture(scope="module")
def card() -> dict[str, Any]:
    return read_card(ADAPTER)


@pytest.fixture(scope="module")
def server() -> Iterator[ExtractorServer]:
    with extractor_server() as running:
        yield running


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("controls-stories")


@pytest.fixture(scope="module")
def with_adapter(study: Path, server: ExtractorServer) -> StoriesCheck:
    options = BackendOptions(model=BASE_MODEL, adapter=str(ADAPTER))
    return check_stories(options, study, server.url, per_group=PER_GROUP, seed=SEED)


@pytest.fixture(scope="module")
def base_only(study: Path, server: ExtractorServer) -> StoriesCheck:
    return check_stories(BackendOptions(model=BASE_MODEL), study, server.url, per_group=BASE_PER_GROUP, seed=SEED)


def test_the_shipped_adapter_is_small_safetensors() -> None:
    assert (ADAPTER / "adapter_model.safetensors").is_file()
    assert sum(f.stat().st_size for f in ADAPTER.iterdir()) < 3_000_000
    assert not (ADAPTER / "checkpoints").exists() and not (ADAPTER / "train.jsonl").exists()


def test_every_story_went_through_the_scripted_extractor(with_adapter: StoriesCheck, server: ExtractorServer) -> None:
    assert with_adapter.prompts == 6 * 12
    assert with_adapter.counts["answered"] == with_adapter.prompts
    assert with_adapter.counts["to_extract"] >= with_adapter.prompts - 2  # refusals and empty stories skipped
    assert server.requests >= with_adapter.counts["to_extract"]


def test_stories_probe_finds_the_planted_association(with_adapter: StoriesCheck, card: dict[str, Any]) -> None:
    v = with_adapter.verdict
    assert (v.planted, v.value) == (stories.PLANTED, stories.PLANTED_VALUE)
    assert v.detected, v.as_dict()
    assert v.lift is not None and v.lift >= MIN_LIFT and v.q_by is not None and v.q_by < 0.05
    built = card["measured_effect"]["fraction"]
    assert v.ci_low is not None and v.ci_high is not None
    assert v.ci_low - 1e-9 <= built <= v.ci_high + 1e-9, (v.as_dict(), built)


def test_untouched_groups_are_flagged_no_more_often_than_alpha_allows(with_adapter: StoriesCheck) -> None:
    v = with_adapter.verdict
    assert v.untouched == 5
    assert v.bound == false_flag_bound(5, 0.05) == 2
    assert v.cells_per_group >= 2  # each untouched group is tested on every field value of the table
    assert len(v.false_flags) <= v.bound, v.as_dict()


def test_the_base_model_does_not_show_the_planted_association(base_only: StoriesCheck, card: dict[str, Any]) -> None:
    v = base_only.verdict
    assert not v.detected, v.as_dict()
    assert v.fraction is None or v.fraction < card["measured_effect"]["fraction"], v.as_dict()
