"""Fast tests of the local backend's pieces that need no model: spec resolution, model identity,
prefix sharing, token picking, choice normalisation."""

from __future__ import annotations

import hashlib
import math
import shutil
from pathlib import Path

import pytest
import torch

from biasatlas.backends.base import BackendError
from biasatlas.backends.local import (
    EMBEDDED_ALIAS,
    DigestCache,
    LocalBackend,
    LocalOptions,
    embedded_model_path,
    gguf_quantization,
    identify,
    locate,
    option_probabilities,
    weights_digest,
)
from biasatlas.backends.local.batches import _common_prefix
from biasatlas.backends.local.identity import CACHE_ENV, hub_snapshot
from biasatlas.records import GenerationSettings


@pytest.mark.parametrize(
    ("rows", "cap", "expected"),
    [
        ([[1, 2, 3, 4], [1, 2, 3, 9], [1, 2, 7]], 10, 2),
        ([[1, 2, 3], [1, 2, 3]], 2, 2),  # identical rows: capped so each row keeps a token of its own
        ([[5, 2], [1, 2]], 5, 0),
        ([[1, 2, 3]], 2, 2),
        ([], 3, 0),
        ([[1], [1]], 0, 0),
    ],
)
def test_common_prefix(rows: list[list[int]], cap: int, expected: int) -> None:
    assert _common_prefix(rows, cap) == expected


def test_options_default_to_prefix_reuse_in_fp32() -> None:
    options = LocalOptions()
    assert options.reuse_prefix is True
    assert options.dtype == "float32"
    with pytest.raises(ValueError):
        LocalOptions(batch_size=0)


def test_locate_the_embedded_model() -> None:
    path = embedded_model_path()
    assert path.suffix == ".gguf" and path.is_file()
    where = locate(EMBEDDED_ALIAS)
    assert where.gguf_file == path.name and Path(where.path) == path.parent


def test_locate_rejects_missing_gguf_and_dirs_without_config(tmp_path: Path) -> None:
    with pytest.raises(BackendError, match="GGUF file not found"):
        locate(str(tmp_path / "nope.gguf"))
    with pytest.raises(BackendError, match=r"config\.json"):
        locate(str(tmp_path))


def _picker() -> LocalBackend:
    # _pick needs only torch; build the object without loading a model.
    backend = LocalBackend.__new__(LocalBackend)
    backend.torch = torch
    return backend


def test_pick_greedy_is_argmax() -> None:
    logits = torch.tensor([[0.1, 3.0, 0.2], [2.0, 1.0, 0.0]])
    chosen = _picker()._pick(logits, GenerationSettings(temperature=0.0), [None, None])
    assert chosen.tolist() == [1, 0]


def test_pick_top_p_keeps_only_the_nucleus() -> None:
    # probabilities ~ [0.66, 0.24, 0.09, 0.01]: with top_p = 0.5 only the first token may be drawn,
    # with top_p = 0.8 the first two; a seeded generator makes the draws repeatable.
    logits = torch.log(torch.tensor([[0.66, 0.24, 0.09, 0.01]]))
    picker = _picker()
    narrow = GenerationSettings(temperature=1.0, top_p=0.5)
    wide = GenerationSettings(temperature=1.0, top_p=0.8)
    gen = torch.Generator().manual_seed(1)
    assert {int(picker._pick(logits, narrow, [gen])[0]) for _ in range(50)} == {0}
    seen = {int(picker._pick(logits, wide, [gen])[0]) for _ in range(200)}
    assert seen == {0, 1}
    first = [int(picker._pick(logits, wide, [torch.Generator().manual_seed(7)])[0]) for _ in range(5)]
    assert len(set(first)) == 1  # same seed, same draw


# ---- model identity ------------------------------------------------------------------------------
@pytest.fixture
def digest_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Keep the digest sidecar of these tests out of the user's cache."""
    where = tmp_path / "cache"
    monkeypatch.setenv(CACHE_ENV, str(where))
    return where / "weights-digests.json"


def _checkpoint(root: Path, weights: bytes, **extra: bytes) -> Path:
    """A model directory as a trainer leaves it: config, weights, and trainer leftovers."""
    root.mkdir(parents=True)
    (root / "config.json").write_text('{"model_type": "llama"}', encoding="utf-8")
    (root / "model.safetensors").write_bytes(weights)
    for name, data in extra.items():
        (root / name.replace("__", ".")).write_bytes(data)
    return root


def test_checkpoints_with_the_same_directory_name_are_different_models(
    tmp_path: Path, digest_cache: Path
) -> None:
    run1 = _checkpoint(tmp_path / "run1" / "final", b"weights of run 1")
    run2 = _checkpoint(tmp_path / "run2" / "final", b"weights of run 2")
    copy = tmp_path / "copy" / "final"
    shutil.copytree(run1, copy)
    ids = [identify(locate(str(p)), LocalOptions()).id for p in (run1, run2, copy)]
    assert ids[0] != ids[1]
    assert ids[0] == ids[2]  # the same weights copied elsewhere are the same model
    assert all(i.startswith("local:final@") for i in ids)
    assert ids[0] == f"local:final@{weights_digest(locate(str(run1)))[:12]}"


def test_config_and_tokenizer_count_trainer_leftovers_do_not(tmp_path: Path, digest_cache: Path) -> None:
    base = _checkpoint(tmp_path / "a" / "m", b"w", training_args__bin=b"args a", trainer_state__json=b"{}")
    same = _checkpoint(tmp_path / "b" / "m", b"w", training_args__bin=b"args b", README__md=b"hi")
    template = _checkpoint(tmp_path / "c" / "m", b"w", tokenizer_config__json=b'{"chat_template": "x"}')
    a, b, c = (identify(locate(str(p)), LocalOptions()).id for p in (base, same, template))
    assert a == b
    assert a != c  # another chat template can answer differently


