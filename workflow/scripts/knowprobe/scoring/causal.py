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

import logging
from dataclasses import replace
from typing import NamedTuple

import numpy as np
import torch

from ..io import KnowprobeError
from .paths import probe_sequences, relative_difference, tolerance, verified_head
from .runtime import (
    CandidateScores,
    ModelRunner,
    SlotScores,
    as_targets,
    candidate_scores,
    check_spans,
    distinct_statements,
    empty_candidate_scores,
    overlaps,
    quoted,
    run_batches,
)
from .start_token import resolve_start_token

log = logging.getLogger(__name__)

# Tokens in a packed row: attention then costs each token 2 x 128 x hidden multiply-adds (about
# 3% of a layer's at hidden 768), and a row ends at most one text short of full.
PACK_WIDTH = 128
# On the CPU, packed rows run in batches of at most this many tokens (16 rows): GPT-2's tanh GELU
# is five element-wise kernels, each a pass over a [tokens, 4 x hidden] tensor, which at the CPU's
# 16,384-token batches no longer fits in cache. BEAR's statements at GPT-2-small size took 15.1-15.6
# CPU-seconds at 512, 1,024 and 2,048 tokens, 15.7-16.9 at 4,096 and 18.4-19.3 at 16,384
# (docs/benchmarks.md, "Statement scoring"). ``scoring.max_tokens`` below it still applies.
PACKED_CPU_MAX_TOKENS = 2_048


