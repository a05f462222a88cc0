"""The converted-GGUF cache: a complete folder or none, the same tensors back, damaged folders ignored.

A tiny random Llama and a word-level tokenizer stand in for a de-quantized GGUF model (the real
embedded model's round trip is tests/integration/test_local_backend.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from biasatlas.backends.local import converted
from biasatlas.backends.local.identity import CACHE_ENV


@pytest.fixture
def tiny(tmp_path: Path) -> tuple[Any, Any]:
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(["<unk>", "<eos>", "yes", "no", "hello", "world"])}
    backend = Tokenizer(WordLevel(vocab, unk_token="<unk>"))
    backend.pre_tokenizer = Whitespace()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="<unk>", eos_token="<eos>")
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(vocab), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=2, tie_word_embeddings=True)
    return tokenizer, LlamaForCausalLM(config).eval()


def test_a_round_trip_gives_the_same_tensors_and_tokenizer(tiny: tuple[Any, Any], tmp_path: Path) -> None:
    tokenizer, model = tiny
    folder = tmp_path / "converted" / "abc"
    assert converted.load_converted(folder, torch.float32) is None  # nothing kept yet
    assert converted.save_converted(folder, tokenizer, model, tmp_path / "m.gguf")
    assert (folder / converted.DONE).is_file() and not list(folder.parent.glob(".abc-*"))  # no leftovers
    loaded = converted.load_converted(folder, torch.float32)
    assert loaded is not None
    tok2, model2 = loaded
    assert tok2("hello world yes")["input_ids"] == tokenizer("hello world yes")["input_ids"]
    ours, theirs = model.state_dict(), model2.state_dict()
    assert set(ours) == set(theirs)
    assert all(torch.equal(ours[k], theirs[k]) for k in ours)
    ids = torch.tensor([[2, 3, 4]])
    with torch.inference_mode():
        assert torch.equal(model(ids).logits, model2(ids).logits)
    assert not converted.save_converted(folder, tokenizer, model, tmp_path / "m.gguf")  # kept once


def test_an_incomplete_or_damaged_folder_is_not_used(tiny: tuple[Any, Any], tmp_path: Path) -> None:
    tokenizer, model = tiny
    folder = tmp_path / "converted" / "abc"
    assert converted.save_converted(folder, tokenizer, model, tmp_path / "m.gguf")
    (folder / "model.safetensors").write_bytes(b"not a safetensors file")
    assert converted.load_converted(folder, torch.float32) is None  # read the GGUF instead
    (folder / converted.DONE).unlink()
    assert converted.load_converted(folder, torch.float32) is None  # a crash before the marker
    assert converted.save_converted(folder, tokenizer, model, tmp_path / "m.gguf")  # replaced by a whole one
    assert converted.load_converted(folder, torch.float32) is not None


def test_the_size_limit_and_switching_it_off(tiny: tuple[Any, Any], tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    tokenizer, model = tiny
    monkeypatch.setenv(converted.MAX_MB_ENV, "0")
    assert converted.max_bytes() == 0
    assert not converted.save_converted(tmp_path / "a", tokenizer, model, tmp_path / "m.gguf")
    monkeypatch.setenv(converted.MAX_MB_ENV, "0.001")  # ~1 kB: the tiny model is larger
    assert not converted.save_converted(tmp_path / "b", tokenizer, model, tmp_path / "m.gguf")
    monkeypatch.setenv(converted.MAX_MB_ENV, "not a number")
    assert converted.max_bytes() == converted.DEFAULT_MAX_MB << 20
    monkeypatch.delenv(converted.MAX_MB_ENV)
    assert converted.save_converted(tmp_path / "c", tokenizer, model, tmp_path / "m.gguf")


def test_an_unwritable_cache_only_costs_the_next_load(tiny: tuple[Any, Any], tmp_path: Path) -> None:
    tokenizer, model = tiny
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder would go")
    assert not converted.save_converted(blocker / "converted" / "abc", tokenizer, model, tmp_path / "m.gguf")


def test_the_folder_names_the_file_digest_and_the_transformers_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    one, two = tmp_path / "one.gguf", tmp_path / "two.gguf"
    one.write_bytes(b"GGUF one")
    two.write_bytes(b"GGUF two")
    a, b = converted.converted_dir(one, "5.0"), converted.converted_dir(two, "5.0")
    assert a.parent == tmp_path / "cache" / "converted" and a != b
    assert converted.converted_dir(one, "5.1") != a  # another conversion code, another folder
    (tmp_path / "copy.gguf").write_bytes(b"GGUF one")
    assert converted.converted_dir(tmp_path / "copy.gguf", "5.0") == a  # the same bytes, the same folder
