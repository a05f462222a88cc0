"""Client-side chat templates: Jinja files, GGUF metadata, raw text."""

from __future__ import annotations

import struct
from pathlib import Path
from types import ModuleType

import pytest

from biasatlas.backends.base import BackendError
from biasatlas.backends.http.template import ChatTemplate, gguf_metadata, load_template, raw_text

MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Yes or No?"}]


def gguf_bytes(kv: dict[str, object]) -> bytes:
    """A GGUF v3 header holding ``kv`` (strings, ints, lists of strings) and no tensors."""

    def string(s: str) -> bytes:
        raw = s.encode()
        return struct.pack("<Q", len(raw)) + raw

    out = b"GGUF" + struct.pack("<IQQ", 3, 0, len(kv))
    for key, value in kv.items():
        out += string(key)
        if isinstance(value, str):
            out += struct.pack("<I", 8) + string(value)
        elif isinstance(value, int):
            out += struct.pack("<II", 4, value)
        else:
            assert isinstance(value, list)
            out += struct.pack("<IIQ", 9, 8, len(value)) + b"".join(string(v) for v in value)
    return out


def test_jinja_file_renders_like_the_server(stub: ModuleType, tmp_path: Path) -> None:
    file = tmp_path / "chat.jinja"
    file.write_text(stub.TEMPLATE, encoding="utf-8")
    template = load_template(str(file))
    assert template.render(MESSAGES) == stub.render(MESSAGES)
    assert len(template.digest) == 8


def test_gguf_template_and_special_tokens(tmp_path: Path) -> None:
    text = "{{ bos_token }}{% for m in messages %}[{{ m['role'] }}]{{ m['content'] }}{{ eos_token }}{% endfor %}"
    file = tmp_path / "m.gguf"
    file.write_bytes(gguf_bytes({
        "general.name": "tiny",
        "tokenizer.ggml.tokens": ["<unk>", "<s>", "</s>"],
        "tokenizer.ggml.bos_token_id": 1,
        "tokenizer.ggml.eos_token_id": 2,
        "tokenizer.chat_template": text,
    }))
    template = load_template(str(file))
    assert template.render(MESSAGES) == "<s>[system]Be brief.</s>[user]Yes or No?</s>"


def test_gguf_without_a_template_is_one_clear_error(tmp_path: Path) -> None:
    file = tmp_path / "bare.gguf"
    file.write_bytes(gguf_bytes({"general.name": "bare"}))
    with pytest.raises(BackendError, match=r"holds no tokenizer\.chat_template"):
        load_template(str(file))
    with pytest.raises(BackendError, match="no such file"):
        load_template(str(tmp_path / "missing.jinja"))
    not_gguf = tmp_path / "x.gguf"
    not_gguf.write_bytes(b"nope")
    with pytest.raises(BackendError, match="cannot read GGUF"):
        load_template(str(not_gguf))


def test_the_embedded_models_template() -> None:
    from biasatlas.backends.local import embedded_model_path

    meta = gguf_metadata(embedded_model_path(), {"tokenizer.chat_template"})
    template = ChatTemplate("smollm2", meta["tokenizer.chat_template"])
    text = template.render([{"role": "user", "content": "hi"}])
    assert text.startswith("<|im_start|>system\n")
    assert text.endswith("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n")


def test_raw_text_and_a_broken_template() -> None:
    assert raw_text(MESSAGES) == "Be brief.\nYes or No?\n"
    with pytest.raises(BackendError, match="chat template"):
        ChatTemplate("bad", "{% for %}")
    with pytest.raises(BackendError, match="only user"):
        ChatTemplate("strict", "{{ raise_exception('only user') }}").render(MESSAGES)
