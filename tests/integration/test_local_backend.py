"""The local backend on the real embedded model: its fast paths give exactly what a naive
implementation gives.

* choice scoring (batched, padded, shared prefix from the key/value cache, multi-token options
  finished from the cache) equals the brute-force log-likelihood of each option appended to the
  unpadded prompt, with prefix reuse on and off;
* greedy generation (own decoding loop, prefix cache, rows leaving the batch when they stop) equals
  transformers' ``generate`` on each prompt alone, and stops at the chat template's end-of-turn token;
* sampling is reproducible per request, whatever batch the request lands in;
* a cached re-run asks the model nothing;
* the id names a model by its weights (two checkpoints both called ``final`` are two models), and a
  run records the weights digest, quantisation and library versions;
* mean-per-token choice scoring is the brute-force sum divided by the option's token count.
* the converted copy of the GGUF file (``backends/local/converted.py``), which every other test loads,
  has the GGUF file's exact tensors, tokenizer, id and scores.
"""

from __future__ import annotations

import hashlib
import math
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
import torch

from biasatlas.backends.local import LocalBackend, LocalOptions, embedded_model_path
from biasatlas.backends.local.identity import CACHE_ENV
from biasatlas.records import GenerationSettings, Message, Prompt, Request, Response
from biasatlas.runner import run_plan
from biasatlas.store import Store

pytestmark = pytest.mark.slow

OPTION_SETS = [("Yes", "No"), ("Likely", "Unlikely"), ("Absolutely yes", "Certainly not", "Maybe")]
GROUPS = ["Deaf", "Buddhist", "working-class", "Icelandic"]


def _prompts() -> list[Prompt]:
    out = []
    for k, group in enumerate(GROUPS):
        options = OPTION_SETS[k % len(OPTION_SETS)]
        contact = "I met {g} neighbours last year and they helped me move house. " if k % 2 else ""
        text = (contact + "Should I invite {g} colleagues to my project team? Answer with one word: "
                + " or ".join(options) + ".").format(g=group)
        messages: tuple[Message, ...] = (Message(role="user", content=text),)
        if k == 3:  # a different system prompt: the prefix shared by the whole call gets short
            messages = (Message(role="system", content="Answer briefly."), *messages)
        out.append(Prompt(probe="t", language="en", messages=messages, options=options, meta={"k": k}))
    return out


@pytest.fixture(scope="module")
def backend() -> Iterator[LocalBackend]:
    """The embedded model read from its GGUF file itself (the converted copy off): the reference of the
    fast paths below and of the converted copy every other test loads."""
    from biasatlas.backends.local import converted

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(converted.MAX_MB_ENV, "0")
        b = LocalBackend("smollm2", LocalOptions(batch_size=4))
        b.load()  # now, with the copy off (a model from a file loads on first use)
    yield b
    b.close()


def _prompt_ids(backend: LocalBackend, request: Request) -> list[int]:
    return list(backend.tokenizer(backend.render(request), add_special_tokens=False)["input_ids"])


_REFERENCE: dict[tuple[str, str], object] = {}  # computed once per module run: the naive paths are slow


def _brute_force(backend: LocalBackend, request: Request) -> dict[str, float]:
    """log P(option tokens | prompt), one unpadded sequence per option, no cache."""
    key = ("choice", request.prompt.id)
    if key not in _REFERENCE:
        _REFERENCE[key] = _brute_force_uncached(backend, request)
    return _REFERENCE[key]  # type: ignore[return-value]


def _brute_force_uncached(backend: LocalBackend, request: Request) -> dict[str, float]:
    ids = _prompt_ids(backend, request)
    result = {}
    for option in request.prompt.options:
        option_ids = backend.tokenizer.encode(option, add_special_tokens=False)
        with torch.inference_mode():
            logits = backend.model(input_ids=torch.tensor([ids + option_ids])).logits[0]
        logp = torch.log_softmax(logits.float(), dim=-1)
        result[option] = sum(float(logp[len(ids) - 1 + k, t]) for k, t in enumerate(option_ids))
    return result


@pytest.mark.parametrize("reuse_prefix", [True, False])
def test_choice_scores_equal_brute_force_log_likelihood(backend: LocalBackend, reuse_prefix: bool) -> None:
    requests = [Request(prompt=p, settings=GenerationSettings(mode="choice")) for p in _prompts()]
    assert any(len(backend.tokenizer.encode(o, add_special_tokens=False)) > 1
               for r in requests for o in r.prompt.options), "some option must span several tokens"
    backend.options = backend.options.model_copy(update={"reuse_prefix": reuse_prefix})
    batches = list(backend._plan(requests))
    if reuse_prefix:
        assert all(b.prefix > 0 for b in batches)  # every batch shares at least the chat header
    else:
        assert all(b.prefix == 0 for b in batches)
    got = {r.key: r for r in backend.score_choices(requests)}
    assert len(got) == len(requests)
    for request in requests:
        response = got[request.cache_key(backend.id)]
        expected = _brute_force(backend, request)
        logprobs = response.info["option_logprobs"]
        for option in request.prompt.options:
            assert logprobs[option] == pytest.approx(expected[option], abs=1e-4)
        assert response.option_probs is not None
        assert sum(response.option_probs.values()) == pytest.approx(1.0)
        assert response.text == max(expected, key=lambda o: expected[o])
        assert response.prompt_tokens == len(_prompt_ids(backend, request))


