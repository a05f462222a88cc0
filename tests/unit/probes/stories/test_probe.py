"""The stories Probe object: configuration errors, the plan and its --limit draw, both run steps."""

from __future__ import annotations

import json
from typing import Any

import pytest

from biasatlas.backends.fake import FakeBackend
from biasatlas.backends.options import BackendOptions
from biasatlas.probes import load_probe
from biasatlas.probes.base import ProbeConfigError
from biasatlas.probes.stories.plan import design_cell
from biasatlas.probes.stories.probe import PROBE, StoriesConfig
from biasatlas.records import Request
from biasatlas.store import Store

CELLS_PER_LANGUAGE = 19 * 9  # prompted attributes × scenario groups


def test_registry_returns_the_stories_probe() -> None:
    assert load_probe("stories") is PROBE
    assert PROBE.modes == ("generate",)


@pytest.mark.parametrize(
    ("values", "needle"),
    [
        ({"languages": ["de"]}, "--lang 'de'"),
        ({"mode": "choice"}, "--mode 'choice'"),
        ({"extract_max_tokens": 0}, "extract_max_tokens"),
        ({"extractors": []}, "--extractor"),
        ({"samples": 0}, "samples"),
        ({"limit": 0}, "limit"),
    ],
)
def test_config_errors_are_one_line(values: dict[str, Any], needle: str) -> None:
    with pytest.raises(ProbeConfigError) as info:
        PROBE.config(**values)
    message = str(info.value)
    assert needle in message and "\n" not in message


def test_defaults_leave_room_for_200_words_in_every_language() -> None:
    config = PROBE.config()
    assert isinstance(config, StoriesConfig)
    settings = PROBE.settings(config)
    # 200 words of Hindi, Arabic or Ukrainian take about 5.5 tokens a word with an English-centred
    # tokenizer (docs/methods/stories.md): 400 stories / 600 extraction tokens cut them
    assert (settings.mode, settings.max_tokens, settings.temperature, settings.seed) == ("generate", 2048, 1.0, 0)
    assert PROBE.samples(config) == 1
    assert config.extract and config.extract_max_tokens == 3072 and config.extractors is None
    custom = PROBE.settings(PROBE.config(max_tokens=50, temperature=0.0, seed=3))
    assert (custom.max_tokens, custom.temperature, custom.seed) == (50, 0.0, 3)


def test_plan_is_every_value_times_every_scenario() -> None:
    prompts = PROBE.plan(PROBE.config())
    assert len(prompts) == 79 * 36
    assert len({design_cell(p) for p in prompts}) == CELLS_PER_LANGUAGE


@pytest.mark.parametrize("limit", [1, 7, 40, 171, 500])
def test_limit_is_prompts_and_covers_the_cells(limit: int) -> None:
    prompts = PROBE.plan(PROBE.config(limit=limit, seed=5))
    assert len(prompts) == limit  # stories are not paired: exactly N prompts
    assert len({design_cell(p) for p in prompts}) == min(limit, CELLS_PER_LANGUAGE)
    assert len({p.id for p in prompts}) == limit


def test_limit_draw_is_seeded() -> None:
    first = [p.id for p in PROBE.plan(PROBE.config(limit=20, seed=1))]
    assert first == [p.id for p in PROBE.plan(PROBE.config(limit=20, seed=1))]
    assert first != [p.id for p in PROBE.plan(PROBE.config(limit=20, seed=2))]


def test_multi_language_plan_is_the_union() -> None:
    en = PROBE.plan(PROBE.config(languages=["en"]))
    both = PROBE.plan(PROBE.config(languages=["en", "fr"]))
    assert len(both) == 2 * len(en)
    assert {p.language for p in both} == {"en", "fr"}
    small = PROBE.plan(PROBE.config(languages=["en", "fr"], limit=10))
    assert len(small) == 10 and {p.language for p in small} == {"en", "fr"}


def test_plan_summary_has_no_none_and_counts_extraction() -> None:
    config = PROBE.config(languages=["en", "fr"], limit=30, samples=2, extractors=["a", "b"])
    plan = PROBE.plan_summary(PROBE.plan(config), config)
    text = json.dumps(plan)
    assert "None" not in text and "null" not in text
    assert plan["languages"] == {"en": 15, "fr": 15}
    assert plan["requests"] == 60 and plan["extraction_requests_at_most"] == 120
    assert set(plan["factors"]) == {"base_attribute", "scenario_group"}
    off = PROBE.config(limit=3, extract=False)
    assert PROBE.plan_summary(PROBE.plan(off), off)["extractors"] == []


