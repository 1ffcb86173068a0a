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

import copy
import logging

import numpy as np
import torch

from ..io import KnowprobeError
from .final_layer import final_layer, final_layer_at
from .paths import probe_sequences, relative_difference, tolerance, verified_head
from .runtime import (
    CandidateScores,
    ModelRunner,
    SlotScores,
    check_spans,
    distinct_statements,
    overlaps,
    quoted,
    rows_by_distinct,
    rows_of,
    run_batches,
)

log = logging.getLogger(__name__)


def mask_head(model) -> torch.nn.Module | None:
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
        return torch.nn.Sequential(
            model.vocab_transform, model.activation, model.vocab_layer_norm, model.vocab_projector
        )
    if hasattr(model, "generator_lm_head"):  # ELECTRA generator
        return torch.nn.Sequential(model.generator_predictions, model.generator_lm_head)
    return None


def float32_head(head: torch.nn.Module | None) -> torch.nn.Module | None:
    """The head computing in float32: itself where the model is float32, else a float32 copy. Log-
    probabilities are then float32 whatever the encoder ran in, and the same from a stored hidden
    state as in the probe that stored it."""
    if head is None or all(parameter.dtype == torch.float32 for parameter in head.parameters()):
        return head
    return copy.deepcopy(head).float()


def first_char(text: str, start: int, stop: int) -> int:
    """Where a token's text begins, past the space a byte-level BPE token may carry in its offsets."""
    while start < stop and text[start].isspace():
        start += 1
    return start