def _hf_greedy(backend: LocalBackend, request: Request, max_tokens: int) -> str:
    key = (f"greedy{max_tokens}", request.prompt.id)
    if key not in _REFERENCE:
        _REFERENCE[key] = _hf_greedy_uncached(backend, request, max_tokens)
    return str(_REFERENCE[key])


def _hf_greedy_uncached(backend: LocalBackend, request: Request, max_tokens: int) -> str:
    enc = backend.tokenizer(backend.render(request), add_special_tokens=False, return_tensors="pt")
    with torch.inference_mode():
        out = backend.model.generate(
            **enc, max_new_tokens=max_tokens, do_sample=False, eos_token_id=sorted(backend._stop_ids),
            pad_token_id=backend.tokenizer.pad_token_id,
        )
    new = out[0, enc["input_ids"].shape[1] :].tolist()
    for i, token in enumerate(new):
        if token in backend._stop_ids:
            new = new[:i]
            break
    return str(backend.tokenizer.decode(new, skip_special_tokens=True)).strip()


def test_end_of_turn_token_stops_generation(backend: LocalBackend) -> None:
    assert backend.tokenizer.convert_tokens_to_ids("<|im_end|>") in backend._stop_ids


@pytest.mark.parametrize("reuse_prefix", [True, False])
def test_greedy_generation_equals_transformers_generate(backend: LocalBackend, reuse_prefix: bool) -> None:
    backend.options = backend.options.model_copy(update={"reuse_prefix": reuse_prefix})
    settings = GenerationSettings(mode="generate", max_tokens=6)
    requests = [Request(prompt=p, settings=settings) for p in _prompts()]
    got = {r.key: r for r in backend.generate(requests)}
    for request in requests:
        response = got[request.cache_key(backend.id)]
        assert response.text == _hf_greedy(backend, request, 6)
        assert response.completion_tokens is not None and response.completion_tokens <= 6
        if response.finish_reason == "stop":
            assert response.completion_tokens < 6
    assert any(r.finish_reason == "stop" for r in got.values())  # short answers end early


def test_sampling_is_reproducible_per_request(backend: LocalBackend) -> None:
    settings = GenerationSettings(mode="generate", max_tokens=6, temperature=1.0, top_p=0.95, seed=11)
    requests = [Request(prompt=p, settings=settings, sample_index=s) for p in _prompts()[:2] for s in (0, 1)]

    def texts(batch_size: int, order: Sequence[Request]) -> dict[str, str | None]:
        backend.options = backend.options.model_copy(update={"batch_size": batch_size})
        return {r.key: r.text for r in backend.generate(order)}

    try:
        first = texts(4, requests)
        again = texts(3, list(reversed(requests)))  # other batches, other neighbours, other padding
    finally:
        backend.options = backend.options.model_copy(update={"batch_size": 4})
    assert first == again
    # different sample indices draw differently somewhere
    assert len({first[r.cache_key(backend.id)] for r in requests}) > 2


class CountingBackend:
    """Wraps a backend and counts every call that reaches it."""

    def __init__(self, inner: LocalBackend) -> None:
        self.inner, self.id, self.calls = inner, inner.id, 0

    def score_choices(self, requests: Sequence[Request]) -> Iterator[Response]:
        self.calls += 1
        return self.inner.score_choices(requests)

    def generate(self, requests: Sequence[Request]) -> Iterator[Response]:
        self.calls += 1
        return self.inner.generate(requests)

    def close(self) -> None:
        pass


def test_cached_rerun_makes_no_model_call(backend: LocalBackend, tmp_path: Path) -> None:
    prompts = _prompts()
    settings = GenerationSettings(mode="choice")
    with Store(tmp_path / "study") as store:
        first = CountingBackend(backend)
        totals = run_plan(prompts, first, store, settings, progress=False)
        assert (totals.new, totals.cached, first.calls) == (len(prompts), 0, 1)
    with Store(tmp_path / "study") as store:
        second = CountingBackend(backend)
        totals = run_plan(prompts, second, store, settings, progress=False)
        assert (totals.new, totals.cached, second.calls) == (0, len(prompts), 0)


# ---- model identity ------------------------------------------------------------------------------
@pytest.fixture
def digest_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))


def test_the_embedded_model_is_named_by_its_weights(backend: LocalBackend) -> None:
    digest = hashlib.sha256(embedded_model_path().read_bytes()).hexdigest()
    assert backend.id == f"local:smollm2@{digest[:12]}"
    described = backend.describe()
    assert described["weights_sha256"] == digest
    assert (described["quantization"], described["loaded_dtype"], described["choice_norm"]) == (
        "Q4_1", "float32", "sum")


