"""Masked language models (BERT, RoBERTa, ALBERT, ELECTRA, DistilBERT, ...).

Two scores: the log-probabilities of candidate tokens at a mask (LAMA's cloze probe), and the
conditional pseudo-log-likelihood of a continuation given a prefix (Salazar et al., 2020): each
continuation token is masked in turn, with the prefix and the rest of the continuation visible,
and the log-probabilities of the true tokens are summed. Kauf & Ivanova (2023) showed that this
overrates words of several tokens, whose later pieces give the earlier ones away; with
``within_word_l2r`` the later pieces of the same word are masked as well (their PLL-word-l2r).

The encoder runs once per batch and the LM head only where a score is read: the head is a
vocabulary-sized projection, so running it at every position, as a plain forward does, costs
more than the rest of a small model.
"""

from __future__ import annotations

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


def mask_head(model):
    """The module mapping final hidden states to vocabulary logits, or None if unknown.

    Each is the exact head the model's own ``forward`` applies, so logits are identical.
    """
    if hasattr(model, "cls"):  # BERT, MegatronBERT, ...
        return model.cls
    if hasattr(model, "lm_head"):  # RoBERTa, XLM-R, CamemBERT, Longformer, ...
        return model.lm_head
    if hasattr(model, "predictions"):  # ALBERT
        return model.predictions
    if hasattr(model, "vocab_projector"):  # DistilBERT
        return lambda h: model.vocab_projector(model.vocab_layer_norm(model.activation(model.vocab_transform(h))))
    if hasattr(model, "generator_lm_head"):  # ELECTRA generator
        return lambda h: model.generator_lm_head(model.generator_predictions(h))
    return None


class MaskedLM(ModelRunner):
    kind = "masked"

    def __init__(self, model, tokenizer, settings=None, padding_side=None):
        super().__init__(model, tokenizer, settings, padding_side)
        self.head = mask_head(model)
        if self.head is None:
            log.warning("%s: no known LM head; computing logits at every position", type(model).__name__)

    @torch.inference_mode()
    def logits_at(self, sequences: list[list[int]], positions: np.ndarray) -> torch.Tensor:
        """Vocabulary logits at one position of each sequence."""
        batch = self.pad(sequences)
        rows = torch.arange(len(sequences), device=self.device)
        where = self.to_device(batch.starts + positions)
        if self.head is None:
            return self.full_logits(batch)[rows, where]
        return self.head(self.hidden_states(batch)[rows, where])

    def mask_positions(self, texts: list[str], encoded: list[list[int]], masks: int, slot: int) -> np.ndarray:
        mask_id = self.tokenizer.mask_token_id
        positions = np.empty(len(encoded), dtype=np.int64)
        for i, ids in enumerate(encoded):
            self.check_length(ids, texts[i])
            where = [p for p, token in enumerate(ids) if token == mask_id]
            if len(where) != masks:
                raise KnowprobeError(
                    f"input {texts[i]!r} has {len(where)} mask tokens after tokenization (needs {masks}; "
                    f"a label holding the mask token?)"
                )
            positions[i] = where[slot]
        return positions

    def candidate_logprobs(
        self, texts: list[str], candidate_ids, targets=None, top_k: int = 1, masks: int = 1, slot: int = 0
    ) -> CandidateScores:
        """Log-probs at the ``slot``-th of the ``masks`` mask tokens of each text: of each target
        token (``targets``: one id per text, or an [n, t] array) with its rank among the
        candidates, and the ``top_k`` best candidates."""
        encoded = self.tokenizer(list(texts), add_special_tokens=True)["input_ids"]
        positions = self.mask_positions(list(texts), encoded, masks, slot)
        candidates = self.to_device(np.asarray(candidate_ids, dtype=np.int64))
        target_array = as_targets(targets, len(texts))
        top_k = min(top_k, len(candidate_ids))
        out = empty_candidate_scores(len(texts), 0 if target_array is None else target_array.shape[1], top_k)

        def score(index: np.ndarray) -> None:
            logits = self.logits_at([encoded[i] for i in index], positions[index])
            batch_targets = None if target_array is None else self.to_device(target_array[index])
            results = candidate_scores(logits, candidates, batch_targets, top_k)
            for array, value in zip((out.target_logprobs, out.target_ranks, out.topk_ids, out.topk_logprobs), results):
                array[index] = value

        lengths = np.fromiter((len(ids) for ids in encoded), dtype=np.int64, count=len(encoded))
        run_batches(lengths, score, self.settings, desc="mask")
        return out

    def conditional_logprob(
        self, prefixes: list[str], continuations: list[str], separator: str = " ", within_word_l2r: bool = False
    ) -> np.ndarray:
        """The conditional pseudo-log-likelihood of each continuation after its prefix (summed
        natural-log probabilities of its tokens, each masked in turn)."""
        texts = [prefix + separator + cont if prefix else cont for prefix, cont in zip(prefixes, continuations)]
        encoding = self.tokenizer(texts, add_special_tokens=True, return_offsets_mapping=True)
        sequences, examples, targets = [], [], []
        for i, (ids, offsets) in enumerate(zip(encoding["input_ids"], encoding["offset_mapping"])):
            self.check_length(ids, texts[i])
            special = self.tokenizer.get_special_tokens_mask(ids, already_has_special_tokens=True)
            boundary = len(prefixes[i])
            scored = [p for p, (start, _) in enumerate(offsets) if not special[p] and start >= boundary]
            if not scored:
                raise KnowprobeError(f"continuation {continuations[i]!r} of {prefixes[i]!r} has no tokens to score")
            words = encoding.word_ids(i)
            for p in scored:
                masked = [p]
                if within_word_l2r and words[p] is not None:
                    masked += [q for q in scored if q > p and words[q] == words[p]]
                copy = list(ids)
                for q in masked:
                    copy[q] = self.tokenizer.mask_token_id
                sequences.append(copy)
                examples.append(i)
                targets.append((p, ids[p]))
        positions = np.array([p for p, _ in targets], dtype=np.int64)
        tokens = np.array([token for _, token in targets], dtype=np.int64)
        token_logprobs = np.empty(len(sequences), dtype=np.float32)

        def score(index: np.ndarray) -> None:
            logits = self.logits_at([sequences[i] for i in index], positions[index])
            logprobs = torch.log_softmax(logits.float(), dim=-1)
            token_logprobs[index] = logprobs.gather(1, self.to_device(tokens[index])[:, None])[:, 0].cpu().numpy()

        lengths = np.fromiter((len(s) for s in sequences), dtype=np.int64, count=len(sequences))
        run_batches(lengths, score, self.settings, desc="pll")
        totals = np.zeros(len(texts), dtype=np.float64)
        np.add.at(totals, np.asarray(examples), token_logprobs.astype(np.float64))
        return totals
