"""The HTTP backend against a real llama.cpp server (llama-cpp-python's, the ``server`` extra).

* Choice scoring agrees with the local backend on the same weights: 12 contact prompts, option
  probabilities within 0.02. The server reads the embedded SmolLM2 Q4_1 weights written out as F32
  (``llama_model_quantize``, dequantising only); the local backend reads the embedded file itself,
  which transformers de-quantizes to the very same float32 numbers (both use gguf's dequantization:
  checked tensor by tensor, max |difference| 0). On the Q4_1 file itself the two differ by up to
  ~0.08: llama.cpp multiplies Q4_1 weights with activations quantised to 8 bits, and its own results
  move by ~0.05 with the batch size alone. That is arithmetic, not scoring, so the test compares the
  scoring on weights both run exactly.
* Structured answers: the share of readable answers with a JSON answer format vs free text (the
  session's shared server, tests/integration/conftest.py).
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from biasatlas.backends.local import LocalBackend
from biasatlas.backends.openai_compat import OpenAIBackend, OpenAIOptions
from biasatlas.probes.contact.probe import ContactConfig, build_prompts
from biasatlas.records import GenerationSettings, Prompt, Request

pytestmark = pytest.mark.slow

CHOICE = GenerationSettings(mode="choice")


@pytest.fixture(scope="module")
def f32_gguf(tmp_path_factory: pytest.TempPathFactory, llama_servers: ModuleType) -> Path:
    """The embedded SmolLM2 weights as an F32 GGUF (the same numbers, de-quantised)."""
    return Path(llama_servers.requantized(tmp_path_factory.mktemp("gguf"), "f32"))


def contact_prompts() -> list[Prompt]:
    """12 contact prompts: 6 yes/no (English, certainty) and one with options of several tokens per language
    (en, de, is) x scale (likelihood, frequency): every option set the plan has, once.

    (40, then 24, until the suite outgrew its budget: the F32 server evaluates ~75 tokens/s a thread, so the
    prompts are this test's cost; 12 keep every assertion's case.)"""
    several = [build_prompts(ContactConfig(languages=[language], scales=[scale], limit=3))[1]
               for language in ("en", "de", "is") for scale in ("likelihood", "frequency")]
    return build_prompts(ContactConfig(limit=30))[:6] + several


def _same_numbers(f32_gguf: Path, local: LocalBackend) -> None:
    """The F32 file's tensors are the local model's: the embeddings (Q8_0 in the embedded file) and a
    feed-forward matrix (Q4_1), compared exactly."""
    import numpy as np
    import torch
    from gguf import GGUFReader

    tensors = {t.name: t for t in GGUFReader(str(f32_gguf)).tensors}
    model = local.model
    pairs = [("token_embd.weight", model.get_input_embeddings().weight),
             ("blk.0.ffn_down.weight", model.model.layers[0].mlp.down_proj.weight)]
    for name, weight in pairs:
        ours = torch.from_numpy(np.array(tensors[name].data, dtype=np.float32).reshape(weight.shape))  # a copy
        assert torch.equal(ours, weight.detach().float()), name


def test_choice_probabilities_agree_with_the_local_backend(f32_gguf: Path, llama_servers: ModuleType) -> None:
    prompts = contact_prompts()
    assert len(prompts) == 12 and len({p.options for p in prompts}) >= 4
    requests = [Request(prompt=p, settings=CHOICE) for p in prompts]
    local = LocalBackend("smollm2")  # the F32 file's numbers: see the module's docstring
    _same_numbers(f32_gguf, local)
    by_local = {r.key: r for r in local.score_choices(requests)}
    local.close()
    # Two one-thread servers of the F32 file as a fleet (llama.cpp evaluates F32 at ~75 tokens/s a thread here)
    with llama_servers.llama_fleet(f32_gguf, 2, n_ctx=2048) as fleet:
        http = OpenAIBackend("smollm2", OpenAIOptions(endpoints=fleet.urls, fleet="f32", concurrency=4, timeout=600,
                                                      deadline=3600, chat_template=str(f32_gguf)))
        by_http = {r.key: r for r in http.score_choices(requests)}
        stats = http.run_stats()
        http.close()
    diffs = []
    for request in requests:
        a, b = by_local[request.cache_key(local.id)], by_http[request.cache_key(http.id)]
        assert b.error is None and b.option_probs is not None, b.error
        assert b.info["choice_method"] == "completions"
        # The same tokens counted: the option's span in the echoed prompt is the right one.
        assert b.info["option_tokens"] == a.info.get("option_tokens", b.info["option_tokens"])
        diffs.append(max(abs(a.option_probs[o] - b.option_probs[o]) for o in request.prompt.options))  # type: ignore[index]
    print(f"\nlocal vs llama.cpp server, {len(prompts)} contact prompts: max |dP| {max(diffs):.5f}, "
          f"mean {sum(diffs) / len(diffs):.5f}; {stats['choice_scoring']}")
    assert max(diffs) <= 0.02
    assert stats["choice_scoring"]["methods"] == {"completions": len(prompts)}
    assert any(n > 1 for r in by_http.values() for n in r.info["option_tokens"].values())


def _readable(prompt: Prompt, text: str | None) -> bool:
    from biasatlas.parsing.answers import AnswerParser

    return AnswerParser(str(prompt.meta["scale"]), prompt.language).parse(text).value is not None


def test_structured_answers_are_readable(llama_url: str) -> None:
    # 18 prompts: one set of 3 per language and scale; the structured share must be 1.0
    prompts = build_prompts(ContactConfig(languages=["en", "de", "is"], scales=["certainty", "likelihood"], limit=18))
    requests = [Request(prompt=p, settings=GenerationSettings(max_tokens=16)) for p in prompts]
    shares, runs = {}, {}
    for mode in ("auto", "off"):
        backend = OpenAIBackend("smollm2", OpenAIOptions(base_url=llama_url, concurrency=2, timeout=300, deadline=3600,
                                                         structured=mode))
        answers = list(backend.generate(requests))
        runs[mode] = backend.run_stats()
        backend.close()
        by_key = {r.key: r for r in answers}
        texts = [by_key[r.cache_key(backend.id)].text for r in requests]
        assert all(by_key[r.cache_key(backend.id)].error is None for r in requests)
        shares[mode] = sum(_readable(r.prompt, t) for r, t in zip(requests, texts, strict=True)) / len(requests)
        if mode == "auto":
            assert all(t in r.prompt.options for r, t in zip(requests, texts, strict=True))
    print(f"\nreadable answers, {len(requests)} contact prompts: structured {shares['auto']:.2f}, "
          f"free text {shares['off']:.2f}; {runs['auto'].get('structured')}")
    # llama-cpp-python refuses OpenAI's json_schema (an HTTP 500, once) and takes json_object + schema.
    assert runs["auto"]["structured"] == {"format": "json_object", "structured": len(requests)}
    assert runs["auto"]["http"]["attempts"] == len(requests) + 1
    assert shares["auto"] == 1.0 and shares["auto"] >= shares["off"]