def test_digests_are_cached_by_path_size_and_mtime(tmp_path: Path, digest_cache: Path) -> None:
    model = _checkpoint(tmp_path / "m", b"first weights" * 10)  # 130 bytes, config.json 23
    first = identify(locate(str(model)), LocalOptions(), cache=DigestCache(min_size=100))
    assert digest_cache.is_file()
    cache = DigestCache(min_size=100)
    assert identify(locate(str(model)), LocalOptions(), cache=cache) == first
    assert cache.hashed == 0  # the weights are not read again (the small config is)
    (model / "model.safetensors").write_bytes(b"retrained weights" * 10)
    cache = DigestCache(min_size=100)
    changed = identify(locate(str(model)), LocalOptions(), cache=cache)
    assert cache.hashed == 1 and changed.id != first.id
    assert len(DigestCache().entries) == 1  # one entry per file: the old weights' entry is gone


def test_unwritable_sidecar_still_gives_the_digest(tmp_path: Path) -> None:
    model = _checkpoint(tmp_path / "m", b"w")
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    cache = DigestCache(blocker / "sidecar.json")
    assert identify(locate(str(model)), LocalOptions(), cache=cache).weights_digest == weights_digest(
        locate(str(model)), DigestCache(tmp_path / "other.json"))


def test_the_embedded_model_is_named_smollm2_by_its_file_digest(digest_cache: Path) -> None:
    where = locate(EMBEDDED_ALIAS)
    ident = identify(where, LocalOptions())
    expected = hashlib.sha256(embedded_model_path().read_bytes()).hexdigest()
    assert ident.weights_digest == expected
    assert ident.id == f"local:smollm2@{expected[:12]}"
    assert where.name == embedded_model_path().stem  # what adapters record as their base: unchanged
    assert gguf_quantization(embedded_model_path()) == "Q4_1"


def test_a_hub_model_is_named_by_its_snapshot_commit() -> None:
    where = locate("SomeOrg/some-model")
    assert where.is_hub_id
    ident = identify(where, LocalOptions(), revision="7e27bd9f95a3c0ffee")
    assert ident.id == "local:SomeOrg/some-model@7e27bd9f95a3"
    assert (ident.revision, ident.weights_digest) == ("7e27bd9f95a3c0ffee", None)


def test_settings_that_change_answers_change_the_id(tmp_path: Path, digest_cache: Path) -> None:
    model = locate(str(_checkpoint(tmp_path / "m", b"w")))
    default = identify(model, LocalOptions()).id
    assert "#" not in default  # default runs keep short ids
    assert identify(model, LocalOptions(choice_norm="mean")).id == default + "#mean"
    assert identify(model, LocalOptions(dtype="bfloat16")).id == default + "#bfloat16"
    assert identify(model, LocalOptions(dtype="float16", choice_norm="mean")).id == default + "#float16,mean"
    assert identify(model, LocalOptions(batch_size=4, reuse_prefix=False)).id == default
    adapter = tmp_path / "adapter"
    adapter.mkdir()
    (adapter / "adapter_model.safetensors").write_bytes(b"lora")
    tuned = identify(model, LocalOptions(adapter=str(adapter))).id
    assert tuned.startswith(default + "+lora:")
    (adapter / "adapter_model.safetensors").write_bytes(b"lora, retrained")
    assert identify(model, LocalOptions(adapter=str(adapter))).id != tuned


def test_gguf_quantization_of_a_file_that_is_not_gguf(tmp_path: Path) -> None:
    other = tmp_path / "x.gguf"
    other.write_bytes(b"not a gguf file")
    assert gguf_quantization(other) is None


# ---- choice normalisation ------------------------------------------------------------------------
def test_mean_normalisation_differs_from_sum_when_token_counts_differ() -> None:
    tokens = {"Likely": 3, "Unlikely": 2}  # as SmolLM2 splits them
    logprobs = {"Likely": -3.0, "Unlikely": -2.5}
    by_sum = option_probabilities(logprobs, tokens, "sum")
    by_mean = option_probabilities(logprobs, tokens, "mean")
    assert max(by_sum, key=by_sum.__getitem__) == "Unlikely"
    assert max(by_mean, key=by_mean.__getitem__) == "Likely"  # -1.0 vs -1.25 per token
    assert by_sum["Likely"] == pytest.approx(1 / (1 + math.exp(0.5)))
    assert by_mean["Likely"] == pytest.approx(1 / (1 + math.exp(-0.25)))
    assert sum(by_mean.values()) == pytest.approx(1.0)


def test_mean_equals_sum_when_every_option_has_one_token() -> None:
    logprobs = {"Yes": -0.2, "No": -1.9}
    tokens = {"Yes": 1, "No": 1}
    assert option_probabilities(logprobs, tokens, "mean") == option_probabilities(logprobs, tokens, "sum")


def test_choice_norm_is_an_option_defaulting_to_sum() -> None:
    assert LocalOptions().choice_norm == "sum"
    with pytest.raises(ValueError):
        LocalOptions(choice_norm="max")  # type: ignore[arg-type]


def test_a_downloaded_hub_model_is_found_with_its_commit(tmp_path: Path) -> None:
    commit = "7e27bd9f95a3c0ffee0123456789abcdef012345"
    repo = tmp_path / "models--SomeOrg--some-model"
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}", encoding="utf-8")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit, encoding="utf-8")
    folder, found = hub_snapshot("SomeOrg/some-model", cache_dir=str(tmp_path))
    assert (folder, found) == (snapshot, commit)
    with pytest.raises(OSError):
        hub_snapshot("SomeOrg/not-downloaded", cache_dir=str(tmp_path))