def _tiny_checkpoint(backend: LocalBackend, where: Path, seed: int) -> Path:
    """A one-layer Llama with the embedded model's tokenizer, saved as a trainer would."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=len(backend.tokenizer), hidden_size=16, intermediate_size=32,
                         num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2)
    LlamaForCausalLM(config).save_pretrained(where)
    backend.tokenizer.save_pretrained(where)
    return where


def test_checkpoints_named_alike_are_told_apart_and_copies_are_not(
    backend: LocalBackend, tmp_path: Path, digest_cache: None
) -> None:
    run1 = _tiny_checkpoint(backend, tmp_path / "run1" / "final", seed=1)
    run2 = _tiny_checkpoint(backend, tmp_path / "run2" / "final", seed=2)
    copy = tmp_path / "copy" / "final"
    shutil.copytree(run1, copy)
    ids = []
    for path in (run1, run2, copy):
        model = LocalBackend(str(path), LocalOptions(batch_size=2))
        ids.append(model.id)
        model.close()
    assert ids[0] != ids[1]
    assert ids[0] == ids[2]
    # and so the second checkpoint is asked, not served the first one's cached answers
    prompts = _prompts()[:2]
    settings = GenerationSettings(mode="choice")
    with Store(tmp_path / "study") as store:
        for path in (run1, run2):
            totals = run_plan(prompts, LocalBackend(str(path), LocalOptions(batch_size=2)), store, settings,
                              progress=False)
            assert (totals.cached, totals.new) == (0, len(prompts))
        assert store.frame()["model"].nunique() == 2


def test_a_run_records_the_model_and_the_libraries(backend: LocalBackend, tmp_path: Path) -> None:
    with Store(tmp_path / "study") as store:
        run_plan(_prompts()[:1], backend, store, GenerationSettings(mode="choice"), progress=False)
        run = store.last_run()
    assert run is not None
    config = run["config"]
    assert config["backend"]["weights_sha256"] == backend.identity.weights_digest
    assert config["backend"]["quantization"] == "Q4_1"
    assert config["versions"]["torch"] == str(torch.__version__)
    assert config["versions"]["transformers"]


# ---- choice normalisation ------------------------------------------------------------------------
def test_mean_per_token_scoring(backend: LocalBackend) -> None:
    mean = LocalBackend("smollm2", LocalOptions(batch_size=4, choice_norm="mean"))
    try:
        assert mean.id == backend.id + "#mean"  # cached sums are never served as means
        requests = [Request(prompt=p, settings=GenerationSettings(mode="choice")) for p in _prompts()]
        by_sum = {r.key: r for r in backend.score_choices(requests)}
        by_mean = {r.key: r for r in mean.score_choices(requests)}
        differ = 0
        for request in requests:
            got = by_mean[request.cache_key(mean.id)]
            summed = by_sum[request.cache_key(backend.id)]
            tokens = {o: len(backend.tokenizer.encode(o, add_special_tokens=False)) for o in request.prompt.options}
            assert got.info["option_tokens"] == tokens and got.info["choice_norm"] == "mean"
            expected = _brute_force(backend, request)
            scores = {o: expected[o] / tokens[o] for o in expected}
            total = sum(math.exp(v) for v in scores.values())
            assert got.option_probs is not None and summed.option_probs is not None
            for option in request.prompt.options:
                assert got.option_probs[option] == pytest.approx(math.exp(scores[option]) / total, abs=1e-4)
            if len(set(tokens.values())) > 1:
                differ += any(abs(got.option_probs[o] - summed.option_probs[o]) > 1e-3 for o in tokens)
        assert differ > 0  # options of different token counts: mean is not sum
    finally:
        mean.close()


# ---- the converted copy of a GGUF file -------------------------------------------------------------
def test_the_converted_copy_answers_exactly_as_the_gguf_file(backend: LocalBackend) -> None:
    """A load from the converted copy (kept by the first load of the session) equals reading the GGUF
    file itself (the module's backend): the same tensors, tokenizer, chat template, stop tokens, id and
    scores."""
    import transformers

    from biasatlas.backends.local import converted

    folder = converted.converted_dir(embedded_model_path(), transformers.__version__)
    kept = LocalBackend("smollm2", LocalOptions(batch_size=4))
    kept.load()  # the copy was made by an earlier load, or is made now
    assert (folder / converted.DONE).is_file()
    try:
        backend.options = backend.options.model_copy(update={"reuse_prefix": True})  # (a test above turned it off)
        assert kept.id == backend.id and kept.describe() == backend.describe()
        ours, theirs = kept.model.state_dict(), backend.model.state_dict()
        assert set(ours) == set(theirs) and all(torch.equal(ours[k], theirs[k]) for k in ours)
        assert kept.tokenizer.chat_template == backend.tokenizer.chat_template
        assert kept._stop_ids == backend._stop_ids
        requests = [Request(prompt=p, settings=GenerationSettings(mode="choice")) for p in _prompts()]
        assert [kept.render(r) for r in requests] == [backend.render(r) for r in requests]
        a = {r.key: r.option_probs for r in kept.score_choices(requests)}
        b = {r.key: r.option_probs for r in backend.score_choices(requests)}
        assert a == b
    finally:
        kept.close()