class MaskedLM(ModelRunner):
    kind = "masked"

    def __init__(self, model, tokenizer, settings=None, padding_side=None):
        super().__init__(model, tokenizer, settings, padding_side)
        probes = probe_sequences(tokenizer, model)
        # the head and the last layer where a score is read, each where it gives the model's own
        # numbers on a probe input (``paths``); else logits from the whole forward, the last layer everywhere
        self.head = float32_head(verified_head(model, mask_head(model), probes, self.device))
        self.final_layer = self.verified_final_layer(final_layer(model) if self.head is not None else None, probes)

    @torch.inference_mode()
    def verified_final_layer(self, final, probes: list[list[int]]):
        """``final`` (the last layer computed only where read) where it gives the full last
        layer's states at a probe position, else None (logged)."""
        if final is None:
            return None
        worst = 0.0
        for sequence in probes:
            batch = self.pad([sequence])
            rows = torch.zeros(1, dtype=torch.long, device=self.device)
            at = self.to_device(np.array([len(sequence) // 2]))
            full = self.hidden_states(batch)[rows, at]
            with final_layer_at(final, rows, at):
                part = self.hidden_states(batch)[rows, at]
            worst = max(worst, relative_difference(part.float(), full.float()))
        if worst > tolerance(next(self.model.parameters()).dtype):
            log.info(
                "%s: its last layer computed only where read differs from the full layer (relative difference "
                "%.2g); the last layer runs everywhere",
                type(self.model).__name__,
                worst,
            )
            return None
        return final

    @torch.inference_mode()
    def hidden_at(self, sequences: list[list[int]], positions: np.ndarray) -> torch.Tensor:
        """The final hidden state (before the LM head) at one position of each sequence."""
        batch = self.pad(sequences)
        rows = torch.arange(len(sequences), device=self.device)
        at = self.to_device(batch.starts + positions)
        with final_layer_at(self.final_layer, rows, at):
            return self.hidden_states(batch)[rows, at]

    @torch.inference_mode()
    def logits_at(self, sequences: list[list[int]], positions: np.ndarray) -> torch.Tensor:
        """Vocabulary logits (float32) at one position of each sequence."""
        if self.head is None:
            batch = self.pad(sequences)
            rows = torch.arange(len(sequences), device=self.device)
            return self.full_logits(batch)[rows, self.to_device(batch.starts + positions)].float()
        return self.head(self.hidden_at(sequences, positions).float())

    def slot_logits(self, states: torch.Tensor) -> torch.Tensor:
        """The LM head (float32) at final hidden states; without a known head the states are the
        model's own logits already (``slot_scores``)."""
        return self.head(states.float()) if self.head is not None else states

    def mean_probabilities(self, sequences: list[list[int]], positions: np.ndarray) -> np.ndarray:
        """The distribution over the vocabulary at one position (a mask) of each token sequence,
        averaged over the sequences: [vocab] float64 (LPAQA's mask-predict prompt refinement)."""
        if not sequences:
            raise KnowprobeError("mean_probabilities: no sequences to average over")
        total = {}

        def score(index: np.ndarray) -> None:
            logits = self.logits_at([sequences[i] for i in index], positions[index])
            summed = torch.softmax(logits, dim=-1).sum(dim=0).double()  # on the device until the end
            total["sum"] = total["sum"] + summed if "sum" in total else summed

        lengths = np.fromiter((len(s) for s in sequences), dtype=np.int64, count=len(sequences))
        run_batches(lengths, score, self.settings, desc="mask-predict")
        return (total["sum"] / len(sequences)).cpu().numpy()

    def phrase_tokens(self, texts: list[str]) -> list[tuple[list[int], list[int]]]:
        encoding = self.tokenizer(list(texts), add_special_tokens=True)
        out = []
        for i, ids in enumerate(encoding["input_ids"]):
            own = self.own_tokens(encoding, i)
            out.append((list(ids), [p for p, flag in enumerate(own) if flag]))
        return out

    def input_lengths(self, texts: list[str]) -> np.ndarray:
        """Tokens of each text with the tokenizer's own additions ([CLS], [SEP])."""
        ids = self.tokenizer(list(texts), add_special_tokens=True)["input_ids"]
        return np.fromiter((len(i) for i in ids), dtype=np.int64, count=len(ids))

    def own_tokens(self, encoding, i: int) -> list[bool]:
        """Which tokens of the ``i``-th encoded text are the text's own: all but those the
        tokenizer added ([CLS], [SEP], <s>, </s>). An [UNK] is the text's own, as minicons and the
        authors' code count it (a tokenizer's special-tokens mask flags it too)."""
        if encoding.is_fast:
            return [sequence is not None for sequence in encoding.sequence_ids(i)]
        ids = encoding["input_ids"][i]
        special = self.tokenizer.get_special_tokens_mask(ids, already_has_special_tokens=True)
        return [not flag or token == self.tokenizer.unk_token_id for flag, token in zip(special, ids)]

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
        self,
        texts: list[str],
        candidate_ids,
        targets=None,
        top_k: int = 1,
        masks: int = 1,
        slot: int = 0,
        keep_hidden: bool = False,
    ) -> CandidateScores:
        """Log-probs at the ``slot``-th of the ``masks`` mask tokens of each text: of each target
        token (``targets``: one id per text, or an [n, t] array) with its rank among the
        candidates, and the ``top_k`` best candidates; with ``keep_hidden`` also the final hidden
        state at the mask (in the model's dtype), from which ``candidate_logprobs_from_hidden``
        gives every candidate's log-prob later. A text given several times is scored once."""
        scores = self.slot_scores(texts, candidate_ids, targets, top_k, masks, slot, keep_hidden)
        return scores.per_input(keep_hidden)

    def slot_scores(
        self,
        texts: list[str],
        candidate_ids,
        targets=None,
        top_k: int = 1,
        masks: int = 1,
        slot: int = 0,
        keep_hidden: bool = False,
        known: tuple[list[str], torch.Tensor] | None = None,
    ) -> SlotScores:
        """``candidate_logprobs``'s scores with each distinct text scored once and its results
        kept once (top-k and hidden state per distinct text, targets per input). ``known``: texts
        whose final hidden states at the mask are already at hand (another job's), which only the
        LM head then reads; the rest run through the encoder."""

        def prepare(to_run: list[str]):
            encoded = self.tokenizer(to_run, add_special_tokens=True)["input_ids"]
            positions = self.mask_positions(to_run, encoded, masks, slot)

            @torch.inference_mode()
            def states_of(local: np.ndarray) -> torch.Tensor:
                sequences = [encoded[i] for i in local]
                if self.head is None:  # the model's own forward, logits at every position
                    batch = self.pad(sequences)
                    at = self.to_device(batch.starts + positions[local])
                    return self.full_logits(batch)[torch.arange(len(local), device=self.device), at].float()
                return self.hidden_at(sequences, positions[local])

            return np.fromiter((len(ids) for ids in encoded), dtype=np.int64, count=len(encoded)), states_of

        return self.distinct_slot_scores(
            texts, candidate_ids, targets, top_k, keep_hidden, known, prepare, "mask", "log-probs at the mask"
        )

    def conditional_logprob(
        self, prefixes: list[str], continuations: list[str], separator: str = " ", within_word_l2r: bool = False
    ) -> np.ndarray:
        """The conditional pseudo-log-likelihood of each continuation after its prefix (summed
        natural-log probabilities of its tokens, each masked in turn)."""
        texts = [prefix + separator + cont if prefix else cont for prefix, cont in zip(prefixes, continuations)]
        spans = [(len(prefix), len(text)) for prefix, text in zip(prefixes, texts)]
        return self.span_logprob(
            texts, spans, within_word_l2r, what=[f"continuation {quoted(c)}" for c in continuations]
        )

    def span_positions(self, encoding, i: int, text: str, span: tuple[int, int]) -> list[int]:
        """The positions of the ``i``-th encoded text's own tokens that start inside ``span``."""
        own = self.own_tokens(encoding, i)
        begin, end = span
        return [
            p
            for p, (start, stop) in enumerate(encoding["offset_mapping"][i])
            if own[p] and begin <= first_char(text, start, stop) < end
        ]

    def continuation_problems(
        self, prefixes: list[str], continuations: list[str], separator: str = " "
    ) -> list[tuple[str, str] | None]:
        texts = [prefix + separator + cont if prefix else cont for prefix, cont in zip(prefixes, continuations)]
        encoding = self.tokenizer(texts, add_special_tokens=True, return_offsets_mapping=True)
        out = []
        for i, ids in enumerate(encoding["input_ids"]):
            too_long = self.length_problem(len(ids), texts[i])
            if too_long:
                out.append(("too_long", too_long))
            elif not self.span_positions(encoding, i, texts[i], (len(prefixes[i]), len(texts[i]))):
                message = f"continuation {quoted(continuations[i])} of {quoted(texts[i])} has no tokens to score"
                out.append(("no_tokens", message))
            else:
                out.append(None)
        return out

    def statement_problems(
        self, statements: list[str], answer_spans: list[tuple[int, int]] | None = None
    ) -> list[tuple[str, str] | None]:
        """Why ``statement_logprob`` cannot score each statement with this model, as ``(reason,
        message)``, or None where it can: ``mask_token`` (the text holds this tokenizer's mask
        token, which the model would read as a slot, not as the text), ``too_long``, ``no_tokens``
        (nothing of the answer, or of the statement, is a token of its own: a zero-width space).
        Tokenization only, so that a study leaves such statements out per model and scores the
        rest."""
        statements = list(statements)
        spans = check_spans(statements, answer_spans)
        mask = self.tokenizer.mask_token
        out: list[tuple[str, str] | None] = [None] * len(statements)
        for i, text in enumerate(statements):
            if mask and mask in text:
                out[i] = ("mask_token", f"{quoted(text)} holds the model's mask token {mask!r}")
        rest = [i for i, problem in enumerate(out) if problem is None]
        encoding = self.tokenizer([statements[i] for i in rest], add_special_tokens=True, return_offsets_mapping=True)
        for row, i in enumerate(rest):
            too_long = self.length_problem(len(encoding["input_ids"][row]), statements[i])
            if too_long:
                out[i] = ("too_long", too_long)
                continue
            begin, end = spans[i]
            own = self.own_tokens(encoding, row)
            offsets = encoding["offset_mapping"][row]
            scored = (own[p] and (answer_spans is None or overlaps(span, begin, end)) for p, span in enumerate(offsets))
            if not any(scored):
                what = "statement" if answer_spans is None else f"answer {quoted(statements[i][begin:end])} of"
                out[i] = ("no_tokens", f"{what} {quoted(statements[i])} has no tokens to score")
        return out

    def span_logprob(
        self,
        texts: list[str],
        spans: list[tuple[int, int]],
        within_word_l2r: bool = False,
        what: list[str] | None = None,
    ) -> np.ndarray:
        """The pseudo-log-likelihood of a character span of each text given the rest of it, on
        both sides: the tokens that start inside the span, each masked in turn with the other
        tokens visible, their natural-log probabilities summed (LPAQA's backward probability
        log P(subject | object, prompt) masks a subject in the middle of a sentence)."""

        def starting_inside(i: int, offsets, own) -> list[int]:
            begin, end = spans[i]
            return [
                p
                for p, (start, stop) in enumerate(offsets)
                if own[p] and begin <= first_char(texts[i], start, stop) < end
            ]

        def name(i: int) -> str:
            return (what[i] if what else f"span {quoted(texts[i][spans[i][0] : spans[i][1]])}") + " of"

        return self.pseudo_loglikelihood(list(texts), starting_inside, within_word_l2r, name)

    def statement_logprob(
        self,
        statements: list[str],
        answer_spans: list[tuple[int, int]] | None = None,
        *,
        pll: str = "within_word_l2r",
    ) -> np.ndarray:
        """The masked statement score: the pseudo-log-likelihood summed over the statement's own
        tokens (all but those the tokenizer adds), ``pll="within_word_l2r"`` (Kauf & Ivanova,
        2023: a token masked with the later tokens of its word) or ``"original"`` (Salazar et
        al., 2020: one token masked at a time). With ``answer_spans`` (the answer's character
        offsets in each statement), the answer-only (``conditional``) score: only the tokens whose
        characters overlap the answer, the rest of the statement visible (and within a word only
        the answer's tokens masked). As lm-pub-quiz 0.3.3 scores them. Each distinct (statement,
        span) is scored once. float64, aligned with ``statements``."""
        index, texts, spans = distinct_statements(statements, answer_spans, pll)
        if not texts:
            return np.zeros(0, dtype=np.float64)
        whole = answer_spans is None

        def overlapping(i: int, offsets, own) -> list[int]:
            begin, end = spans[i]
            return [p for p, span in enumerate(offsets) if own[p] and (whole or overlaps(span, begin, end))]

        def name(i: int) -> str:
            begin, end = spans[i]
            return "statement" if whole else f"answer {quoted(texts[i][begin:end])} of"

        totals = self.pseudo_loglikelihood(texts, overlapping, pll == "within_word_l2r", name, "statement PLLs")
        return totals[index]

    def pseudo_loglikelihood(
        self, texts: list[str], select, within_word_l2r: bool, name, what: str = "pseudo-log-likelihoods"
    ) -> np.ndarray:
        """Each text's pseudo-log-likelihood over the tokens ``select(i, offsets, own)`` picks:
        each masked in turn (with ``within_word_l2r`` together with the later picked tokens of its
        word), the rest visible, the natural-log probabilities of the true tokens summed. A masked
        copy that several texts make alike (statements differing only in an answer of as many
        word pieces, each masked whole) runs once, each text reading its own token there."""
        sequences, positions, read = self.masked_copies(texts, select, within_word_l2r, name)
        order, starts = rows_by_distinct(read[:, 0], len(sequences))
        # kept on the device and read back once: the loop never waits for a batch to finish
        token_logprobs = torch.empty(len(read), dtype=torch.float32, device=self.device)

        def score(index: np.ndarray) -> None:
            logits = self.logits_at([sequences[i] for i in index], positions[index])
            logprobs = torch.log_softmax(logits.float(), dim=-1)
            rows, row = rows_of(order, starts, index)
            token_logprobs[self.to_device(rows)] = logprobs[self.to_device(row), self.to_device(read[rows, 1])]

        lengths = np.fromiter((len(s) for s in sequences), dtype=np.int64, count=len(sequences))
        log.info("PLL of %d texts: %d masked copies, %d distinct", len(texts), len(read), len(sequences))
        run_batches(lengths, score, self.settings, desc="pll")
        totals = np.zeros(len(texts), dtype=np.float64)
        np.add.at(totals, read[:, 2], token_logprobs.cpu().numpy().astype(np.float64))
        return self.finite(totals, what)

    def masked_copies(
        self, texts: list[str], select, within_word_l2r: bool, name
    ) -> tuple[list[tuple[int, ...]], np.ndarray, np.ndarray]:
        """The distinct masked copies of ``pseudo_loglikelihood``: their token ids, the position
        read in each, and the reads as rows (copy, true token, text)."""
        encoding = self.tokenizer(list(texts), add_special_tokens=True, return_offsets_mapping=True)
        copies: dict[tuple[tuple[int, ...], int], int] = {}
        reads = []
        for i, (ids, offsets) in enumerate(zip(encoding["input_ids"], encoding["offset_mapping"])):
            self.check_length(ids, texts[i])
            scored = select(i, offsets, self.own_tokens(encoding, i))
            if not scored:
                raise KnowprobeError(f"{name(i)} {quoted(texts[i])} has no tokens to score")
            words = encoding.word_ids(i)
            for p in scored:
                masked = [p]
                if within_word_l2r and words[p] is not None:
                    masked += [q for q in scored if q > p and words[q] == words[p]]
                copy = list(ids)
                for q in masked:
                    copy[q] = self.tokenizer.mask_token_id
                reads.append((copies.setdefault((tuple(copy), p), len(copies)), ids[p], i))
        positions = np.fromiter((p for _, p in copies), dtype=np.int64, count=len(copies))
        return [copy for copy, _ in copies], positions, np.array(reads, dtype=np.int64).reshape(-1, 3)