STORY = "Amina, 67, had retired from the post office. She rented a small flat."
PROFILE = json.dumps({"age": {"value": "senior", "evidence": "Amina, 67"},
                      "housing_status": {"value": "renter", "evidence": "rented a small flat"}})


def _script(request: Request) -> str:
    if request.prompt.probe == "stories-extract":
        return PROFILE
    if request.prompt.meta["base_attribute"] == "religion":
        return "I'm sorry, but I cannot write this story."
    return f"{STORY} ({request.prompt.meta['base_value']}, sample {request.sample_index})"


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[FakeBackend]:
    """Every backend the probe opens: scripted fakes named after the spec."""
    backends: list[FakeBackend] = []

    def make_backend(spec: str, **options: Any) -> FakeBackend:
        backend = FakeBackend(_script, name=spec.split(":", 1)[1])
        backends.append(backend)
        return backend

    monkeypatch.setattr("biasatlas.backends.registry.make_backend", make_backend)
    return backends


def test_run_generates_then_extracts_with_the_generator(tmp_path, opened: list[FakeBackend]) -> None:
    config = PROBE.config(limit=40, samples=2)
    seen = []
    steps = PROBE.run(config, BackendOptions(model="fake:gen"), tmp_path, on_totals=seen.append)
    assert len(opened) == 1  # the generator doubles as the extractor: opened once
    assert len(steps) == 2 and seen == steps
    stories, extraction = steps
    assert stories.planned == 80 and stories.new == 80
    counts = stories.info["stories"]
    refusals = sum(p.meta["base_attribute"] == "religion" for p in PROBE.plan(config)) * 2
    assert counts["refusals"] == refusals and counts["answered"] == 80
    assert extraction.planned == counts["to_extract"] == 80 - refusals
    # a second run asks nothing new
    again = PROBE.run(config, BackendOptions(model="fake:gen"), tmp_path)
    assert [s.new for s in again] == [0, 0]
    with Store(tmp_path) as store:
        frame = PROBE.outcomes(store)
    assert len(frame) == 80
    assert set(frame.loc[frame["refusal"], "reason"]) <= {"refusal"}
    assert frame.loc[~frame["refusal"], "profile"].all()
    extracted = frame[frame["profile"] & (frame["base_attribute"] != "age")]
    assert set(extracted["age"]) == {"senior"}  # the prompted attribute comes from the prompt
    prompted = frame[frame["base_attribute"] == "age"]
    assert len(prompted) and (prompted["age"] == prompted["base_value"]).all()


def test_run_with_other_extractors_and_without_extraction(tmp_path, opened: list[FakeBackend]) -> None:
    config = PROBE.config(limit=5, extractors=["fake:gen", "fake:other"])
    steps = PROBE.run(config, BackendOptions(model="fake:gen"), tmp_path)
    assert [b.id for b in opened] == ["fake:gen", "fake:other"]
    assert len(steps) == 3
    with Store(tmp_path) as store:
        extractors = set(store.frame(probe="stories-extract")["model"])
    assert extractors == {"fake:gen", "fake:other"}
    only = PROBE.run(PROBE.config(limit=5, extract=False), BackendOptions(model="fake:new"), tmp_path / "b")
    assert len(only) == 1 and "stories" not in only[0].info


def test_summarise_takes_alpha_and_notes_an_unused_correction(tmp_path, opened: list[FakeBackend]) -> None:
    PROBE.run(PROBE.config(limit=20), BackendOptions(model="fake:gen"), tmp_path)
    with Store(tmp_path) as store:
        plain = PROBE.summarise(store)
        strict = PROBE.summarise(store, alpha=0.001)
        holm = PROBE.summarise(store, correction="holm")
        bh = PROBE.summarise(store, correction="bh")
    assert "alpha 0.05" in plain["method"] and "alpha 0.001" in strict["method"]
    assert "correction_note" in holm and "Benjamini-Hochberg" in holm["correction_note"]
    assert "correction_note" not in bh and "correction_note" not in plain


