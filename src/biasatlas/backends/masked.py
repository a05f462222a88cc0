"""Masked (BERT-, XLM-R-style) and span-filling (T5-style) models: log p(option | template) per option.

A request's single user message is a sentence with the slot ``[TRAIT]``; each of its options is put in
the slot and scored:
- masked LMs: the pseudo-log-likelihood of the option's tokens (Salazar et al. 2020): each token of the
  option is masked in turn, the rest of the sentence visible, and the log-probabilities are summed;
- span-filling models: the encoder sees the sentence with the slot replaced by the first sentinel
  (``<extra_id_0>``), and the decoder scores ``<extra_id_0> option <extra_id_1>``; the option tokens'
  log-probabilities are summed.
The raw log-probabilities go to ``Response.info["option_logprobs"]`` (the leakage probe's increased
log-probability score needs them); ``option_probs`` are the same normalised over the options.

Heavy imports happen only when a backend is built. Spec: ``masked:PATH_OR_HUB_ID`` or ``span:PATH_OR_HUB_ID``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from biasatlas.backends.base import BackendError
from biasatlas.backends.extras import require
from biasatlas.records import Request, Response

SLOT = "[TRAIT]"


class MaskedOptions(BaseModel):
    """Options of the masked / span-filling backends."""

    model_config = ConfigDict(extra="forbid")
    batch_size: int = Field(default=64, ge=1)
    device: str = "auto"


def _device(torch: Any, name: str) -> Any:
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    return torch.device(name)


def _respond(backend_id: str, request: Request, logps: dict[str, float], started: float) -> Response:
    top = max(logps.values())
    unnorm = {o: math.exp(v - top) for o, v in logps.items()}
    total = sum(unnorm.values())
    probs = {o: v / total for o, v in unnorm.items()}
    return Response(
        key=request.cache_key(backend_id), backend_id=backend_id, text=max(probs, key=lambda o: probs[o]),
        option_probs=probs, completion_tokens=0, latency_s=round(time.perf_counter() - started, 5),
        finish_reason="choice", info={"option_logprobs": {o: round(v, 6) for o, v in logps.items()}},
    )


def _template(request: Request) -> str:
    text = request.prompt.messages[-1].content
    if text.count(SLOT) != 1:
        raise ValueError(f"a masked-model prompt needs exactly one {SLOT} slot: {text!r}")
    return text


class MaskedLMBackend:
    """A masked language model scored by pseudo-log-likelihood of each option in the slot."""

    def __init__(self, model: Any, tokenizer: Any, name: str, options: MaskedOptions | None = None) -> None:
        import torch

        self.torch = torch
        self.options = options or MaskedOptions()
        self.tokenizer = tokenizer
        self.device = _device(torch, self.options.device)
        self.model = model.to(self.device).eval()
        self.id = f"masked:{name}"
        if tokenizer.mask_token_id is None:
            raise BackendError(f"{name}: the tokenizer has no mask token; not a masked language model")
        if not getattr(tokenizer, "is_fast", False):
            raise BackendError(f"{name}: a fast tokenizer is needed (to locate the option's tokens)")

    @classmethod
    def load(cls, path: str, options: MaskedOptions | None = None) -> MaskedLMBackend:
        from transformers import AutoModelForMaskedLM, AutoTokenizer

        try:
            tokenizer = AutoTokenizer.from_pretrained(path)
            model = AutoModelForMaskedLM.from_pretrained(path)
        except (OSError, ValueError) as exc:
            raise BackendError(f"cannot load masked model {path!r}: {exc}") from exc
        return cls(model, tokenizer, path.rstrip("/").split("/")[-1], options)

    def _variants(self, text: str, option: str) -> list[tuple[list[int], int, int]]:
        """(input ids with one option token masked, the masked position, the true token) per option token."""
        start = text.index(SLOT)
        filled = text[:start] + option + text[start + len(SLOT) :]
        end = start + len(option)
        enc = self.tokenizer(filled, return_offsets_mapping=True, add_special_tokens=True)
        ids: list[int] = list(enc["input_ids"])
        positions = [i for i, (a, b) in enumerate(enc["offset_mapping"]) if b > a and a < end and b > start]
        if not positions:
            raise ValueError(f"option {option!r} has no token in {filled!r}")
        out = []
        for pos in positions:
            masked = list(ids)
            masked[pos] = self.tokenizer.mask_token_id
            out.append((masked, pos, ids[pos]))
        return out

    def score_choices(self, requests: Sequence[Request]) -> Iterator[Response]:
        torch = self.torch
        for request in requests:
            started = time.perf_counter()
            try:
                text = _template(request)
                rows = [(o, v) for o in request.prompt.options for v in self._variants(text, o)]
            except ValueError as exc:
                yield Response(key=request.cache_key(self.id), backend_id=self.id, error=str(exc))
                continue
            logps = dict.fromkeys(request.prompt.options, 0.0)
            size = self.options.batch_size
            for begin in range(0, len(rows), size):
                chunk = rows[begin : begin + size]
                width = max(len(v[0]) for _, v in chunk)
                pad = self.tokenizer.pad_token_id or 0
                ids = torch.full((len(chunk), width), pad, dtype=torch.long)
                mask = torch.zeros((len(chunk), width), dtype=torch.long)
                for j, (_, (seq, _, _)) in enumerate(chunk):
                    ids[j, : len(seq)] = torch.tensor(seq)
                    mask[j, : len(seq)] = 1
                with torch.inference_mode():
                    logits = self.model(input_ids=ids.to(self.device), attention_mask=mask.to(self.device)).logits
                logp = torch.log_softmax(logits.float(), dim=-1)
                for j, (option, (_, pos, token)) in enumerate(chunk):
                    logps[option] += float(logp[j, pos, token])
            yield _respond(self.id, request, logps, started)

    def generate(self, requests: Sequence[Request]) -> Iterator[Response]:
        for request in requests:
            yield Response(key=request.cache_key(self.id), backend_id=self.id,
                           error="masked models are scored (choice mode), they do not generate")

    def close(self) -> None:
        pass


class SpanBackend:
    """A span-filling encoder-decoder (T5/mT5): log p(<extra_id_0> option <extra_id_1>) over the option tokens."""

    def __init__(self, model: Any, tokenizer: Any, name: str, options: MaskedOptions | None = None) -> None:
        import torch

        self.torch = torch
        self.options = options or MaskedOptions()
        self.tokenizer = tokenizer
        self.device = _device(torch, self.options.device)
        self.model = model.to(self.device).eval()
        self.id = f"span:{name}"
        vocab = tokenizer.get_vocab()
        if "<extra_id_0>" not in vocab or "<extra_id_1>" not in vocab:
            raise BackendError(f"{name}: the tokenizer has no <extra_id_0>/<extra_id_1> sentinels; not a T5 model")
        self.sentinels = (vocab["<extra_id_0>"], vocab["<extra_id_1>"])

    @classmethod
    def load(cls, path: str, options: MaskedOptions | None = None) -> SpanBackend:
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        try:
            tokenizer = AutoTokenizer.from_pretrained(path)
            model = AutoModelForSeq2SeqLM.from_pretrained(path)
        except (OSError, ValueError) as exc:
            raise BackendError(f"cannot load span-filling model {path!r}: {exc}") from exc
        return cls(model, tokenizer, path.rstrip("/").split("/")[-1], options)

    def score_choices(self, requests: Sequence[Request]) -> Iterator[Response]:
        torch = self.torch
        first, second = self.sentinels
        for request in requests:
            started = time.perf_counter()
            try:
                source = _template(request).replace(SLOT, "<extra_id_0>")
            except ValueError as exc:
                yield Response(key=request.cache_key(self.id), backend_id=self.id, error=str(exc))
                continue
            options = list(request.prompt.options)
            targets = [self.tokenizer(f"<extra_id_0> {o} <extra_id_1>").input_ids for o in options]
            enc = self.tokenizer([source] * len(options), return_tensors="pt", padding=True)
            width = max(len(t) for t in targets)
            labels = torch.full((len(options), width), -100, dtype=torch.long)
            for j, t in enumerate(targets):
                labels[j, : len(t)] = torch.tensor(t)
            with torch.inference_mode():
                out = self.model(input_ids=enc.input_ids.to(self.device),
                                 attention_mask=enc.attention_mask.to(self.device),
                                 labels=labels.to(self.device))
            logp = torch.log_softmax(out.logits.float(), dim=-1)
            logps: dict[str, float] = {}
            for j, (option, t) in enumerate(zip(options, targets, strict=True)):
                # The option's tokens lie strictly between the two sentinels.
                begin, end = t.index(first) + 1, t.index(second)
                logps[option] = sum(float(logp[j, k, t[k]]) for k in range(begin, end))
            yield _respond(self.id, request, logps, started)

    def generate(self, requests: Sequence[Request]) -> Iterator[Response]:
        for request in requests:
            yield Response(key=request.cache_key(self.id), backend_id=self.id,
                           error="span-filling models are scored (choice mode) by this probe")

    def close(self) -> None:
        pass


def make_masked_backend(spec: str, options: MaskedOptions | None = None) -> MaskedLMBackend | SpanBackend:
    """``masked:PATH`` -> :class:`MaskedLMBackend`; ``span:PATH`` -> :class:`SpanBackend`."""
    require("local", "masked and span models")
    kind, _, path = spec.partition(":")
    if not path:
        raise BackendError(f"{spec!r}: give a model after the colon, e.g. masked:bert-base-multilingual-cased")
    if kind == "masked":
        return MaskedLMBackend.load(path, options)
    if kind == "span":
        return SpanBackend.load(path, options)
    raise BackendError(f"unknown masked-model spec {spec!r}; use masked:PATH or span:PATH")
