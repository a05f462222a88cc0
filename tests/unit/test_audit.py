"""Audit files: validation (one line per bad input, before anything runs), plan-only, and runs on fake models."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from biasatlas.audit import (
    SharedBackendOptions,
    build_cells,
    check_models,
    display_names,
    load_audit,
    plan_audit,
)
from biasatlas.audit.models import approximate_tokens, model_info
from biasatlas.backends.fake import FakeBackend
from biasatlas.backends.options import BackendOptions
from biasatlas.cli.main import app
from biasatlas.records import Request, Response
from biasatlas.store import DB_NAME, Store

runner = CliRunner()

SMALL: dict[str, Any] = {
    "models": [{"name": "Alpha", "model": "fake:a"}, {"name": "Beta", "model": "fake:b"}],
    "probes": {
        "contact": {"languages": ["de"], "axes": ["religion"], "limit": 9},
        "samaritan": {"languages": ["en"], "limit": 6},
    },
}


def write(tmp_path: Path, data: dict[str, Any], name: str = "audit.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def one_line_error(result: Any) -> str:
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    return lines[0]


# ---- the file ------------------------------------------------------------------------------------
def test_cells_model_by_probe_by_language_by_seed(tmp_path: Path) -> None:
    data = {**SMALL, "probes": {"contact": {"axes": "religion", "limit": 9}}, "languages": ["en", "de"],
            "seeds": [0, 1]}
    audit = load_audit(write(tmp_path, data))
    cells = build_cells(audit)
    assert [(c.model.name, c.probe.name, c.language, c.seed) for c in cells][:4] == [
        ("Alpha", "contact", "en", 0), ("Alpha", "contact", "en", 1), ("Alpha", "contact", "de", 0),
        ("Alpha", "contact", "de", 1)]
    assert len(cells) == 2 * 2 * 2
    config = cells[0].config
    assert config.languages == ["en"] and config.limit == 9 and config.axes == ["religion"]  # type: ignore[attr-defined]
    assert cells[1].config.seed == 1


def test_top_level_samples_apply_where_the_probe_samples(tmp_path: Path) -> None:
    data = {**SMALL, "samples": 3}
    cells = build_cells(load_audit(write(tmp_path, data)))
    by_probe = {c.probe.name: c for c in cells}
    assert by_probe["samaritan"].probe.samples(by_probe["samaritan"].config) == 3
    assert by_probe["contact"].probe.samples(by_probe["contact"].config) == 1  # choice mode scores once


def test_top_level_languages_a_probe_lacks_are_left_out(tmp_path: Path) -> None:
    data = {**SMALL, "probes": {"contact": {"axes": ["religion"], "limit": 3}, "leakage": {"limit": 3}},
            "languages": ["en", "is"]}
    plan = plan_audit(write(tmp_path, data))
    assert {(c.probe.name, c.language) for c in plan.cells} == {
        ("contact", "en"), ("contact", "is"), ("leakage", "en")}
    assert plan.notes == ["leakage has no data in is: those cells are left out"]


def test_toml_and_http_mapping(tmp_path: Path) -> None:
    path = tmp_path / "audit.toml"
    path.write_text(
        '[[models]]\nname = "Remote"\nmodel = "openai:m"\nbase_url = "http://127.0.0.1:9"\n'
        '[models.http]\nprice_prompt = 0.5\nprice_completion = 2\ncheck = false\n'
        '[probes.contact]\naxes = ["religion"]\nlimit = 3\n', encoding="utf-8")
    audit = load_audit(path)
    assert audit.models[0].options.http == ["price_prompt=0.5", "price_completion=2", "check=false"]
    info = model_info(audit.models[0].options)
    assert info.backend_id == "openai:m@http://127.0.0.1:9#json"
    assert (info.price_prompt, info.price_completion) == (0.5, 2.0)


def test_fleet_entry_endpoints_and_identity(tmp_path: Path) -> None:
    """A fleet is one model: its id is the model and the fleet's name, whatever its servers."""
    data = {**SMALL, "models": [{"name": "Fleet", "model": "openai:m", "fleet": "gpu-a", "concurrency": 8,
                                 "endpoints": ["http://127.0.0.1:9/v1#16", {"url": "http://127.0.0.2:9/v1"},
                                               {"url": "http://127.0.0.3:9/v1", "concurrency": 4}]}]}
    audit = load_audit(write(tmp_path, data))
    options = audit.models[0].options
    assert [(e.url, e.concurrency) for e in options.endpoints] == [
        ("http://127.0.0.1:9/v1", 16), ("http://127.0.0.2:9/v1", None), ("http://127.0.0.3:9/v1", 4)]
    assert model_info(options).backend_id == "openai:m@fleet:gpu-a#json"
    fewer = options.model_copy(update={"endpoints": options.endpoints[:1]})
    assert model_info(fewer).backend_id == "openai:m@fleet:gpu-a#json"  # a server less: the same model
    data["models"][0]["fleet"] = "gpu-b"
    assert model_info(load_audit(write(tmp_path, data)).models[0].options).backend_id == "openai:m@fleet:gpu-b#json"


