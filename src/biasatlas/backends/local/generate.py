"""Text generation for the local backend: its own batched decoding loop over the key/value cache."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any

from biasatlas.backends.local.batches import BatchingMixin, PromptBatch
from biasatlas.records import GenerationSettings, Request, Response


class GenerateMixin(BatchingMixin):
    """``generate``: greedy or sampled decoding, rows leaving the batch once they stop."""

    _stop_ids: set[int]

    def _find_stop_ids(self) -> set[int]:
        """The ids that end a reply: eos, and the token the chat template closes a turn with."""
        stop: set[int] = set()
        configured = getattr(self.model.generation_config, "eos_token_id", None)
        for value in (self.tokenizer.eos_token_id, configured):
            if isinstance(value, int):
                stop.add(value)
            elif isinstance(value, list | tuple):
                stop.update(v for v in value if isinstance(v, int))
        if getattr(self.tokenizer, "chat_template", None):
            marker = "Zq7xWv"
            try:
                text = str(self.tokenizer.apply_chat_template(
                    [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": marker}],
                    tokenize=False,
                ))
            except Exception:  # a template without an assistant turn: eos is all we have
                return stop
            after = text[text.find(marker) + len(marker) :] if marker in text else ""
            ids = self.tokenizer.encode(after, add_special_tokens=False) if after.strip() else []
            special = set(self.tokenizer.all_special_ids)
            special |= set(getattr(self.tokenizer, "added_tokens_decoder", {}))
            if ids and ids[0] in special:
                stop.add(ids[0])
        return stop

    def generate(self, requests: Sequence[Request]) -> Iterator[Response]:
        """Decode up to ``max_tokens`` per request; greedy, or sampled with a per-request seed."""
        by_settings: dict[Any, list[Request]] = {}
        for r in requests:
            by_settings.setdefault(r.settings, []).append(r)
        for settings, group in by_settings.items():
            for batch in self._plan(group):
                started = time.perf_counter()
                try:
                    decoded = self._decode(batch, settings)
                except RuntimeError as exc:
                    yield from self._failed(batch, exc)
                    continue
                elapsed = (time.perf_counter() - started) / len(batch.requests)
                for request, ids, (tokens, finish) in zip(batch.requests, batch.ids, decoded, strict=True):
                    yield Response(
                        key=request.cache_key(self.id),
                        backend_id=self.id,
                        text=str(self.tokenizer.decode(tokens, skip_special_tokens=True)).strip(),
                        prompt_tokens=len(ids),
                        completion_tokens=len(tokens),
                        latency_s=round(elapsed, 5),
                        finish_reason=finish,
                    )

    def _decode(self, batch: PromptBatch, settings: GenerationSettings) -> list[tuple[list[int], str]]:
        """Token-by-token decoding over the batch's cache; rows leave the batch once they stop."""
        torch = self.torch
        out, mask = self._prefill(batch, use_cache=True)
        cache = out.past_key_values
        positions = mask.sum(-1)  # the next token's position in each row
        n = len(batch.requests)
        tokens: list[list[int]] = [[] for _ in range(n)]
        finish = ["length"] * n
        generators: list[Any] = [None] * n
        if settings.temperature > 0:
            # One generator per request, seeded from its cache key (which holds the seed and the
            # sample index): a request samples the same text whatever batch it lands in.
            for i, request in enumerate(batch.requests):
                generators[i] = torch.Generator(device=self.device).manual_seed(
                    int(request.cache_key(self.id)[:15], 16)
                )
        active = list(range(n))
        logits = out.logits[:, -1, :]
        for step in range(settings.max_tokens):
            chosen = self._pick(logits, settings, [generators[i] for i in active])
            keep: list[int] = []
            for j, i in enumerate(active):
                token = int(chosen[j])
                if token in self._stop_ids:
                    finish[i] = "stop"
                else:
                    tokens[i].append(token)
                    keep.append(j)
            if not keep or step == settings.max_tokens - 1:
                break
            if len(keep) < len(active):
                index = torch.tensor(keep, device=self.device)
                cache.batch_select_indices(index)
                mask, positions, chosen = mask[index], positions[index], chosen[index]
                active = [active[j] for j in keep]
            mask = torch.cat([mask, mask.new_ones((len(active), 1))], dim=1)
            with torch.inference_mode():
                out = self.model(
                    input_ids=chosen.unsqueeze(1),
                    attention_mask=mask,
                    position_ids=positions.unsqueeze(1),
                    past_key_values=cache,
                    use_cache=True,
                )
            positions = positions + 1
            logits = out.logits[:, -1, :]
        return list(zip(tokens, finish, strict=True))

    def _pick(self, logits: Any, settings: GenerationSettings, generators: list[Any]) -> Any:
        """The next token of each row: argmax, or a temperature / nucleus sample."""
        torch = self.torch
        if settings.temperature <= 0:
            return logits.argmax(-1)
        probs = torch.softmax(logits.float() / settings.temperature, dim=-1)
        if settings.top_p < 1.0:
            ranked, order = probs.sort(dim=-1, descending=True)
            # Drop a token once the mass ranked above it already reaches top_p (the top one stays).
            ranked[(ranked.cumsum(-1) - ranked) >= settings.top_p] = 0.0
            probs = torch.zeros_like(probs).scatter(-1, order, ranked)
        return torch.cat([
            torch.multinomial(probs[j], 1, generator=g) for j, g in enumerate(generators)
        ])
