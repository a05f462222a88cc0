"""Cache keys and prompt ids are stable and depend on exactly what can change an answer."""

from __future__ import annotations

import base64
import json

import pytest
from pydantic import ValidationError

from biasatlas.records import (
    GenerationSettings,
    Message,
    Prompt,
    Request,
    canonical_json,
    canonical_tree_json,
    scrub_text,
    scrub_value,
    stable_hash,
)


def _prompt(text: str = "Should I invite them?", **meta: object) -> Prompt:
    return Prompt(probe="contact", language="en", messages=(Message(role="user", content=text),),
                  options=("Yes", "No"), meta=dict(meta))


def test_cache_key_is_stable_across_processes() -> None:
    # A literal: if this changes, every existing study's cache is invalidated; bump deliberately.
    request = Request(prompt=_prompt(), settings=GenerationSettings(mode="choice"))
    assert request.cache_key("local:model") == "a8b0490e9556b8011d9c8583940948e38eb81d76"


def test_cache_key_ignores_meta_and_probe() -> None:
    a = Request(prompt=_prompt(axis="ability"))
    b = Request(prompt=_prompt(axis="religion"))
    assert a.prompt.id != b.prompt.id
    assert a.cache_key("m") == b.cache_key("m")


def test_cache_key_depends_on_what_changes_output() -> None:
    base = Request(prompt=_prompt())
    assert base.cache_key("m") != base.cache_key("other")
    assert base.cache_key("m") != Request(prompt=_prompt("Other text")).cache_key("m")
    assert base.cache_key("m") != Request(prompt=_prompt(), sample_index=1).cache_key("m")
    longer = Request(prompt=_prompt(), settings=GenerationSettings(max_tokens=64))
    assert base.cache_key("m") != longer.cache_key("m")


def test_settings_that_cannot_change_output_are_not_in_the_key() -> None:
    greedy_a = Request(prompt=_prompt(), settings=GenerationSettings(temperature=0.0, seed=1))
    greedy_b = Request(prompt=_prompt(), settings=GenerationSettings(temperature=0.0, seed=2))
    assert greedy_a.cache_key("m") == greedy_b.cache_key("m")
    hot_a = Request(prompt=_prompt(), settings=GenerationSettings(temperature=1.0, seed=1))
    hot_b = Request(prompt=_prompt(), settings=GenerationSettings(temperature=1.0, seed=2))
    assert hot_a.cache_key("m") != hot_b.cache_key("m")
    choice_a = Request(prompt=_prompt(), settings=GenerationSettings(mode="choice", max_tokens=5))
    choice_b = Request(prompt=_prompt(), settings=GenerationSettings(mode="choice", max_tokens=50))
    assert choice_a.cache_key("m") == choice_b.cache_key("m")


def test_prompt_id_is_deterministic() -> None:
    assert _prompt(axis="x").id == _prompt(axis="x").id


# ---- the hot path puts canonical JSON together from parts: it must equal the generic form ----

_PROMPTS = [
    _prompt(),
    _prompt("Ünïcödé \"quoted\" \\ back\nslash 日本語", axis="x", nested={"b": [1, 2.5, None], "a": True}),
    Prompt(probe="stories", language="fr", messages=(Message(role="system", content="Sois bref."),
                                                     Message(role="user", content="Écris une histoire.")),
           meta={"z": 1, "a": "é"}),
    Prompt(probe="contact", language="en", messages=(Message(role="user", content="ctl \x00\x1f\u2028 😀?"),),
           options=("Oui", "Nön \"x\"", "\t😀"), meta={}),
]
_SETTINGS = [GenerationSettings(), GenerationSettings(mode="choice"),
             GenerationSettings(temperature=0.7, top_p=0.9, seed=5, max_tokens=300)]


def test_hand_assembled_ids_keys_and_request_json_equal_the_generic_canonical_json() -> None:
    for prompt in _PROMPTS:
        messages = [m.model_dump() for m in prompt.messages]
        assert prompt.id == stable_hash({"probe": prompt.probe, "language": prompt.language, "messages": messages,
                                         "options": list(prompt.options), "meta": prompt.meta}, length=24)
        for settings in _SETTINGS:
            for sample in (0, 3):
                request = Request(prompt=prompt, settings=settings, sample_index=sample)
                payload: dict[str, object] = {"backend": "openai:m@http://h/v1", "messages": messages,
                                              "settings": settings.output_relevant(), "sample": sample}
                if settings.mode == "choice":
                    payload["options"] = list(prompt.options)
                assert request.cache_key("openai:m@http://h/v1") == stable_hash(payload, length=40)
                stored = {"messages": messages, "options": list(prompt.options),
                          "settings": settings.model_dump(), "sample_index": sample}
                assert request.request_json() == canonical_json(stored)
                assert json.loads(request.request_json()) == stored


