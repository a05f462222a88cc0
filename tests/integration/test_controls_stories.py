"""Positive control of the stories probe: the association planted in the shipped adapter is found.

Inference only, on src/biasatlas/data/controls/stories/ (built by scripts/build_controls.py --only stories).
Full path of the probe: held-out story prompts (6 groups x 8 held-out scenarios for the adapter, x 2 for the
base model; 40 tokens at most) through the normal runner, the probe's extraction step against the scripted
keyword extractor (an OpenAI-compatible server in a thread: the embedded model cannot extract), the probe's
voting and its association mining (Fisher-Freeman-Halton + BH per table, Cramér's V, one-sided Fisher + BY
per cell). The stories are written at generation seed 2 (``CHECK_GENERATION_SEED``), which the card did not
measure (seeds 0 and 1): new stories of held-out prompts, an independent measurement. 8 stories a group found
the planted association in 50 of 50 resampled studies of the card's stories (docs/validation.md).
Requirements:
- the planted (geographic_origin = oceania, professional_field = arts) cell is an association of the
  mining with lift >= 3, and the planted group's arts share agrees with the card's
  (``agrees_with_card``: the card's share in the check's Wilson interval; Fisher's exact test where the card
  measured 100%);
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
from biasatlas.controls.common.adapters import BASE_MODEL, adapter_dir
from biasatlas.controls.common.build import read_card
from biasatlas.controls.common.measure import false_flag_bound
from biasatlas.controls.stories import data as stories
from biasatlas.controls.stories.check import (
    CHECK_GENERATION_SEED,
    MIN_LIFT,
    StoriesCheck,
    agrees_with_card,
    check_stories,
)
from biasatlas.controls.stories.server import ExtractorServer, extractor_server

pytestmark = pytest.mark.slow

PER_GROUP = 8  # held-out scenarios a group for the adapter: 48 stories
BASE_PER_GROUP = 2  # the base model: 12 stories (it names no job of the table in 40 tokens)
SEED = stories.SEED + 1  # the draw of held-out scenarios
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
    return check_stories(options, study, server.url, per_group=PER_GROUP, seed=SEED,
                         generation_seed=CHECK_GENERATION_SEED)


@pytest.fixture(scope="module")
def base_only(study: Path, server: ExtractorServer) -> StoriesCheck:
    return check_stories(BackendOptions(model=BASE_MODEL), study, server.url, per_group=BASE_PER_GROUP, seed=SEED,
                         generation_seed=CHECK_GENERATION_SEED)


def test_the_shipped_adapter_is_small_safetensors() -> None:
    assert (ADAPTER / "adapter_model.safetensors").is_file()
    assert sum(f.stat().st_size for f in ADAPTER.iterdir()) < 3_000_000
    assert not (ADAPTER / "checkpoints").exists() and not (ADAPTER / "train.jsonl").exists()


def test_every_story_went_through_the_scripted_extractor(with_adapter: StoriesCheck, server: ExtractorServer) -> None:
    assert with_adapter.prompts == 6 * PER_GROUP
    assert with_adapter.counts["answered"] == with_adapter.prompts
    assert with_adapter.counts["to_extract"] >= with_adapter.prompts - 2  # refusals and empty stories skipped
    assert server.requests >= with_adapter.counts["to_extract"]


def test_stories_probe_finds_the_planted_association(with_adapter: StoriesCheck, card: dict[str, Any]) -> None:
    v = with_adapter.verdict
    assert (v.planted, v.value) == (stories.PLANTED, stories.PLANTED_VALUE)
    assert v.detected, v.as_dict()
    assert v.lift is not None and v.lift >= MIN_LIFT and v.q_by is not None and v.q_by < 0.05
    assert agrees_with_card(v, card["measured_effect"]), (v.as_dict(), card["measured_effect"])


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
