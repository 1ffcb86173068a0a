"""Causal (left-to-right) language models (GPT-2, GPT-Neo, Llama, Mistral, Qwen2, ...).

Two scores: the log-probability of a continuation given a prefix, summed over all of its tokens
(the first one included), and the distribution of the next token after a prefix over a set of
candidate tokens. By default every sequence starts with the model's BOS token where it has one, so
that even a sentence's first word is scored in context; ``start_token=False`` scores the text as
it is (minicons' ``conditional_score(..., bos_token=False)``, the call COMPS's authors made), and
a model without a BOS token (Qwen2) always does. Without a start token the first token of a text
is predicted from nothing, so a continuation then needs a prefix.
Text is tokenized once as a whole and the continuation found by character offsets, so that
tokenizers which merge across the boundary (SentencePiece's leading "▁") are not misled.
"""

from __future__ import annotations

import copy
import logging

import numpy as np
import torch

from ..io import KnowprobeError
from .runtime import (
    CandidateScores,
    ModelRunner,
    as_targets,
    candidate_scores,
    empty_candidate_scores,
    run_batches,
)

log = logging.getLogger(__name__)

# Models whose logits are their output embedding applied to the base model's final hidden states,
# with nothing after it (no soft-capping or scaling); for these the head runs only where a score
# is read. Any other model falls back to its own forward at every position.
PLAIN_HEAD_MODELS = frozenset(
    {
        "GPT2LMHeadModel",
        "GPTNeoForCausalLM",
        "GPTNeoXForCausalLM",
        "LlamaForCausalLM",
        "MistralForCausalLM",
        "Qwen2ForCausalLM",
    }
)


def causal_head(model):
    return model.get_output_embeddings() if type(model).__name__ in PLAIN_HEAD_MODELS else None