def test_a_cache_key_does_not_encode_the_meta_and_the_parts_are_the_same_in_any_order() -> None:
    encoded: list[str] = []

    class Noted:  # canonical_json writes it with str(): counts the times the meta is encoded
        def __str__(self) -> str:
            encoded.append("meta")
            return "noted"

    first, second = _prompt(note=Noted()), _prompt(note=Noted())
    request = Request(prompt=first, settings=GenerationSettings(mode="choice"))
    key = request.cache_key("b")
    request.request_json()
    assert encoded == []  # the meta is not part of a key or of what is asked (encoded when stored)
    assert first.json_parts() == second.json_parts() and encoded == ["meta", "meta"]
    assert first.json_parts()[2] == canonical_json({"note": "noted"}) and len(encoded) == 2
    assert first.id == second.id and Request(prompt=second, settings=request.settings).cache_key("b") == key


# ---- credentials are scrubbed from what the store writes ------------------------------------
CANARY = "Xq7canarySecret"


def test_scrub_masks_every_form_of_a_credential() -> None:
    basic = base64.b64encode(f"alice:{CANARY}".encode()).decode()
    texts = [
        f"POST http://alice:{CANARY}@llm.example:8000/v1/chat/completions failed",
        f"401: headers echoed {{'Authorization': 'Basic {basic}'}}",
        f"server said: bad credentials {basic}",
        f"Authorization: Bearer sk-{CANARY}abcdef",
        f"proxy-authorization={CANARY}",
        f"biasatlas run contact --http api_key={CANARY} --http timeout=5",
        f'{{"x-api-key": "{CANARY}"}}',
        f"token in body sk-proj-{CANARY}1234567890",
        f"password: {CANARY}",
    ]
    for text in texts:
        scrubbed = scrub_text(text)
        assert CANARY not in scrubbed and basic not in scrubbed, (text, scrubbed)
        assert "***" in scrubbed


def test_scrub_keeps_ordinary_text_and_valid_json() -> None:
    ordinary = "The basic answer is Yes; the token limit was reached at https://example.org/v1/models"
    assert scrub_text(ordinary) == ordinary
    value = {"api_key": CANARY, "api_key_env": "OPENAI_API_KEY", "option_logprobs": {"token": -0.5},
             "command": f"biasatlas run samaritan --base-url https://u:{CANARY}@h/v1", "n": 3}
    scrubbed = scrub_value(value)
    assert CANARY not in canonical_json(scrubbed)
    assert scrubbed["api_key_env"] == "OPENAI_API_KEY" and scrubbed["option_logprobs"] == {"token": -0.5}
    assert scrubbed["n"] == 3 and scrubbed["command"].endswith("https://***@h/v1")
    # scrubbing serialised JSON keeps it JSON
    text = json.dumps({"error": f'echo "Authorization: Bearer {CANARY}0000" \\" end'})
    assert json.loads(scrub_text(text))


def test_scrub_value_masks_nested_secrets_and_keeps_every_other_value_and_type() -> None:
    class Name(str):
        pass

    value = {"outer": {"Token": CANARY, "empty_secret": "", "lp": -0.25, "n": 2, "ok": True, "none": None},
             "list": [{"password": CANARY}, 1.5, (2, "x")], Name("api_key"): Name(CANARY),
             "big": 10**30, "flag": False}
    scrubbed = scrub_value(value)
    assert CANARY not in canonical_json(scrubbed)
    assert scrubbed["outer"] == {"Token": "***", "empty_secret": "", "lp": -0.25, "n": 2, "ok": True, "none": None}
    assert scrubbed["list"] == [{"password": "***"}, 1.5, [2, "x"]] and scrubbed["api_key"] == "***"
    assert scrub_value({3: "three"}) == {3: "three"} and scrubbed["big"] == 10**30 and scrubbed["flag"] is False
    assert type(scrubbed["outer"]["ok"]) is bool and scrubbed is not value and scrubbed["outer"] is not value["outer"]


def test_canonical_tree_json_writes_the_text_canonical_json_writes() -> None:
    values = [
        {"b": [1, 2.5, None, True, "é\u2028\x00\"q\"", ("t", 1)], "a": {"z": float("nan"), "y": -0.0, "x": 1e-05}},
        {"No": 0.30000000000000004, "Yes": 0.7, "Ünïcode ✓ 🙂": 1e300, "inf": float("inf")},
        {2: "int key", 10: "keys sorted as ints"}, {"obj": object}, [], {}, "plain", 3, 10**25, None,
    ]
    for value in values:
        assert canonical_tree_json(value) == canonical_json(value), value


def test_a_copy_with_other_fields_has_its_own_id_and_keys() -> None:
    prompt = _prompt(axis="x")
    request = Request(prompt=prompt)
    prompt.id, request.cache_key("b")  # memoised on the originals
    other = prompt.model_copy(update={"language": "de"})
    assert other.id == Prompt(**other.model_dump(exclude={"id"})).id != prompt.id
    later = request.model_copy(update={"sample_index": 3})
    assert later.cache_key("b") == Request(prompt=prompt, sample_index=3).cache_key("b") != request.cache_key("b")
    assert request.cache_key("b") == Request(prompt=prompt).cache_key("b")  # the original's memo is untouched


@pytest.mark.parametrize("field", ["temperature", "top_p"])
@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_decoding_settings_refuse_non_finite_numbers(field: str, value: float) -> None:
    # temperature=inf passed ge=0: a body with "Infinity" is not JSON, and a local backend would sample noise
    with pytest.raises(ValidationError):
        GenerationSettings(mode="generate", **{field: value})
