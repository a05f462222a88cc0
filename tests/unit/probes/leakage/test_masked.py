"""Masked-model (ILPS) scoring, tested on a tiny randomly initialised BertForMaskedLM built from a config.

No real masked model can be downloaded in this environment, so these tests check the scoring arithmetic
(pseudo-log-likelihood of the option tokens, the increased log-probability score) rather than any
model's associations.
"""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from biasatlas.backends.masked import SLOT, MaskedLMBackend  # noqa: E402
from biasatlas.probes.leakage import plan as leakage  # noqa: E402
from biasatlas.probes.leakage.scores import association_cells, matrix  # noqa: E402
from biasatlas.records import GenerationSettings, Message, Prompt, Request  # noqa: E402
from biasatlas.runner import run_plan  # noqa: E402
from biasatlas.store import Store  # noqa: E402

WORDS = [
    "a", "an", "woman", "man", "immigrant", "person", "is", "usually", "everyone", "knows", "that", "people",
    "say", "very", "power", "##less", "##ful", "rich", "poor", "warm", "cold", ".",
]


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory) -> MaskedLMBackend:
    tokenizer = _tiny_tokenizer()
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2,
                                     num_attention_heads=2, intermediate_size=64, max_position_embeddings=64)
    model = transformers.BertForMaskedLM(config)
    encoded = tokenizer("A woman is powerless.").input_ids
    assert tokenizer.unk_token_id not in encoded and len(encoded) == 8  # [CLS] a woman is power ##less . [SEP]
    return MaskedLMBackend(model, tokenizer, "tiny-bert")