class CausalLM(ModelRunner):
    kind = "causal"

    def __init__(self, model, tokenizer, settings=None, padding_side=None, start_token: bool = True):
        """``start_token``: put the model's BOS token (where it has one) before every text."""
        super().__init__(model, tokenizer, settings, padding_side)
        self.head = causal_head(model)
        if self.head is None:
            log.warning("%s: no known plain LM head; computing logits at every position", type(model).__name__)
        self.start = [tokenizer.bos_token_id] if start_token and tokenizer.bos_token_id is not None else []

    @torch.inference_mode()
    def logits_at(self, sequences: list[list[int]], rows: np.ndarray, positions: np.ndarray) -> torch.Tensor:
        """Vocabulary logits at (row, position) pairs of a batch of sequences."""
        batch = self.pad(sequences)
        row_index = self.to_device(rows)
        where = self.to_device(batch.starts[rows] + positions)
        if self.head is None:
            return self.full_logits(batch)[row_index, where]
        return self.head(self.hidden_states(batch)[row_index, where])

    def encode(self, texts: list[str]) -> tuple[list[list[int]], list[list[tuple[int, int]]]]:
        """Token ids after the start token, and each token's character span (the start token's is
        empty at 0)."""
        encoding = self.tokenizer(list(texts), add_special_tokens=False, return_offsets_mapping=True)
        ids = [self.start + list(i) for i in encoding["input_ids"]]
        offsets = [[(0, 0)] * len(self.start) + list(o) for o in encoding["offset_mapping"]]
        for sequence, text in zip(ids, texts):
            self.check_length(sequence, text)
        return ids, offsets

    def input_lengths(self, texts: list[str]) -> np.ndarray:
        """Tokens of each text after the start token (where there is one)."""
        ids = self.tokenizer(list(texts), add_special_tokens=False)["input_ids"]
        return np.fromiter((len(self.start) + len(i) for i in ids), dtype=np.int64, count=len(ids))

    def phrase_tokens(self, texts: list[str]) -> list[tuple[list[int], list[int]]]:
        ids, _ = self.encode(texts)
        return [(sequence, list(range(len(self.start), len(sequence)))) for sequence in ids]

    def conditional_logprob(
        self, prefixes: list[str], continuations: list[str], separator: str = " ", share_prefixes: bool = True
    ) -> np.ndarray:
        """log P(continuation | [start token +] prefix), summed over the continuation's tokens.

        With ``share_prefixes`` (and a model whose head this module knows), a prefix that several
        texts begin with (the same tokens before their continuations) is run once and its keys and
        values reused for each continuation (past key values): the same computation, each token
        attending to the same tokens at the same positions, done once."""
        texts = [prefix + separator + cont if prefix else cont for prefix, cont in zip(prefixes, continuations)]
        ids, offsets = self.encode(texts)
        scored = []
        for i, spans in enumerate(offsets):
            first = next(
                (p for p, (start, _) in enumerate(spans) if p >= len(self.start) and start >= len(prefixes[i])), None
            )
            if first is None:
                raise KnowprobeError(f"continuation {continuations[i]!r} of {prefixes[i]!r} has no tokens to score")
            if first == 0:
                raise KnowprobeError(
                    f"{continuations[i]!r}: without a start token (none in this model, or start_token=False) "
                    "the first token of a text has nothing to be predicted from; give a prefix"
                )
            scored.append(first)
        totals = np.zeros(len(texts), dtype=np.float64)
        alone = np.arange(len(texts))
        if share_prefixes and self.head is not None:
            by_prefix: dict[tuple[int, ...], list[int]] = {}
            for i, sequence in enumerate(ids):
                by_prefix.setdefault(tuple(sequence[: scored[i]]), []).append(i)
            shared = {prefix: members for prefix, members in by_prefix.items() if len(members) > 1}
            if shared:
                self.score_shared_prefixes(shared, ids, scored, totals)
                alone = np.array(sorted(m[0] for m in by_prefix.values() if len(m) == 1), dtype=np.int64)

        def score(batch: np.ndarray) -> None:
            index = alone[batch]
            sequences = [ids[i] for i in index]
            # every continuation token, predicted from the position before it
            rows = np.concatenate([np.full(len(ids[i]) - scored[i], row) for row, i in enumerate(index)])
            targets = np.concatenate([np.arange(scored[i], len(ids[i])) for i in index])
            logits = self.logits_at(sequences, rows, targets - 1)
            tokens = self.to_device(np.array([sequences[r][t] for r, t in zip(rows, targets)], dtype=np.int64))
            logprobs = torch.log_softmax(logits.float(), dim=-1).gather(1, tokens[:, None])[:, 0]
            np.add.at(totals, index[rows], logprobs.cpu().numpy().astype(np.float64))

        if len(alone):
            lengths = np.fromiter((len(ids[i]) for i in alone), dtype=np.int64, count=len(alone))
            run_batches(lengths, score, self.settings, desc="continuation")
        return self.finite(totals, "log-likelihoods")

    def score_shared_prefixes(
        self, shared: dict[tuple[int, ...], list[int]], ids: list[list[int]], scored: list[int], totals: np.ndarray
    ) -> None:
        """Add to ``totals`` the continuations' log-probs of the texts under each shared prefix:
        prefixes of one length run together (no padding in their keys and values), then their
        texts' continuations, right-padded, with the prefix's keys and values selected per row."""
        keys = list(shared)
        prefix_lengths = np.fromiter((len(k) for k in keys), dtype=np.int64, count=len(keys))

        @torch.inference_mode()
        def score(index: np.ndarray) -> None:
            for length in np.unique(prefix_lengths[index]):
                group = index[prefix_lengths[index] == length]
                run = self.model.base_model(
                    input_ids=self.to_device(np.array([keys[g] for g in group], dtype=np.int64)), use_cache=True
                )
                last = run.last_hidden_state[:, -1]  # predicts each continuation's first token
                members = [(row, i) for row, g in enumerate(group) for i in shared[keys[g]]]
                for chunk in continuation_chunks(members, ids, scored, int(length), self.settings):
                    self.score_continuations(chunk, run.past_key_values, last, int(length), ids, scored, totals)

        run_batches(prefix_lengths, score, self.settings, desc="shared prefix")

    def score_continuations(self, chunk, cache, last, length, ids, scored, totals) -> None:
        rows = torch.as_tensor([row for row, _ in chunk], device=self.device)
        texts = [i for _, i in chunk]
        continuations = [ids[i][scored[i] :] for i in texts]
        width = max(len(c) for c in continuations)
        tokens = np.full((len(chunk), width), self.pad_id, dtype=np.int64)
        attention = np.ones((len(chunk), length + width), dtype=np.int64)
        for r, continuation in enumerate(continuations):
            tokens[r, : len(continuation)] = continuation
            attention[r, length + len(continuation) :] = 0
        positions = np.broadcast_to(np.arange(length, length + width), tokens.shape)
        hidden = self.model.base_model(
            input_ids=self.to_device(tokens),
            attention_mask=self.to_device(attention),
            position_ids=self.to_device(positions),
            past_key_values=rows_of(cache, rows),
            use_cache=True,
        ).last_hidden_state
        # token j of a continuation is predicted from position j - 1: the prefix's last for j = 0
        states = torch.cat([last[rows][:, None], hidden[:, :-1]], dim=1)
        real = self.to_device(attention[:, length:].astype(bool))
        logprobs = torch.log_softmax(self.head(states[real]).float(), dim=-1)
        targets = self.to_device(tokens)[real]
        values = logprobs.gather(1, targets[:, None])[:, 0].cpu().numpy().astype(np.float64)
        owners = np.repeat(np.asarray(texts, dtype=np.int64), [len(c) for c in continuations])
        np.add.at(totals, owners, values)

    def candidate_logprobs(self, prefixes: list[str], candidate_ids, targets=None, top_k: int = 1) -> CandidateScores:
        """The next token after each prefix: log-probs of the target tokens (one id per prefix,
        or an [n, t] array) with their ranks among the candidates, and the ``top_k`` best."""
        ids, _ = self.encode(prefixes)
        empty = [text for text, sequence in zip(prefixes, ids) if not sequence]
        if empty:
            raise KnowprobeError(f"{empty[0]!r}: an empty prefix, and no start token to predict from")
        candidates = self.to_device(np.asarray(candidate_ids, dtype=np.int64))
        target_array = as_targets(targets, len(prefixes))
        top_k = min(top_k, len(candidate_ids))
        out = empty_candidate_scores(len(prefixes), 0 if target_array is None else target_array.shape[1], top_k)

        def score(index: np.ndarray) -> None:
            sequences = [ids[i] for i in index]
            last = np.array([len(s) - 1 for s in sequences], dtype=np.int64)
            logits = self.logits_at(sequences, np.arange(len(index)), last)
            batch_targets = None if target_array is None else self.to_device(target_array[index])
            results = candidate_scores(logits, candidates, batch_targets, top_k)
            for array, value in zip((out.target_logprobs, out.target_ranks, out.topk_ids, out.topk_logprobs), results):
                array[index] = value

        lengths = np.fromiter((len(s) for s in ids), dtype=np.int64, count=len(ids))
        run_batches(lengths, score, self.settings, desc="next token")
        return self.finite(out, "next-token log-probs")


def continuation_chunks(members: list[tuple[int, int]], ids, scored, length: int, settings) -> list:
    """(prefix row, text) pairs in chunks under the batch limits, counting each row's prefix."""
    chunks, current, width = [], [], 0
    for member in members:
        text = member[1]
        new_width = max(width, len(ids[text]) - scored[text])
        if current and (
            len(current) >= settings.batch_size or (len(current) + 1) * (length + new_width) > settings.max_tokens
        ):
            chunks.append(current)
            current, new_width = [], len(ids[text]) - scored[text]
        current.append(member)
        width = new_width
    return chunks + [current] if current else chunks


def rows_of(cache, rows: torch.Tensor):
    """A cache holding the given batch rows of ``cache`` (which is left as it is: each layer is a
    shallow copy whose tensors are re-bound to the selected rows)."""
    out = copy.copy(cache)
    out.layers = [copy.copy(layer) for layer in cache.layers]
    out.batch_select_indices(rows)
    return out