@pytest.mark.parametrize(("pairs", "scenarios"), [(79, 36), (4, 6), (6, 6)])
def test_interleaved_order_has_every_pair_once(pairs: int, scenarios: int) -> None:
    from biasatlas.probes.stories.plan import _interleaved

    order = _interleaved(pairs, scenarios)
    assert sorted(order) == [(i, j) for i in range(pairs) for j in range(scenarios)]


class _Cut(FakeBackend):
    """A fake whose answers to the prompts ``cut`` selects end with finish_reason 'length'."""

    def __init__(self, script: Any, cut: Any, name: str) -> None:
        super().__init__(script, name=name)
        self.cut = cut

    def generate(self, requests: Any) -> Any:
        by_key = {r.cache_key(self.id): r for r in requests}
        for response in super().generate(requests):
            if self.cut(by_key[response.key]):
                response = response.model_copy(update={"finish_reason": "length"})
            yield response


def test_answers_cut_at_the_token_limit_are_counted(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    def cut(request: Request) -> bool:
        if request.prompt.probe == "stories-extract":
            return request.prompt.meta["base_attribute"] == "age"
        return request.prompt.meta["base_attribute"] in {"income_level", "age"}

    monkeypatch.setattr("biasatlas.backends.registry.make_backend",
                        lambda spec, **_: _Cut(_script, cut, spec.split(":", 1)[1]))
    config = PROBE.config(limit=60)
    steps = PROBE.run(config, BackendOptions(model="fake:gen"), tmp_path)
    prompts = PROBE.plan(config)
    story_cut = sum(p.meta["base_attribute"] in {"income_level", "age"} for p in prompts)
    extract_cut = sum(p.meta["base_attribute"] == "age" for p in prompts)
    assert story_cut and extract_cut
    assert steps[0].info["stories"]["cut_at_limit"] == story_cut
    with Store(tmp_path) as store:
        summary = PROBE.summarise(store)
    assert summary["counts"]["stories"]["cut_at_limit"] == story_cut
    assert summary["counts"]["extraction"]["cut_at_limit"] == extract_cut


def test_cli_reports_cut_answers_and_warns_about_self_extraction(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from biasatlas.cli.main import app

    monkeypatch.setattr("biasatlas.backends.registry.make_backend",
                        lambda spec, **_: _Cut(_script, lambda r: r.prompt.probe == "stories", spec.split(":", 1)[1]))
    result = CliRunner().invoke(app, ["run", "stories", "--study", str(tmp_path / "s"), "--model", "fake:gen",
                                      "--limit", "5", "--no-progress"])
    assert result.exit_code == 0, result.output
    assert "5 of 5 stories hit the token limit" in result.output
    assert "three independent extractors" in result.output


def test_self_extraction_is_flagged_in_plan_and_summary(tmp_path, opened: list[FakeBackend]) -> None:
    own = PROBE.config(limit=20)
    assert "three independent extractors" in " ".join(PROBE.plan_summary(PROBE.plan(own), own)["warnings"])
    three = PROBE.config(limit=20, extractors=["fake:a", "fake:b", "fake:c"])
    assert "warnings" not in PROBE.plan_summary(PROBE.plan(three), three)
    PROBE.run(own, BackendOptions(model="fake:gen"), tmp_path)
    with Store(tmp_path) as store:
        summary = PROBE.summarise(store)
    assert summary["counts"]["extraction"]["self_extraction_only"] == ["fake:gen"]
    assert any("three independent extractors" in w for w in summary["warnings"])


def test_extraction_phase_has_the_progress_bar(tmp_path, opened: list[FakeBackend], monkeypatch) -> None:
    from typer.testing import CliRunner

    import biasatlas.runner as runner
    from biasatlas.cli.main import app

    seen: list[tuple[str, bool]] = []
    real = runner.run_plan

    def spy(prompts: Any, *args: Any, progress: bool = True, **kwargs: Any) -> Any:
        seen.append((prompts[0].probe, progress))
        return real(prompts, *args, progress=progress, **kwargs)

    monkeypatch.setattr(runner, "run_plan", spy)
    for flag, expected in (("--progress", True), ("--no-progress", False)):
        seen.clear()
        result = CliRunner().invoke(app, ["run", "stories", "--study", str(tmp_path / flag), "--model", "fake:gen",
                                          "--limit", "3", flag])
        assert result.exit_code == 0, result.output
        assert seen == [("stories", expected), ("stories-extract", expected)]