def _tiny_tokenizer() -> object:
    """A BERT-style WordPiece tokenizer over WORDS, built with `tokenizers` (stable across transformers 4/5)."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS])}
    core = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    core.normalizer = normalizers.BertNormalizer(lowercase=True)
    core.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    core.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])]
    )
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=core, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]",
        mask_token="[MASK]",
    )


def _request(text: str, options: tuple[str, ...]) -> Request:
    prompt = Prompt(probe="leakage", language="en", messages=(Message(role="user", content=text),), options=options)
    return Request(prompt=prompt, settings=GenerationSettings(mode="choice"))


def test_single_token_option_is_the_masked_log_probability(backend: MaskedLMBackend) -> None:
    response = next(iter(backend.score_choices([_request(f"A woman is {SLOT}.", ("rich", "poor"))])))
    tok, model = backend.tokenizer, backend.model
    ids = tok("a woman is [MASK].", return_tensors="pt").input_ids
    position = int((ids[0] == tok.mask_token_id).nonzero()[0, 0])
    with torch.inference_mode():
        logp = torch.log_softmax(model(input_ids=ids).logits[0, position], dim=-1)
    for word in ("rich", "poor"):
        expected = float(logp[tok.convert_tokens_to_ids(word)])
        assert response.info["option_logprobs"][word] == pytest.approx(expected, abs=1e-5)
    assert sum(response.option_probs.values()) == pytest.approx(1.0)


def test_multi_token_option_sums_each_token_masked_in_turn(backend: MaskedLMBackend) -> None:
    response = next(iter(backend.score_choices([_request(f"A man is {SLOT}.", ("powerless",))])))
    tok, model = backend.tokenizer, backend.model
    full = tok("a man is powerless.", return_tensors="pt").input_ids[0]
    pieces = [tok.convert_tokens_to_ids(t) for t in ("power", "##less")]
    total = 0.0
    for piece in pieces:
        position = int((full == piece).nonzero()[0, 0])
        masked = full.clone()
        masked[position] = tok.mask_token_id
        with torch.inference_mode():
            logits = model(input_ids=masked.unsqueeze(0)).logits[0, position]
        total += float(torch.log_softmax(logits, dim=-1)[piece])
    assert response.info["option_logprobs"]["powerless"] == pytest.approx(total, abs=1e-5)


def test_a_prompt_without_the_slot_is_an_error_response(backend: MaskedLMBackend) -> None:
    response = next(iter(backend.score_choices([_request("No slot here.", ("rich",))])))
    assert response.error is not None and SLOT in response.error


def test_ilps_cells_subtract_the_neutral_baseline(backend: MaskedLMBackend, tmp_path: Path) -> None:
    store = Store(tmp_path / "s")
    prompts = leakage.build_prompts(["en"], method="ilps", group_names=["woman", "man"])
    totals = run_plan(prompts, backend, store, GenerationSettings(mode="choice"), progress=False)
    assert totals.failed == 0 and totals.new == len(prompts) == 4 * 3
    frame = store.frame(probe="leakage")
    cells = association_cells(frame)
    m = matrix(cells, "masked:tiny-bert [ilps-pll]", "en")
    assert m[["woman", "man"]].notna().all().all() and m.drop(columns=["woman", "man"]).isna().all().all()
    # Recompute one cell by hand from the stored log-probabilities.
    import json

    def logp(group: str, template: int, trait: str) -> float:
        row = frame[(frame["group"] == group) & (frame["template_id"] == template)].iloc[0]
        form = row["options"][row["option_traits"].index(trait)]
        return float(json.loads(row["info_json"])["option_logprobs"][form])

    expected = sum(logp("woman", t, "warm") - logp("(neutral)", t, "warm") for t in range(4)) / 4
    assert m.loc["warm", "woman"] == pytest.approx(expected, abs=1e-5)
    # The summary names the score for what it is: ILPS on pseudo-log-likelihoods, not the paper's SeT.
    from biasatlas.probes.leakage.probe import PROBE

    summary = PROBE.summarise(store)
    (row,) = summary["coverage"]
    assert row["variant"] == "masked:tiny-bert [ilps-pll]" and "pseudo-log-likelihood" in row["measure"]
    assert any("not the sensitivity test (SeT)" in note for note in summary["notes"])


# ---- span-filling (T5-style) -----------------------------------------------------------------------------------
SPAN_WORDS = ["a", "woman", "is", "rich", "poor", "very", "."]


def _tiny_t5() -> tuple[object, object]:
    """A word-level tokenizer with T5's sentinels and eos, and a tiny random T5ForConditionalGeneration."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    specials = ["<pad>", "</s>", "<unk>", "<extra_id_0>", "<extra_id_1>"]
    vocab = {t: i for i, t in enumerate([*specials, *SPAN_WORDS])}
    core = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    core.normalizer = normalizers.Lowercase()
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    core.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 1)])
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>", eos_token="</s>",
                                                     unk_token="<unk>")
    tokenizer.add_special_tokens({"additional_special_tokens": ["<extra_id_0>", "<extra_id_1>"]})
    torch.manual_seed(0)
    config = transformers.T5Config(vocab_size=len(vocab), d_model=16, d_kv=8, d_ff=32, num_layers=1,
                                   num_heads=2, decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
    return transformers.T5ForConditionalGeneration(config), tokenizer


def test_span_backend_scores_the_option_between_the_sentinels() -> None:
    from biasatlas.backends.masked import SpanBackend

    model, tokenizer = _tiny_t5()
    backend = SpanBackend(model, tokenizer, "tiny-t5")
    response = next(iter(backend.score_choices([_request(f"a woman is {SLOT} .", ("rich", "very poor"))])))
    ids = tokenizer("a woman is <extra_id_0> .", return_tensors="pt").input_ids
    for option, words in (("rich", ["rich"]), ("very poor", ["very", "poor"])):
        target = tokenizer(f"<extra_id_0> {option} <extra_id_1>", return_tensors="pt").input_ids
        assert target[0, 0] == 3 and target[0, len(words) + 1] == 4  # sentinels around the option
        with torch.inference_mode():
            logits = model(input_ids=ids, labels=target).logits[0]
        logp = torch.log_softmax(logits, dim=-1)
        expected = sum(float(logp[k, target[0, k]]) for k in range(1, len(words) + 1))
        assert response.info["option_logprobs"][option] == pytest.approx(expected, abs=1e-5)
