"""Batching for the local backend: chat rendering, length-sorted batches, the shared prefix's
key/value cache, and the one forward pass every batch starts with."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from biasatlas.backends.local.models import LocalOptions
from biasatlas.records import Request, Response

PREFIX_CACHE_SIZE = 16  # shared prefixes kept (keys/values of one row each)


@dataclass(frozen=True)
class PromptBatch:
    """Requests run together, their prompt tokens, and how many leading tokens they all share."""

    requests: list[Request]
    ids: list[list[int]]
    prefix: int


def _common_prefix(rows: Sequence[Sequence[int]], cap: int) -> int:
    """How many leading tokens all ``rows`` share, at most ``cap``."""
    if not rows:
        return 0
    first = rows[0]
    n = max(cap, 0)
    for row in rows[1:]:
        k = 0
        while k < n and row[k] == first[k]:
            k += 1
        n = k
        if n == 0:
            break
    return n


class BatchingMixin:
    """Prompts -> batches -> the first forward pass, reusing the prefix the prompts share."""

    id: str
    options: LocalOptions
    torch: Any
    tokenizer: Any
    model: Any
    device: Any
    _prefix_cache: OrderedDict[tuple[int, ...], list[tuple[Any, Any]]]
    _can_reuse_prefix: bool

    # ---- prompts ------------------------------------------------------------------------------
    def render(self, request: Request) -> str:
        """The prompt text in the model's own chat format."""
        messages = [m.model_dump() for m in request.prompt.messages]
        if getattr(self.tokenizer, "chat_template", None):
            return str(
                self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
            )
        return "\n".join(m["content"] for m in messages) + "\n"

    def _tokenize(self, requests: Sequence[Request]) -> list[list[int]]:
        texts = [self.render(r) for r in requests]
        encoded = self.tokenizer(texts, add_special_tokens=False)["input_ids"]
        return [list(ids) for ids in encoded]

    def _plan(self, requests: Sequence[Request]) -> Iterator[PromptBatch]:
        """Length-sorted batches, each with the number of leading tokens all its rows share.

        Rows of equal length are ordered by their tokens, so prompts built from the same template
        sit side by side and a batch's shared prefix is as long as it can be.
        """
        ids = self._tokenize(requests)
        order = sorted(range(len(ids)), key=lambda i: (len(ids[i]), ids[i]))
        reuse = self.options.reuse_prefix and self._can_reuse_prefix
        if reuse and ids:
            # The prefix of the whole call (system prompt, chat header, ...) is computed once and
            # kept; each batch extends it by whatever more its own rows share.
            shared = _common_prefix(ids, cap=min(len(x) for x in ids) - 1)
            if shared:
                self._prefix_kv(tuple(ids[0][:shared]), remember=True)
        size = self.options.batch_size
        for start in range(0, len(order), size):
            rows = order[start : start + size]
            chunk = [ids[i] for i in rows]
            prefix = _common_prefix(chunk, cap=min(len(x) for x in chunk) - 1) if reuse else 0
            yield PromptBatch([requests[i] for i in rows], chunk, prefix)

    # ---- the shared prefix ----------------------------------------------------------------------
    def _check_prefix_support(self) -> bool:
        """Prefix reuse needs a plain (non-sliding, non-quantised) dynamic key/value cache."""
        try:
            from transformers import DynamicCache
            from transformers.cache_utils import DynamicLayer

            cache = DynamicCache(config=self.model.config)
            return bool(cache.layers) and all(type(layer) is DynamicLayer for layer in cache.layers)
        except (ImportError, AttributeError, TypeError, ValueError):
            return False

    def _prefix_kv(self, prefix: tuple[int, ...], remember: bool = False) -> list[tuple[Any, Any]]:
        """Keys and values (batch of one) of every layer for ``prefix``.

        Starts from the longest prefix already computed, so a batch's own prefix costs only the
        tokens it adds to the call's shared prefix.
        """
        torch = self.torch
        if prefix in self._prefix_cache:
            self._prefix_cache.move_to_end(prefix)
            return self._prefix_cache[prefix]
        base: tuple[int, ...] = ()
        for known in self._prefix_cache:
            if len(base) < len(known) <= len(prefix) and prefix[: len(known)] == known:
                base = known
        cache = self._cache_from(self._prefix_cache[base], 1) if base else None
        if base:
            self._prefix_cache.move_to_end(base)
        rest = torch.tensor([prefix[len(base) :]], device=self.device)
        positions = torch.arange(len(base), len(prefix), device=self.device).unsqueeze(0)
        with torch.inference_mode():
            out = self.model(
                input_ids=rest, position_ids=positions, past_key_values=cache, use_cache=True,
                logits_to_keep=1,
            )
        kv = [(layer.keys, layer.values) for layer in out.past_key_values.layers]
        if remember:
            self._prefix_cache[prefix] = kv
            while len(self._prefix_cache) > PREFIX_CACHE_SIZE:
                self._prefix_cache.popitem(last=False)
        return kv

    @staticmethod
    def _cache_from(kv: list[tuple[Any, Any]], batch: int) -> Any:
        """A fresh cache holding ``kv`` repeated ``batch`` times (the forward pass appends to it)."""
        from transformers import DynamicCache

        return DynamicCache(ddp_cache_data=[(k.expand(batch, -1, -1, -1), v.expand(batch, -1, -1, -1))
                                            for k, v in kv])

    def _prefill(self, batch: PromptBatch, use_cache: bool) -> tuple[Any, Any]:
        """One forward pass over a batch; returns the model output and the full attention mask.

        Layout: [shared prefix | padding | each row's own tokens]. The prefix comes from the key/
        value cache; padding sits after it (so every row ends at the last column and the last
        position's logits are all we need) and is masked out; positions skip the padding.
        """
        torch = self.torch
        p = batch.prefix
        tails = [ids[p:] for ids in batch.ids]
        width = max(len(t) for t in tails)
        input_ids = torch.full((len(tails), width), self.tokenizer.pad_token_id, dtype=torch.long)
        mask = torch.zeros((len(tails), width), dtype=torch.long)
        for i, t in enumerate(tails):
            input_ids[i, width - len(t) :] = torch.tensor(t, dtype=torch.long)
            mask[i, width - len(t) :] = 1
        if p:
            mask = torch.cat([torch.ones((len(tails), p), dtype=torch.long), mask], dim=1)
        input_ids, mask = input_ids.to(self.device), mask.to(self.device)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)[:, p:]
        cache = self._cache_from(self._prefix_kv(tuple(batch.ids[0][:p])), len(tails)) if p else None
        with torch.inference_mode():
            out = self.model(
                input_ids=input_ids,
                attention_mask=mask,
                position_ids=positions,
                past_key_values=cache,
                use_cache=use_cache or cache is not None,
                logits_to_keep=1,
            )
        return out, mask

    def _failed(self, batch: PromptBatch, exc: Exception) -> Iterator[Response]:
        """A batch the model could not run: an error Response for each of its requests."""
        message = f"{type(exc).__name__}: {exc}"
        for request in batch.requests:
            yield Response(key=request.cache_key(self.id), backend_id=self.id, error=message)