class CausalLM(ModelRunner):
    kind = "causal"

    def __init__(self, model, tokenizer, settings=None, padding_side=None, start_token: bool = True):
        """``start_token``: whether every text begins with the model's start token (the one
        ``settings.start_token`` names, ``start_token.resolve_start_token``); statements and the
        next token always do. The paths the model takes (its head where a score is read, packed
        rows, left padding) are tried once here (``paths``)."""
        super().__init__(model, tokenizer, settings, padding_side)
        self.start_token = resolve_start_token(tokenizer, self.settings.start_token)
        self.start = list(self.start_token.ids) if start_token else []
        probes = probe_sequences(tokenizer, model)
        self.head = verified_head(model, model.get_output_embeddings(), probes, self.device)
        self.packable = self.packing_works(probes)
        log.info(
            "%s: start token %s%s; head %s; %s",
            type(model).__name__,
            self.start_token.label,
            "" if start_token else " for statements and the next token only (texts begin without it)",
            "applied where a score is read" if self.head is not None else "unknown: logits from the whole forward",
            "texts packed into rows" if self.packable else "texts in padded batches",
        )

    def packing_width(self, longest: int) -> int | None:
        """The width of a packed row for texts of at most ``longest`` tokens, or None where this
        model is not packed: one whose packed rows did not compute its texts as alone when tried at
        load (``packing_works``), or with a local attention window narrower than a row (GPT-Neo's,
        Mistral's), which counts the row's other texts as distance."""
        width = max(longest, min(PACK_WIDTH, self.max_positions or PACK_WIDTH))
        config = self.model.config
        if not self.packable:
            return None
        windows = [getattr(config, key, None) for key in ("window_size", "sliding_window")]
        if any(isinstance(window, int) and window < width for window in windows):
            return None
        return width

    @torch.inference_mode()
    def packing_works(self, probes: list[list[int]]) -> bool:
        """Whether texts packed into one row (a shared prefix placed once, each token attending
        to its own text's earlier tokens through a 4-D mask at its own positions) give the final
        hidden states each text has alone, tried on the probe sequences (``paths``). A model that
        builds its own mask over the given one, numbers positions itself or takes no 4-D mask
        fails it and runs in padded batches (one log line)."""
        model = type(self.model).__name__
        if self.head is None:
            return False  # packed rows read their logits through the head
        implementation = self.model.config._attn_implementation
        if implementation not in ("sdpa", "eager"):
            log.info("%s: %s attention takes no custom 4-D mask; texts run in padded batches", model, implementation)
            return False
        width = sum(len(sequence) for sequence in probes)
        tree = prefix_tree_rows(probes, [1] * len(probes), width, self.pad_id, True)
        try:
            states = self.packed_hidden_states(
                tree.tokens, tree.positions, ancestor_visibility(tree.parents, tree.positions)
            )
        except Exception as error:  # an architecture that refuses a 4-D mask or position ids
            log.info("%s: packed rows fail (%s: %s); texts run in padded batches", model, type(error).__name__, error)
            return False
        worst = 0.0
        for i, sequence in enumerate(probes):
            reads = tree.reads[tree.reads[:, 3] == i]
            alone = self.model.base_model(input_ids=self.to_device(np.array([sequence[:-1]], dtype=np.int64)))[0][0]
            packed = states[self.to_device(reads[:, 0]), self.to_device(reads[:, 1])]
            worst = max(worst, relative_difference(packed.float(), alone.float()))
        limit = tolerance(next(self.model.parameters()).dtype)
        if worst > limit:
            log.info(
                "%s: packed rows do not compute texts as alone (relative difference %.2g > %.0e: its attention does "
                "not follow a given 4-D mask and position ids); texts run in padded batches",
                model,
                worst,
                limit,
            )
            return False
        return True

    def packed_hidden_states(self, tokens: np.ndarray, positions: np.ndarray, visible: np.ndarray) -> torch.Tensor:
        """Final hidden states [rows, width, hidden] of packed rows, each token attending to the
        tokens ``visible`` [rows, width, width] marks for it, at the given positions."""
        mask = self.to_device(visible)[:, None]
        if self.model.config._attn_implementation == "eager":  # an additive mask in the model's dtype
            dtype = next(self.model.parameters()).dtype
            mask = torch.zeros(mask.shape, dtype=dtype, device=self.device).masked_fill_(~mask, torch.finfo(dtype).min)
        return self.model.base_model(
            input_ids=self.to_device(tokens), attention_mask=mask, position_ids=self.to_device(positions)
        )[0]

    @torch.inference_mode()
    def logits_at(self, sequences: list[list[int]], rows: np.ndarray, positions: np.ndarray) -> torch.Tensor:
        """Vocabulary logits at (row, position) pairs of a batch of sequences."""
        batch = self.pad(sequences)
        row_index = self.to_device(rows)
        where = self.to_device(batch.starts[rows] + positions)
        if self.head is None:
            return self.full_logits(batch)[row_index, where]
        return self.head(self.hidden_states(batch)[row_index, where])

    def encode(
        self, texts: list[str], start: list[int] | None = None
    ) -> tuple[list[list[int]], list[list[tuple[int, int]]]]:
        """Token ids after the start token (``start``: these instead of the scorer's own), and each
        token's character span (the start token's is empty at 0)."""
        start = self.start if start is None else start
        encoding = self.tokenizer(list(texts), add_special_tokens=False, return_offsets_mapping=True)
        ids = [start + list(i) for i in encoding["input_ids"]]
        offsets = [[(0, 0)] * len(start) + list(o) for o in encoding["offset_mapping"]]
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

    def first_scored(self, spans: list[tuple[int, int]], prefix: str) -> int | None:
        """The position of a text's first continuation token (after the start token and the
        prefix's characters), or None where the continuation has no token of its own."""
        return next((p for p, (start, _) in enumerate(spans) if p >= len(self.start) and start >= len(prefix)), None)

    def start_problem(self, first: int | None, prefix: str, continuation: str) -> tuple[str, str] | None:
        if first is None:
            return "no_tokens", f"continuation {quoted(continuation)} of {quoted(prefix)} has no tokens to score"
        if first == 0:
            return "no_context", (
                f"{quoted(continuation)}: without a start token (none in this model, or start_token=False) "
                "the first token of a text has nothing to be predicted from; give a prefix"
            )
        return None

    def continuation_problems(
        self, prefixes: list[str], continuations: list[str], separator: str = " "
    ) -> list[tuple[str, str] | None]:
        texts = [prefix + separator + cont if prefix else cont for prefix, cont in zip(prefixes, continuations)]
        encoding = self.tokenizer(texts, add_special_tokens=False, return_offsets_mapping=True)
        out = []
        for i, offsets in enumerate(encoding["offset_mapping"]):
            spans = [(0, 0)] * len(self.start) + list(offsets)
            too_long = self.length_problem(len(spans), texts[i])
            if too_long:
                out.append(("too_long", too_long))
            else:
                out.append(self.start_problem(self.first_scored(spans, prefixes[i]), prefixes[i], continuations[i]))
        return out

    def conditional_logprob(
        self, prefixes: list[str], continuations: list[str], separator: str = " ", share_prefixes: bool = True
    ) -> np.ndarray:
        """log P(continuation | [start token +] prefix), summed over the continuation's tokens.

        Where the model is packed (``packing_width``), texts share rows, and with
        ``share_prefixes`` the tokens several texts begin with ("a robin" before each of its
        properties) are placed once, each text's later tokens attending to them: the same
        computation, each token seeing the same tokens at the same positions, done once."""
        ids, scored = self.continuation_ids(prefixes, continuations, separator)
        return self.finite(self.sequence_logprobs(ids, scored, share_prefixes), "log-likelihoods")

    def continuation_ids(
        self, prefixes: list[str], continuations: list[str], separator: str = " "
    ) -> tuple[list[list[int]], list[int]]:
        """Each prefix + separator + continuation as one text's token ids (after the start token),
        and the position of its first continuation token; a continuation that cannot be scored
        (``start_problem``) is an error naming it."""
        texts = [prefix + separator + cont if prefix else cont for prefix, cont in zip(prefixes, continuations)]
        ids, offsets = self.encode(texts)
        scored = []
        for i, spans in enumerate(offsets):
            first = self.first_scored(spans, prefixes[i])
            problem = self.start_problem(first, prefixes[i], continuations[i])
            if problem:
                raise KnowprobeError(problem[1])
            scored.append(first)
        return ids, scored

    def sequence_logprobs(self, ids: list[list[int]], scored: list[int], share_prefixes: bool = True) -> np.ndarray:
        """Each sequence's log-prob of its tokens from ``scored[i]`` on: in packed rows where the
        model is packed (``packing_width``; with ``share_prefixes`` a token prefix several
        sequences begin with placed once), else in padded batches."""
        width = self.packing_width(max((len(sequence) for sequence in ids), default=1))
        if width is None:
            return self.padded_logprobs(ids, scored)
        return self.packed_logprobs(prefix_tree_rows(ids, scored, width, self.pad_id, share_prefixes))

    def next_token_and_continuations(
        self, prefixes: list[str], targets, continuations: list[tuple[str, ...]], separator: str = " "
    ) -> tuple[np.ndarray, np.ndarray]:
        """Both causal readings of a prefix in one pass: ``[n, t]`` the next-token log-probs of the
        ``targets`` ids after each prefix (``candidate_logprobs``' ``target_logprobs``: the prefix
        tokenized alone, a log-softmax over the whole vocabulary) and ``[n, c]`` log P(continuation
        | prefix) of each prefix's continuations (``conditional_logprob``'s). Each next-token read
        is the sequence prefix + target, whose placed tokens are the prefix's own, so in packed
        rows a prefix (a few-shot prompt of ten demonstrations) is computed once for its targets
        and its continuations, which begin with it wherever tokenizing the whole text keeps the
        prefix's tokens (otherwise it is placed twice, and the numbers are the same)."""
        prefixes = list(prefixes)
        target_array = as_targets(targets, len(prefixes))
        n, t = len(prefixes), target_array.shape[1]
        width_c = len(continuations[0]) if continuations else 0
        prefix_ids, _ = self.encode(prefixes)
        empty = [text for text, sequence in zip(prefixes, prefix_ids) if not sequence]
        if empty:
            raise KnowprobeError(f"{quoted(empty[0])}: an empty prefix, and no start token to predict from")
        ids = [sequence + [int(token)] for sequence, row in zip(prefix_ids, target_array) for token in row]
        scored = [len(sequence) for sequence in prefix_ids for _ in range(t)]
        for column in range(width_c):
            text_ids, text_scored = self.continuation_ids(prefixes, [row[column] for row in continuations], separator)
            ids += text_ids
            scored += text_scored
        totals = self.finite(self.sequence_logprobs(ids, scored), "log-probs")
        next_token = totals[: n * t].reshape(n, t)
        rest = totals[n * t :].reshape(width_c, n).T if width_c else np.zeros((n, 0))
        return next_token, rest

    def definition_of_start(self) -> str:
        """The start token texts begin with (``start_token.StartToken.label``), or ``none`` where
        this scorer's texts begin without one (COMPS's authors' reading)."""
        return self.start_token.label if self.start else "none"

    @property
    def statement_start(self) -> list[int]:
        """The token every statement and next token is scored after: the model's start token
        (``settings.start_token``, ``start_token.resolve_start_token``), whatever the scorer's
        ``start_token`` says; [] where it is ``none`` (a statement's first token is then not
        scored, having nothing to be predicted from)."""
        return list(self.start_token.ids)

    def statement_logprob(
        self,
        statements: list[str],
        answer_spans: list[tuple[int, int]] | None = None,
        *,
        pll: str = "within_word_l2r",
        share_prefixes: bool = True,
    ) -> np.ndarray:
        """The causal statement score: the sum over the statement's tokens of log P(token | start
        token, earlier tokens), the start token (``statement_start``: BOS, else EOS) put before
        every statement whatever ``start_token`` and the tokenizer say (lm-pub-quiz 0.3.3 with
        ``ensure_bos_token_added=True``; lm-evaluation-harness's ``loglikelihood("", statement)``).
        With ``answer_spans`` (the answer's character offsets in each statement), the answer-only
        (``conditional``) score: from the first token whose characters overlap the answer to the
        statement's end (a space the tokenizer emits as a token of its own before the answer is
        not scored). ``pll`` is the masked scorer's and not read here (one call for both kinds).
        Each distinct (statement, span) is scored once; statements share their token prefixes in
        packed rows (``conditional_logprob``). float64, aligned with ``statements``."""
        index, texts, spans = distinct_statements(statements, answer_spans, pll)
        if not texts:
            return np.zeros(0, dtype=np.float64)
        ids, offsets = self.encode(texts, self.statement_start)
        scored = []
        for i, token_spans in enumerate(offsets):
            begin, end = spans[i] if answer_spans is not None else (0, len(texts[i]))
            where = next((p for p, span in enumerate(token_spans) if p >= 1 and overlaps(span, begin, end)), None)
            if where is None:
                what = f"answer {texts[i][begin:end]!r} of" if answer_spans is not None else "statement"
                raise KnowprobeError(f"{what} {texts[i]!r} has no tokens to score")
            scored.append(where)
        totals = self.sequence_logprobs(ids, scored, share_prefixes)
        return self.finite(totals, "statement log-likelihoods")[index]

    def statement_problems(
        self, statements: list[str], answer_spans: list[tuple[int, int]] | None = None
    ) -> list[tuple[str, str] | None]:
        """Why ``statement_logprob`` cannot score each statement with this model, as ``(reason,
        message)``, or None where it can: ``too_long`` (with the start token), ``no_tokens``
        (nothing of the answer, or of the statement, is a token of its own). Tokenization only,
        so that a study leaves such statements out per model and scores the rest."""
        statements = list(statements)
        spans = check_spans(statements, answer_spans)
        start = self.statement_start
        encoding = self.tokenizer(statements, add_special_tokens=False, return_offsets_mapping=True)
        out: list[tuple[str, str] | None] = []
        for i, offsets in enumerate(encoding["offset_mapping"]):
            too_long = self.length_problem(len(start) + len(offsets), statements[i])
            begin, end = spans[i]
            if too_long:
                out.append(("too_long", too_long))
            # a token is scored where something precedes it (the start token, or an earlier token)
            elif not any(overlaps(span, begin, end) for p, span in enumerate(offsets) if p + len(start) >= 1):
                what = "statement" if answer_spans is None else f"answer {quoted(statements[i][begin:end])} of"
                out.append(("no_tokens", f"{what} {quoted(statements[i])} has no tokens to score"))
            else:
                out.append(None)
        return out

    def padded_logprobs(self, ids: list[list[int]], scored: list[int]) -> np.ndarray:
        """Each text's log-prob of its tokens from ``scored[i]`` on, every text run in padded,
        length-sorted batches, all but its last token (which predicts nothing)."""
        totals = torch.zeros(len(ids), dtype=torch.float64, device=self.device)  # read back once, at the end

        def score(index: np.ndarray) -> None:
            sequences = [ids[i][:-1] for i in index]
            # every continuation token, predicted from the position before it
            rows = np.concatenate([np.full(len(ids[i]) - scored[i], row) for row, i in enumerate(index)])
            targets = np.concatenate([np.arange(scored[i], len(ids[i])) for i in index])
            logits = self.logits_at(sequences, rows, targets - 1)
            tokens = self.to_device(np.array([ids[index[r]][t] for r, t in zip(rows, targets)], dtype=np.int64))
            logprobs = torch.log_softmax(logits.float(), dim=-1).gather(1, tokens[:, None])[:, 0]
            totals.index_add_(0, self.to_device(index[rows]), logprobs.double())

        lengths = np.fromiter((len(sequence) - 1 for sequence in ids), dtype=np.int64, count=len(ids))
        run_batches(lengths, score, self.settings, desc="continuation")
        return totals.cpu().numpy()

    def packed_logprobs(self, tree: TreeRows) -> np.ndarray:
        """The texts' log-probs from their tokens laid out by ``prefix_tree_rows``; the LM head
        runs once at each state a read needs."""
        totals = torch.zeros(tree.texts, dtype=torch.float64, device=self.device)  # read back once, at the end
        n_rows, width = tree.tokens.shape
        row, column, target, text = tree.reads.T

        @torch.inference_mode()
        def score(batch: np.ndarray) -> None:
            items, rows = rows_in(batch, row, n_rows)
            visible = ancestor_visibility(tree.parents[batch], tree.positions[batch])
            states = self.packed_hidden_states(tree.tokens[batch], tree.positions[batch], visible)
            where, inverse = np.unique(rows * width + column[items], return_inverse=True)
            logprobs = torch.log_softmax(self.head(states.flatten(0, 1)[self.to_device(where)]).float(), dim=-1)
            values = logprobs[self.to_device(inverse), self.to_device(target[items])]
            totals.index_add_(0, self.to_device(text[items]), values.double())

        log.info(
            "%d texts packed into %d rows of %d tokens: %d tokens placed, %.1f%% of the rows' positions padding",
            tree.texts,
            n_rows,
            width,
            int(tree.used.sum()),
            100 * (1 - tree.used.sum() / max(tree.tokens.size, 1)),
        )
        settings = self.settings
        if self.device.type == "cpu":
            settings = replace(settings, max_tokens=min(int(settings.max_tokens), PACKED_CPU_MAX_TOKENS))
        run_batches(np.full(n_rows, width), score, settings, desc="continuation (packed rows)", unit="row")
        return totals.cpu().numpy()

    def candidate_logprobs(
        self, prefixes: list[str], candidate_ids, targets=None, top_k: int = 1, start: list[int] | None = None
    ) -> CandidateScores:
        """The next token after each prefix: log-probs of the target tokens (one id per prefix,
        or an [n, t] array) with their ranks among the candidates, and the ``top_k`` best.
        ``start``: the tokens before each prefix (default: the scorer's start token)."""
        ids, _ = self.encode(prefixes, start)
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

    def next_token_logprobs(self, prefixes: list[str], candidate_ids, targets=None, top_k: int = 1) -> CandidateScores:
        """The next-token score: ``candidate_logprobs`` after the statement start token
        (``statement_start``) and the prefix, whatever ``start_token`` says, so that a
        single-token candidate's log-prob is the answer-only statement score of the prefix
        followed by it (docs/scoring.md, "Statement scores")."""
        return self.candidate_logprobs(prefixes, candidate_ids, targets, top_k, start=self.statement_start)

    def slot_scores(
        self,
        prefixes: list[str],
        candidate_ids,
        targets=None,
        top_k: int = 1,
        keep_hidden: bool = False,
        known: tuple[list[str], torch.Tensor] | None = None,
    ) -> SlotScores:
        """``next_token_logprobs`` as ``MaskedLM.slot_scores`` gives the scores at a mask: the next
        token after the statement start token (``statement_start``) and each prefix, each
        distinct prefix run once; with ``keep_hidden`` the final
        hidden state at the prefix's last token (in the model's dtype), from which
        ``candidate_logprobs_from_hidden`` gives every candidate's log-prob later. ``known``:
        prefixes whose hidden states are already at hand, which only the LM head then reads."""

        def prepare(to_run: list[str]):
            encoded, _ = self.encode(to_run, self.statement_start)
            empty = [to_run[i] for i, sequence in enumerate(encoded) if not sequence]
            if empty:
                raise KnowprobeError(f"{quoted(empty[0])}: an empty prefix, and no start token to predict from")

            @torch.inference_mode()
            def states_of(local: np.ndarray) -> torch.Tensor:
                sequences = [encoded[i] for i in local]
                batch = self.pad(sequences)
                rows = torch.arange(len(local), device=self.device)
                last = self.to_device(batch.starts + np.array([len(s) - 1 for s in sequences], dtype=np.int64))
                if self.head is None:  # no plain head (``paths``): the model's own logits are the states kept
                    return self.full_logits(batch)[rows, last]
                return self.hidden_states(batch)[rows, last]

            return np.fromiter((len(ids) for ids in encoded), dtype=np.int64, count=len(encoded)), states_of

        return self.distinct_slot_scores(
            prefixes, candidate_ids, targets, top_k, keep_hidden, known, prepare, "next token", "next-token log-probs"
        )

    def slot_logits(self, states: torch.Tensor) -> torch.Tensor:
        """The output embedding at the prefixes' last hidden states, in the model's dtype (``score_slots``
        and ``candidate_logprobs_from_hidden`` take the log-softmax in float32); without a plain
        head the states kept are the model's own logits already (``slot_scores``)."""
        return self.head(states) if self.head is not None else states