def test_same_model_twice_is_refused(tmp_path: Path) -> None:
    data = {**SMALL, "models": [{"name": "A", "model": "fake:a"}, {"name": "B", "model": "fake:a"}]}
    audit = load_audit(write(tmp_path, data))
    with pytest.raises(ValueError, match=r"models\[1\]: the same model as models\[0\] \(fake:a\)"):
        check_models(audit)


def test_embedded_model_id_without_loading_it() -> None:
    from biasatlas.backends.local.identity import identify
    from biasatlas.backends.local.models import LocalOptions, locate

    info = model_info(BackendOptions(model="smollm2"))
    assert info.backend_id == identify(locate("smollm2"), LocalOptions()).id
    assert info.backend_id.startswith("local:smollm2@")
    bf16 = model_info(BackendOptions(model="smollm2", dtype="bfloat16"))
    assert bf16.backend_id == f"{info.backend_id}#bfloat16"


def test_gguf_tokens_by_its_vocabulary_else_the_approximation(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("llama_cpp")  # the server extra, installed for the tests
    info = model_info(BackendOptions(model="smollm2"))
    assert info.tokens_by == "the model's tokenizer"
    assert info.count_tokens("Hello world") == 2  # "Hello", " world"; 4 characters per token would say 3
    assert approximate_tokens("Hello world") == 3
    import importlib.util

    find_spec = importlib.util.find_spec
    without = lambda name, *a: None if name == "llama_cpp" else find_spec(name, *a)  # noqa: E731
    monkeypatch.setattr(importlib.util, "find_spec", without)
    info = model_info(BackendOptions(model="smollm2"))
    assert info.count_tokens is approximate_tokens and info.tokens_by == "≈ 4 characters per token"


def test_tokenizer_of_a_model_directory(tmp_path: Path) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import models, pre_tokenizers

    tok = tokenizers.Tokenizer(models.WordLevel({"a": 0, "b": 1, "[UNK]": 2}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    folder = tmp_path / "model"
    folder.mkdir()
    tok.save(str(folder / "tokenizer.json"))
    (folder / "config.json").write_text("{}")
    info = model_info(BackendOptions(model=str(folder)))
    assert info.tokens_by == "the model's tokenizer"
    assert info.count_tokens("a b a b abc") == 5  # words, not 4-character chunks (which give 3)
    assert info.backend_id is not None and info.backend_id.startswith("local:model@")


# ---- bad input: one line naming the file, the key path and the valid choices; nothing runs ----------
BAD: list[tuple[dict[str, Any], str]] = [
    ({"probes": {"contacts": {}}}, "probes.contacts: unknown probe; valid: contact, samaritan, stories, leakage"),
    ({"probes": {"debias": {}}}, "probes.debias: unknown probe; valid: contact, samaritan, stories, leakage"),
    ({"probes": {"contact": {"axez": ["religion"]}}}, "probes.contact.axez: unknown config key of contact; valid: "
     "languages, samples, limit, mode, max_tokens, temperature, axes, scales"),
    ({"probes": {"contact": {"seed": 3}}}, "probes.contact.seed: give seeds at the top level"),
    ({"probes": {"contact": {"languages": ["xx"]}}},
     "probes.contact.languages[0]: 'xx' is not a language of contact; valid: "
         "de, en, es, fr, hi, id, is, it, ko, pt, vi, zh"),
    ({"languages": ["en", "xx"]}, "languages[1]: unknown language 'xx'; valid: "
        "de, en, es, fr, hi, id, is, it, ko, pt, vi, zh"),
    ({"languages": ["is"], "probes": {"contact": {"limit": 3}, "leakage": {}}},
     "languages: leakage has none of is; give probes.leakage.languages (valid for leakage: en, ru, zh, hi)"),
    ({"models": [{"model": "fake:a", "temprature": 0}]}, "models[0].temprature: unknown model option; valid: name, "
     "model, base_url, endpoints, fleet, api_key_env, concurrency, http, adapter, batch_size, dtype, structured, "
     "choice_norm"),
    ({"models": [{"model": "openai:m", "endpoints": ["http://a:1/v1", "http://b:1/v1"]}]},
     "models[0]: 2 servers and no fleet name: name the fleet"),
    ({"models": [{"model": "openai:m", "fleet": "gpu fleet", "endpoints": ["http://a:1/v1"]}]},
     "models[0].fleet: fleet name 'gpu fleet': 1-64 letters, digits"),
    ({"models": [{"model": "openai:m", "fleet": "f", "endpoints": [{"url": "http://a:1/v1", "concurrency": 0}]}]},
     "models[0].endpoints[0].concurrency: Input should be greater than or equal to 1 (got 0)"),
    ({"models": [{"model": "openai:m", "fleet": "f", "endpoints": [{"url": "http://a:1/v1", "conc": 2}]}]},
     "models[0].endpoints[0].conc: Extra inputs are not permitted"),
    ({"models": [{"model": "openai:m", "fleet": "f", "endpoints": ["http://u:secret@a:1/v1#x"]}]},
     "models[0].endpoints[0]: the part after '#' ('x') must be the endpoint's concurrency"),
    ({"models": [{"model": "openai:m", "fleet": "f", "endpoints": "http://u:hunter2@a:1/v1"}]},
     "models[0].endpoints: Input should be a valid list (got 'http://***@a:1/v1')"),
    ({"models": [{"model": "openai:m", "fleet": "f", "endpoints": ["a:1/v1"]}]},
     "models[0].endpoints[0].url: an endpoint URL must start with http:// or https://"),
    ({"models": [{"model": "openai:m", "fleet": "f", "base_url": "http://a:1/v1", "endpoints": ["http://b:1/v1"]}]},
     "models[0]: give base_url (one server) or endpoints (a fleet), not both"),
    ({"models": [{"model": "fake:a", "dtype": "int3"}]},
     "models[0].dtype: unknown dtype 'int3'; valid: auto, float32, bfloat16, float16"),
    ({"models": [{"model": "fake:a", "http": {"price": 1}}]}, "models[0].http.price: unknown HTTP setting; valid: "
     "timeout, connect_timeout"),
    ({"models": [{"model": "fake:a", "http": {"price_prompt": -1}}]}, "models[0].http.price_prompt: Input should be "
     "greater than or equal to 0"),
    ({"models": [{"model": "fake:a", "structured": "maybe"}]}, "models[0].structured: Input should be 'auto' or 'off'"),
    ({"models": [{"name": "A", "model": "fake:a"}, {"name": "A", "model": "fake:b"}]},
     "models[1].name: 'A' is the name of models[0] too"),
    ({"models": [{"name": "A"}]}, "models[0].model: missing"),
    ({"models": []}, "models: missing or empty"),
    ({"modles": []}, "modles: unknown key; valid: title, models, probes, languages, samples, seeds"),
    ({"samples": 0}, "samples: must be a whole number of at least 1 (got 0)"),
    ({"seeds": [1, "x"]}, "seeds[1]: must be a whole number (got 'x')"),
    ({"probes": {"contact": {"mode": "vote"}}}, "probes.contact.mode: 'vote' is not a mode of contact; valid: "
     "choice, generate"),
    ({"probes": {"contact": {"limit": 0}}}, "probes.contact.limit: Input should be greater than or equal to 1"),
    ({"probes": {"contact": {"scales": ["sometimes"]}}}, "probes.contact.scales: unknown scale 'sometimes'; valid: "
     "certainty, likelihood, frequency"),
    ({"probes": {"contact": {"axes": ["hobby"]}}}, "probes.contact: unknown axis 'hobby'"),
    ({"probes": {"leakage": {"languages": ["en"], "samples": 3}}}, "probes.leakage: --samples applies to --mode "
     "generate"),
    ({"models": [{"model": "nosuch.gguf"}]}, "models[0].model: no such GGUF file"),
]


@pytest.mark.parametrize(("change", "message"), BAD, ids=[m.split(":")[0] for _, m in BAD])
def test_bad_input_one_line_before_anything_runs(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    data = {**SMALL, **change}
    path = write(tmp_path, data, "my-audit.yaml")
    study = tmp_path / "study"
    for extra in ([], ["--plan-only"]):  # plan-only refuses what the run refuses, with the same line (issue 28)
        line = one_line_error(runner.invoke(app, ["audit", str(path), "--study", str(study), *extra]))
        assert f"{path}: " in line
        assert message in line
    assert not study.exists()


@pytest.mark.parametrize(("text", "message"), [
    ("models: [a\n", "not valid YAML at line 2"),
    ("models: [{model: fake:a}]\nprobes: {contact: {}}\nprobes: {samaritan: {}}\n", "key 'probes' is given twice"),
    ("- a\n- b\n", "expected a mapping with the keys title, models, probes"),
])
def test_unreadable_files(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "a.yaml"
    path.write_text(text)
    line = one_line_error(runner.invoke(app, ["audit", str(path), "--study", str(tmp_path / "s")]))
    assert str(path) in line and message in line


def test_missing_file(tmp_path: Path) -> None:
    line = one_line_error(runner.invoke(app, ["audit", str(tmp_path / "no.yaml"), "--study", str(tmp_path / "s")]))
    assert "no.yaml: no such audit file" in line


# ---- plan-only ------------------------------------------------------------------------------------
def plan_json(path: Path, study: Path) -> dict[str, Any]:
    result = runner.invoke(app, ["audit", str(path), "--study", str(study), "--plan-only", "--json"])
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.stdout))


def test_plan_only_writes_nothing_and_counts(tmp_path: Path) -> None:
    path = write(tmp_path, SMALL)
    study = tmp_path / "study"
    plan = plan_json(path, study)
    assert not study.exists()
    cells = plan["cells"]
    assert [(c["model"], c["probe"], c["language"]) for c in cells] == [
        ("Alpha", "contact", "de"), ("Alpha", "samaritan", "en"), ("Beta", "contact", "de"),
        ("Beta", "samaritan", "en")]
    contact = cells[0]
    assert (contact["prompts"], contact["requests"], contact["cached"], contact["to_ask"]) == (9, 9, 0, 9)
    assert contact["backend_id"] == "fake:a" and contact["mode"] == "choice"
    assert contact["completion_tokens"] == 9  # choice mode: one token per request
    samaritan = cells[1]
    from biasatlas.probes.samaritan.plan import DEFAULT_MAX_TOKENS

    # at most max_tokens per request (the Samaritan default, 512 since chat models' answers were measured)
    assert samaritan["completion_tokens"] == samaritan["requests"] * DEFAULT_MAX_TOKENS
    assert contact["cost_usd"] is None and contact["seconds"] is None
    assert plan["totals"]["requests"] == sum(c["requests"] for c in cells)
    assert "Alpha: tokens counted with ≈ 4 characters per token" in plan["notes"]


def test_plan_only_tokens_and_cost(tmp_path: Path) -> None:
    data = {**SMALL, "models": [{"name": "Paid", "model": "openai:m", "base_url": "http://127.0.0.1:9",
                                 "http": {"price_prompt": 1.0, "price_completion": 10.0}}]}
    plan = plan_json(write(tmp_path, data), tmp_path / "s")
    prompts = plan_audit(write(tmp_path, data)).prompts[0]
    expected_prompt_tokens = sum(approximate_tokens(p.text) for p in prompts)
    contact = plan["cells"][0]
    assert contact["prompt_tokens"] == expected_prompt_tokens
    assert contact["cost_usd"] == pytest.approx(expected_prompt_tokens * 1.0 / 1e6 + 9 * 10.0 / 1e6)
    assert plan["totals"]["cost_usd"] == pytest.approx(sum(c["cost_usd"] for c in plan["cells"]))


def test_plan_only_unknown_model(tmp_path: Path) -> None:
    # the run refuses a model it cannot open, so plan-only does too (it used to plan it with a note, exit 0)
    data = {**SMALL, "models": [{"name": "Gone", "model": "nosuch.gguf"}]}
    path = write(tmp_path, data)
    line = one_line_error(runner.invoke(app, ["audit", str(path), "--study", str(tmp_path / "s"), "--plan-only"]))
    assert line == f"error: {path}: models[0].model: no such GGUF file: {tmp_path / 'nosuch.gguf'}"


# ---- runs ---------------------------------------------------------------------------------------
def test_run_resume_tags_and_plan_after(tmp_path: Path) -> None:
    path = write(tmp_path, SMALL)
    study = tmp_path / "study"
    first = runner.invoke(app, ["audit", str(path), "--study", str(study)])
    assert first.exit_code == 0, first.output
    assert (study / "report.html").is_file()
    with Store(study) as store:
        assert display_names(store) == {"fake:a": "Alpha", "fake:b": "Beta"}
        runs = store.runs()
        assert len(runs) == 4
        config = json.loads(runs["config_json"].iloc[0])
        assert config["audit"] == {"file": str(path), "model": "Alpha"}
        answers = store.response_count()
    plan = plan_json(path, study)
    assert all(c["cached"] == c["requests"] and c["to_ask"] == 0 for c in plan["cells"])
    assert all(c["seconds"] == 0 for c in plan["cells"])  # nothing left: no time, measured pace known
    again = runner.invoke(app, ["audit", str(path), "--study", str(study)])
    assert again.exit_code == 0, again.output
    with Store(study) as store:
        assert store.response_count() == answers
        runs = store.runs()
        # the rerun's runs asked nothing: recorded as such (issue 28), not as four more "complete" runs
        assert list(runs["status"]) == ["complete"] * 4 + ["nothing to ask"] * 4
        assert all(json.loads(c)["audit"]["model"] in ("Alpha", "Beta") for c in runs["config_json"])
    assert again.output.count("(nothing to ask: every answer was in the study)") == 4


def test_summary_json_has_each_probe(tmp_path: Path) -> None:
    study = tmp_path / "study"
    assert runner.invoke(app, ["audit", str(write(tmp_path, SMALL)), "--study", str(study)]).exit_code == 0
    result = runner.invoke(app, ["summary", "--study", str(study), "--json"])
    assert result.exit_code == 0, result.output
    assert {"contact", "samaritan"} <= set(json.loads(result.stdout))


class _Failing(FakeBackend):
    def _respond(self, requests: Sequence[Request], choice: bool) -> Iterator[Response]:
        for request in requests:
            yield Response(key=request.cache_key(self.id), backend_id=self.id, error="scripted failure")


def test_failures_exit_3_and_interrupt_130(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, SMALL)
    study = tmp_path / "study"
    opened: list[str] = []

    def failing(self: BackendOptions) -> Any:
        opened.append(self.model)
        return _Failing(name=self.model.partition(":")[2])

    monkeypatch.setattr(BackendOptions, "open", failing)
    result = runner.invoke(app, ["audit", str(path), "--study", str(study)])
    assert result.exit_code == 3, result.output
    assert "finished with failures" in result.output
    assert opened == ["fake:a", "fake:b"]  # each model opened once for all its cells

    def interrupting(self: BackendOptions) -> Any:
        return FakeBackend(name=self.model.partition(":")[2], interrupt_after=4)

    monkeypatch.setattr(BackendOptions, "open", interrupting)
    monkeypatch.setattr(sys, "argv", ["biasatlas", "audit", str(path), "--study", str(study)])
    result = runner.invoke(app, ["audit", str(path), "--study", str(study)])
    assert result.exit_code == 130, result.output
    assert "interrupted" in result.output and "Resume: biasatlas audit" in result.output
    with Store(study) as store:
        assert store.response_count() == 4
        assert display_names(store) == {"fake:a": "Alpha", "fake:b": "Beta"}  # interrupted runs are tagged too
    monkeypatch.undo()
    result = runner.invoke(app, ["audit", str(path), "--study", str(study)])
    assert result.exit_code == 0, result.output
    assert (study / DB_NAME).is_file()


def test_shared_backend_is_opened_once_and_lent() -> None:
    options = SharedBackendOptions(model="fake:a")
    first, second = options.open(), options.open()
    assert first._backend is second._backend  # type: ignore[attr-defined]
    first.close()  # a probe closing its lent backend does not close the model
    copy = options.model_copy()
    assert copy.open()._backend is first._backend  # type: ignore[attr-defined]
    other = options.model_copy(update={"model": "fake:b"}).open()
    assert isinstance(other, FakeBackend) and other.id == "fake:b"
    assert options.backend_id == "fake:a"
    options.close()
    assert options.backend_id is None


def test_display_names_never_merge_two_models(tmp_path: Path) -> None:
    study = tmp_path / "study"
    probes = {"contact": {"languages": ["en"], "axes": ["religion"], "limit": 3}}
    first = write(tmp_path, {"models": [{"name": "M", "model": "fake:a"}], "probes": probes}, "one.yaml")
    models = [{"name": "M", "model": "fake:b"}, {"name": "N", "model": "fake:c"}]
    second = write(tmp_path, {"models": models, "probes": probes}, "two.yaml")
    for path in (first, second):
        assert runner.invoke(app, ["audit", str(path), "--study", str(study)]).exit_code == 0
    with Store(study) as store:
        assert display_names(store) == {"fake:a": "M [fake:a]", "fake:b": "M [fake:b]", "fake:c": "N"}


class _Stopping(FakeBackend):
    def _respond(self, requests: Sequence[Request], choice: bool) -> Iterator[Response]:
        from biasatlas.backends.base import BackendStopped

        raise BackendStopped("scripted: the server keeps refusing")
        yield  # a generator, like the backends


def test_a_stopped_model_skips_its_cells_exit_4(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, SMALL)
    study = tmp_path / "study"

    def opened(self: BackendOptions) -> Any:
        name = self.model.partition(":")[2]
        return _Stopping(name=name) if name == "a" else FakeBackend(name=name)

    monkeypatch.setattr(BackendOptions, "open", opened)
    result = runner.invoke(app, ["audit", str(path), "--study", str(study)])
    assert result.exit_code == 4, result.output
    assert "skipped Alpha · samaritan · en: its model stopped earlier" in result.output
    assert "scripted: the server keeps refusing" in result.output
    with Store(study) as store:
        assert set(store.runs()["backend_id"]) == {"fake:a", "fake:b"}
        assert len(store.runs()) == 3  # Alpha's first cell, then Beta's two
        assert (store.frame("samaritan")["status"] == "answered").all()
