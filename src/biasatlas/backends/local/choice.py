"""Choice scoring for the local backend: P(option | prompt) from the model's own log-probabilities.

How an option is scored (``LocalOptions.choice_norm``):

* ``sum`` (default): the sum of the log-probabilities of the option's tokens after the prompt,
  i.e. log P(option | prompt). Longer options pay for every token they have.
* ``mean``: that sum divided by the option's number of tokens (mean log-probability per token),
  so an option is not favoured or penalised for how many tokens it happens to split into
  (e.g. "Likely" is 3 tokens and "Unlikely" 2 for SmolLM2).

The scores are turned into probabilities over the options with a softmax; ``option_probs`` is
that distribution. Each response's ``info`` keeps the raw sums (``option_logprobs``), the token
counts (``option_tokens``) and the normalisation used (``choice_norm``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any

from biasatlas.backends.base import BackendError
from biasatlas.backends.local.batches import BatchingMixin, PromptBatch
from biasatlas.backends.scoring import option_probabilities
from biasatlas.records import Request, Response


class ChoiceMixin(BatchingMixin):
    """``score_choices``: one forward pass for the first tokens, a short cached pass for the rest."""

    _option_cache: dict[str, list[int]]

    def _option_ids(self, option: str) -> list[int]:
        if option not in self._option_cache:
            ids = self.tokenizer.encode(option, add_special_tokens=False)
            if not ids:
                raise BackendError(f"option {option!r} encodes to no token")
            self._option_cache[option] = ids
        return self._option_cache[option]

    def score_choices(self, requests: Sequence[Request]) -> Iterator[Response]:
        """P(option | prompt) for each request's options, normalised over the options.

        One forward pass over the prompts (after the shared prefix, taken from the key/value cache)
        gives every option's first token; options longer than one token are finished in a second,
        short pass that reuses the prompts' key/value cache. Scores are summed (or averaged per
        token, ``choice_norm="mean"``) log-probabilities; see the module docstring.
        """
        norm = self.options.choice_norm
        for batch in self._plan(requests):
            started = time.perf_counter()
            try:
                scores = self._score_batch(batch)
            except RuntimeError as exc:
                yield from self._failed(batch, exc)
                continue
            elapsed = (time.perf_counter() - started) / len(batch.requests)
            for request, ids, logps in zip(batch.requests, batch.ids, scores, strict=True):
                tokens = {o: len(self._option_ids(o)) for o in request.prompt.options}
                probs = option_probabilities(logps, tokens, norm)
                best = max(probs, key=lambda o: probs[o])
                yield Response(
                    key=request.cache_key(self.id),
                    backend_id=self.id,
                    text=best,
                    option_probs=probs,
                    prompt_tokens=len(ids),
                    completion_tokens=0,
                    latency_s=round(elapsed, 5),
                    finish_reason="choice",
                    info={
                        "option_logprobs": {o: round(v, 5) for o, v in logps.items()},
                        "option_tokens": tokens,
                        "choice_norm": norm,
                    },
                )

    def _score_batch(self, batch: PromptBatch) -> list[dict[str, float]]:
        torch = self.torch
        option_ids = [[self._option_ids(o) for o in r.prompt.options] for r in batch.requests]
        # Continuations: every (row, option) whose option has more than one token.
        tails = [
            (i, o, ids)
            for i, r in enumerate(batch.requests)
            for o, ids in zip(r.prompt.options, option_ids[i], strict=True)
            if len(ids) > 1
        ]
        out, mask = self._prefill(batch, use_cache=bool(tails))
        first = torch.log_softmax(out.logits[:, -1, :].float(), dim=-1)
        results: list[dict[str, float]] = [
            {o: float(first[i, ids[0]]) for o, ids in zip(r.prompt.options, option_ids[i], strict=True)}
            for i, r in enumerate(batch.requests)
        ]
        if tails:
            self._score_tails(out.past_key_values, mask, tails, results)
        return results

    def _score_tails(
        self, cache: Any, mask: Any, tails: list[tuple[int, str, list[int]]], results: list[dict[str, float]]
    ) -> None:
        torch = self.torch
        rows = torch.tensor([i for i, _, _ in tails], device=self.device)
        width = max(len(ids) - 1 for _, _, ids in tails)
        pad = self.tokenizer.pad_token_id
        tail_ids = torch.full((len(tails), width), pad, dtype=torch.long, device=self.device)
        tail_mask = torch.zeros((len(tails), width), dtype=mask.dtype, device=self.device)
        # Feed t0..t(n-1) after the cached prompt: the logits at tail position k predict t(k+1).
        for j, (_, _, ids) in enumerate(tails):
            fed = ids[:-1]
            tail_ids[j, : len(fed)] = torch.tensor(fed, device=self.device)
            tail_mask[j, : len(fed)] = 1
        cache.batch_select_indices(rows)
        full_mask = torch.cat([mask[rows], tail_mask], dim=1)
        start = mask[rows].sum(-1, keepdim=True)
        positions = start + torch.arange(width, device=self.device).unsqueeze(0)
        with torch.inference_mode():
            out = self.model(
                input_ids=tail_ids,
                attention_mask=full_mask,
                position_ids=positions,
                past_key_values=cache,
                use_cache=False,
            )
        logp = torch.log_softmax(out.logits.float(), dim=-1)
        for j, (i, option, ids) in enumerate(tails):
            results[i][option] += sum(float(logp[j, k, ids[k + 1]]) for k in range(len(ids) - 1))