class TreeRows(NamedTuple):
    """Token sequences laid out in rows, each token attending to its ancestors (the tokens before
    it in its own sequence), and the states the scores read."""

    tokens: np.ndarray  # [rows, width] int64, the pad id where no token is
    positions: np.ndarray  # [rows, width] int64: a token's position in its sequence (its depth)
    parents: np.ndarray  # [rows, width] int64: the column of the token before it (-1: none)
    reads: np.ndarray  # [reads, 4] int64: row, column of the state, the token it predicts, the text
    used: np.ndarray  # [rows] int64: tokens placed in each row (the rest is padding)
    texts: int


def prefix_tree_rows(ids: list[list[int]], scored: list[int], width: int, pad_id: int, share: bool) -> TreeRows:
    """Rows of ``width`` tokens holding every sequence, with a read of each of its tokens from
    ``scored[i]`` on (predicted by the state before it). A sequence's last token predicts
    nothing, so it is not placed: only the states a read needs are computed. With ``share``,
    sequences are taken in sorted order and each continues the longest prefix it has in common
    with the one before it in its row (in sorted order that is the longest it shares with any of
    the row), so a prefix several sequences begin with is placed once."""
    placed = [sequence[:-1] for sequence in ids]
    order = sorted(range(len(ids)), key=placed.__getitem__) if share else range(len(ids))
    rows: list[tuple[list[int], list[int], list[int]]] = []
    tokens, positions, parents, reads = [], [], [], []
    previous, path = [], []
    for i in order:
        sequence = placed[i]
        common = 0
        if share:
            limit = min(len(previous), len(sequence))
            while common < limit and previous[common] == sequence[common]:
                common += 1
        if len(tokens) + len(sequence) - common > width:
            rows.append((tokens, positions, parents))
            tokens, positions, parents, common = [], [], [], 0
        path = path[:common]
        for k in range(common, len(sequence)):
            parents.append(path[-1] if path else -1)
            path.append(len(tokens))
            tokens.append(sequence[k])
            positions.append(k)
        reads += [(len(rows), path[t - 1], ids[i][t], i) for t in range(scored[i], len(ids[i]))]
        previous = sequence
    if tokens:
        rows.append((tokens, positions, parents))
    out = [np.full((len(rows), width), fill, dtype=np.int64) for fill in (pad_id, 0, -1)]
    for r, columns in enumerate(rows):
        for array, values in zip(out, columns):
            array[r, : len(values)] = values
    used = np.fromiter((len(columns[0]) for columns in rows), dtype=np.int64, count=len(rows))
    return TreeRows(*out, np.array(reads, dtype=np.int64).reshape(-1, 4), used, len(ids))


def ancestor_visibility(parents: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """[rows, width, width]: each token sees itself and its ancestors (following ``parents``); a
    padding token only itself."""
    n_rows, width = parents.shape
    visible = np.zeros((n_rows, width, width), dtype=bool)
    visible[:, np.arange(width), np.arange(width)] = True
    for depth in range(1, int(positions.max(initial=0)) + 1):
        rows, columns = np.nonzero((positions == depth) & (parents >= 0))
        visible[rows, columns] |= visible[rows, parents[rows, columns]]
    return visible


def rows_in(batch: np.ndarray, row: np.ndarray, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """The items (reads) whose ``row`` is in ``batch``, and each one's row in it."""
    local = np.full(n_rows, -1, dtype=np.int64)
    local[batch] = np.arange(len(batch))
    items = np.flatnonzero(local[row] >= 0)
    return items, local[row[items]]
