"""How every scorer runs a model: padding, batches under a token budget, and recovery from CUDA
out-of-memory (models are loaded by ``knowprobe.models``, devices chosen by ``knowprobe.devices``).

Inputs are sorted by length and packed into batches of at most ``batch_size`` sequences and
``max_tokens`` padded tokens, so that little compute goes to padding; when CUDA runs out of
memory both limits halve and scoring goes on with what is left. Log-probabilities are always
normalised in float32, whatever precision the weights run in.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np
import torch

from ..config import schema_defaults
from ..devices import is_out_of_memory
from ..io import QUOTED, KnowprobeError, progress, quoted  # noqa: F401 (quoted: the scorers' name for it)

log = logging.getLogger(__name__)

_DEFAULTS = schema_defaults("scoring")


@dataclass(frozen=True)
class ScoringSettings:
    """The config's ``scoring`` section, less ``threads`` (a job's, set by its rule)."""

    device: str = _DEFAULTS["device"]  # auto: a free CUDA GPU if there is one, else the CPU
    dtype: str = _DEFAULTS["dtype"]  # auto: float32 on the CPU, half precision on CUDA (devices.resolve_dtype)
    batch_size: int | str = _DEFAULTS["batch_size"]  # most sequences in a batch; auto: the device's
    max_tokens: int | str = _DEFAULTS["max_tokens"]  # most padded tokens in a batch; auto: the device's
    max_length: int = _DEFAULTS["max_length"]  # longest tokenized input
    max_padding: float = _DEFAULTS["max_padding"]  # most padding a batch adds, per real token
    # the token a causal model reads before a text: auto, bos, eos, none or a token (start_token.py)
    start_token: str = _DEFAULTS["start_token"]

    def on(self, device: torch.device) -> ScoringSettings:
        """These settings with ``auto`` batch limits made the device's (``BATCH_LIMITS``)."""
        batch_size, max_tokens = BATCH_LIMITS["cuda" if device.type == "cuda" else "cpu"]
        return replace(
            self,
            batch_size=batch_size if self.batch_size == "auto" else int(self.batch_size),
            max_tokens=max_tokens if self.max_tokens == "auto" else int(self.max_tokens),
        )


# The batch limits ``auto`` stands for, per device, as measured (docs/benchmarks.md): on the CPU
# probe_throughput.py's sweep found 128 sequences / 16,384 tokens the fastest of four (2026-11-25,
# BERT-base size); on an H100 COMPS's scorers ran fastest at 2,048 / 262,144 of the three limits
# tried (2026-11-23, float32: BERT-base size 1,781 -> 2,050 pairs/s, BERT-large size 534 -> 642).
# A GPU with less memory halves them at its first out-of-memory (run_batches).
BATCH_LIMITS = {"cpu": (128, 16_384), "cuda": (2_048, 262_144)}


def make_batches(
    lengths: np.ndarray, batch_size: int, max_tokens: int, max_padding: float = float("inf")
) -> list[np.ndarray]:
    """Indices grouped into batches of similar length, each under both limits and padded by at
    most ``max_padding`` times its real tokens."""
    order = np.argsort(lengths, kind="stable")
    batches, start = [], 0
    while start < len(order):
        end, real = start + 1, int(lengths[order[start]])
        # lengths ascend, so the padded size of order[start:end] is end-start times the last length
        while end < len(order) and end - start < batch_size:
            padded = (end + 1 - start) * int(lengths[order[end]])
            if padded > max_tokens or padded > (1 + max_padding) * (real + int(lengths[order[end]])):
                break
            real += int(lengths[order[end]])
            end += 1
        batches.append(order[start:end])
        start = end
    return batches


def run_batches(
    lengths: np.ndarray,
    score_batch: Callable[[np.ndarray], None],
    settings: ScoringSettings,
    desc: str,
    unit: str = "sequence",
) -> None:
    """Call ``score_batch(index)`` on batches covering every input once (``lengths`` in tokens).

    On CUDA out-of-memory the limits halve and the inputs not yet scored are batched again.
    """
    done = np.zeros(len(lengths), dtype=bool)
    batch_size, max_tokens = settings.batch_size, settings.max_tokens
    with progress(total=len(lengths), unit=unit, desc=desc) as bar:
        while not done.all():
            remaining = np.flatnonzero(~done)
            # a budget below the longest input would leave that input in no batch
            budget = max(max_tokens, int(lengths[remaining].max()))
            try:
                for batch in make_batches(lengths[remaining], batch_size, budget, settings.max_padding):
                    index = remaining[batch]
                    score_batch(index)
                    done[index] = True
                    bar.update(len(index))
            except (torch.cuda.OutOfMemoryError, RuntimeError) as error:
                if not is_out_of_memory(error) or batch_size == 1:
                    raise
                if torch.cuda.is_available():
                    torch.cuda.empty_cache()
                batch_size, max_tokens = max(1, batch_size // 2), max(1, max_tokens // 2)
                log.warning("out of memory; going on with batch_size=%d, max_tokens=%d", batch_size, max_tokens)


class Padded(NamedTuple):
    """A batch of token sequences padded to one width, on the model's device."""

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    position_ids: torch.Tensor | None  # given only where left padding would shift the model's own
    starts: np.ndarray  # where each row's first real token sits


@dataclass(frozen=True)
class CandidateScores:
    """Log-probabilities at one slot (a mask, or the token after a prefix), normalised over the
    whole vocabulary and ranked among the candidates. Arrays are aligned with the inputs."""

    target_logprobs: np.ndarray  # [n, targets] float32: log-prob of each target token
    target_ranks: np.ndarray  # [n, targets] int32: candidates scoring strictly higher than the target
    topk_ids: np.ndarray  # [n, k] int32: the k best candidates' token ids, best first
    topk_logprobs: np.ndarray  # [n, k] float32
    hidden: torch.Tensor | None = None  # [n, hidden size], the model's dtype: the state the head read


class ModelRunner:
    """A loaded model and tokenizer with the batching every scorer shares."""

    kind = ""

    def __init__(self, model, tokenizer, settings: ScoringSettings | None = None, padding_side: str | None = None):
        """``padding_side`` defaults to the tokenizer's; left is used only where the model can be
        given the positions of the real tokens."""
        self.model, self.tokenizer = model, tokenizer
        self.device = next(model.parameters()).device
        self.settings = (settings or ScoringSettings()).on(self.device)
        self.pad_id = next((i for i in (tokenizer.pad_token_id, tokenizer.eos_token_id) if i is not None), 0)
        # RoBERTa-like models number positions from the input ids, skipping padding, so either side
        # is right for them; others take position ids, which left padding must give explicitly
        embeddings = getattr(model.base_model, "embeddings", None)
        self.positions_from_ids = getattr(embeddings, "padding_idx", None) is not None
        self.takes_positions = "position_ids" in inspect.signature(model.base_model.forward).parameters
        self.max_positions = position_limit(model, self.positions_from_ids)
        side = padding_side or getattr(tokenizer, "padding_side", "right") or "right"
        if side == "left" and not (self.positions_from_ids or self.takes_positions):
            side = "right"  # real tokens must start at position 0 for this model
        self.padding_side = side
        if side == "left" and not self.left_padding_works():
            self.padding_side = "right"

    @torch.inference_mode()
    def left_padding_works(self) -> bool:
        """Whether a batch padded on the left (with position ids where the model takes them)
        gives each probe sequence the final hidden states it has alone (``paths``); else the
        batches are padded on the right, where real tokens start at position 0 (logged)."""
        from .paths import probe_sequences, relative_difference, tolerance

        probes = probe_sequences(self.tokenizer, self.model)
        batch = self.pad(probes, side="left")
        states = self.hidden_states(batch)
        worst = 0.0
        for row, sequence in enumerate(probes):
            alone = self.model.base_model(input_ids=self.to_device(np.array([sequence], dtype=np.int64)))[0][0]
            worst = max(worst, relative_difference(states[row, int(batch.starts[row]) :].float(), alone.float()))
        if worst > tolerance(next(self.model.parameters()).dtype):
            log.info(
                "%s: left-padded batches do not compute texts as alone (relative difference %.2g); "
                "padding on the right",
                type(self.model).__name__,
                worst,
            )
            return False
        return True

    @functools.cached_property
    def pads_left(self) -> bool:
        """Whether batches padded on the left compute texts as alone (``left_padding_works``, tried
        once), where the model is given the positions of the real tokens: what decoding with the
        key/value cache needs (each row's last token in the last column), whatever side the
        scorer pads on otherwise."""
        if self.padding_side == "left":
            return True
        return self.takes_positions and not self.positions_from_ids and self.left_padding_works()

    def pad(self, sequences: list[list[int]], side: str | None = None) -> Padded:
        """The sequences padded on ``side`` (None: the scorer's own)."""
        side = side or self.padding_side
        lengths = np.fromiter((len(s) for s in sequences), dtype=np.int64, count=len(sequences))
        width = int(lengths.max())
        ids = np.full((len(sequences), width), self.pad_id, dtype=np.int64)
        attention = np.zeros((len(sequences), width), dtype=np.int64)
        starts = width - lengths if side == "left" else np.zeros_like(lengths)
        for row, (start, sequence) in enumerate(zip(starts, sequences)):
            ids[row, start : start + len(sequence)] = sequence
            attention[row, start : start + len(sequence)] = 1
        positions = None
        if side == "left" and not self.positions_from_ids:
            positions = self.to_device(np.maximum(attention.cumsum(axis=1) - 1, 0))
        return Padded(self.to_device(ids), self.to_device(attention), positions, starts)

    def to_device(self, array: np.ndarray) -> torch.Tensor:
        # torch wants writable memory; arrays from pandas may be read-only views (copied then)
        tensor = torch.from_numpy(np.require(array, requirements="W"))
        if self.device.type == "cuda":  # from pinned memory the copy is queued, the host goes on
            tensor = tensor.pin_memory()
        return tensor.to(self.device, non_blocking=True)

    def finite(self, values, what: str):
        """``values`` (a NumPy array or CandidateScores / SlotScores), checked once they are read
        back: a score that is not finite is an error naming the model and its precision (in
        float16 an activation beyond its range gives inf), never a silent NaN in a table."""
        arrays = [values] if isinstance(values, np.ndarray) else [values.target_logprobs, values.topk_logprobs]
        bad = sum(int(np.size(a) - np.isfinite(a).sum()) for a in arrays)
        if bad:
            dtype = next(self.model.parameters()).dtype
            hint = ""
            if dtype == torch.float16:
                hint = ": its activations may pass float16's range; set scoring.dtype: bfloat16 (or float32)"
            raise KnowprobeError(
                f"{type(self.model).__name__} in {str(dtype).replace('torch.', '')}: {bad} of its {what} are "
                f"not finite{hint}"
            )
        return values

    def hidden_states(self, batch: Padded) -> torch.Tensor:
        """The final hidden states of the base model (before any LM head)."""
        extra = {} if batch.position_ids is None else {"position_ids": batch.position_ids}
        return self.model.base_model(input_ids=batch.input_ids, attention_mask=batch.attention_mask, **extra)[0]

    def full_logits(self, batch: Padded) -> torch.Tensor:
        """Logits at every position by the model's own forward (for heads the scorers do not know)."""
        extra = {} if batch.position_ids is None else {"position_ids": batch.position_ids}
        return self.model(input_ids=batch.input_ids, attention_mask=batch.attention_mask, **extra).logits

    def slot_logits(self, states: torch.Tensor) -> torch.Tensor:
        """The LM head's logits at read states (each kind's own head; see ``slot_scores``)."""
        raise NotImplementedError

    @torch.inference_mode()
    def candidate_logprobs_from_hidden(self, hidden: torch.Tensor, candidate_ids, chunk: int = 4096) -> np.ndarray:
        """Log-probs (normalised over the whole vocabulary) of the candidates from final hidden
        states kept by ``slot_scores(..., keep_hidden=True)``: [n, candidates] float32, computed as
        the probe computed them, without running the model (where the model has no plain head,
        ``paths``, the states kept are its logits, and only the log-softmax runs)."""
        candidates = self.to_device(np.asarray(candidate_ids, dtype=np.int64))
        out = np.empty((len(hidden), len(candidates)), dtype=np.float32)
        for start in range(0, len(hidden), chunk):
            logits = self.slot_logits(hidden[start : start + chunk].to(self.device)).float()
            out[start : start + chunk] = torch.log_softmax(logits, dim=-1)[:, candidates].cpu().numpy()
        return out

    def distinct_slot_scores(
        self,
        texts: list[str],
        candidate_ids,
        targets,
        top_k: int,
        keep_hidden: bool,
        known: tuple[list[str], torch.Tensor] | None,
        prepare: Callable[[list[str]], tuple[np.ndarray, Callable[[np.ndarray], torch.Tensor]]],
        desc: str,
        what: str,
    ) -> SlotScores:
        """Scores at one read position of each text (a mask, or the token after a prefix), each
        distinct text run once and its results kept once (top-k and hidden state per distinct
        text, targets per input): the skeleton both kinds share. ``known``: texts whose read
        states are already at hand (another job's), which only the LM head then reads.
        ``prepare(texts)`` tokenizes the texts to run and gives their lengths and a function from
        a batch of their indices to the states (or, without a known head, the logits) read."""
        index, distinct = distinct_inputs(texts)
        target_array = as_targets(targets, len(texts))
        top_k = min(top_k, len(candidate_ids))
        targets_n = 0 if target_array is None else target_array.shape[1]
        accumulator = SlotAccumulator(len(texts), len(distinct), targets_n, top_k, self.device, keep_hidden)
        candidates = self.to_device(np.asarray(candidate_ids, dtype=np.int64))
        order, starts = rows_by_distinct(index, len(distinct))
        known_row = {text: row for row, text in enumerate(known[0])} if known is not None else {}
        from_known = np.array([text in known_row for text in distinct], dtype=bool)

        @torch.inference_mode()
        def score(batch: np.ndarray, states: torch.Tensor) -> None:
            rows, position = rows_of(order, starts, batch)
            batch_targets = None if target_array is None else self.to_device(target_array[rows])
            batch_t = self.to_device(batch)
            logits = self.slot_logits(states)
            score_slots(
                logits, batch_t, self.to_device(rows), self.to_device(position), candidates, batch_targets, accumulator
            )
            accumulator.add_hidden(batch_t, states)

        if from_known.any():
            rows_known = np.flatnonzero(from_known)
            source = torch.as_tensor([known_row[distinct[i]] for i in rows_known], dtype=torch.long)
            for start in range(0, len(rows_known), self.settings.batch_size):
                batch = rows_known[start : start + self.settings.batch_size]
                score(batch, known[1][source[start : start + len(batch)]].to(self.device))
        encoded_rows = np.flatnonzero(~from_known)
        lengths, states_of = prepare([distinct[i] for i in encoded_rows])
        run_batches(lengths, lambda local: score(encoded_rows[local], states_of(local)), self.settings, desc=desc)
        log.info(
            "scored %d inputs: %d distinct texts, %d of them from known hidden states",
            len(texts),
            len(distinct),
            int(from_known.sum()),
        )
        return self.finite(accumulator.result(index), what)

    def definition_of_start(self) -> str | None:
        """The token this scorer puts before a text, as table rows and logs name it (None: a
        masked model's, whose tokenizer adds its own specials)."""
        return None

    def phrase_tokens(self, texts: list[str]) -> list[tuple[list[int], list[int]]]:
        """Each text's model input and the positions of the text's own tokens (each scorer's)."""
        raise NotImplementedError

    def input_lengths(self, texts: list[str]) -> np.ndarray:
        """How many tokens the model reads for each text, as this scorer feeds it (each scorer's)."""
        raise NotImplementedError

    def continuation_problems(
        self, prefixes: list[str], continuations: list[str], separator: str = " "
    ) -> list[tuple[str, str] | None]:
        """Why ``conditional_logprob`` cannot score each (prefix, continuation) with this model,
        as ``(reason, message)``, or None where it can: ``too_long`` (longer than the model
        takes), ``no_tokens`` (the continuation has no token of its own for this tokenizer: a
        zero-width space), ``no_context`` (a causal model without a start token and nothing
        before the continuation). Tokenization only, so that a study can leave such inputs out
        per model and score the rest (each scorer's)."""
        raise NotImplementedError

    @property
    def length_limit(self) -> int:
        """The most tokens an input may have: ``scoring.max_length``, or the model's position table."""
        return min(self.settings.max_length, self.max_positions or self.settings.max_length)

    def too_long(self, texts: list[str]) -> np.ndarray:
        """Which texts are longer than this model takes (``length_limit``)."""
        return self.input_lengths(texts) > self.length_limit

    def unembeddable(self, texts: list[str]) -> dict[str, str]:
        """The texts ``phrase_embeddings`` cannot embed with this model, each with the reason (one
        longer than the model takes, or one without a token of its own)."""
        texts = list(texts)
        out = {}
        for text, length in zip(texts, self.input_lengths(texts)):
            problem = self.length_problem(int(length), text)
            if problem:
                out[text] = problem
        fitting = [text for text in texts if text not in out]
        for text, (_, keep) in zip(fitting, self.phrase_tokens(fitting)):
            if not keep:
                out[text] = "no tokens to embed"
        return out

    def phrase_embeddings(self, texts: list[str]) -> np.ndarray:
        """The mean of the final hidden states over each text's own tokens (an [UNK] included;
        only what the tokenizer added is left out): the phrase embedding of Yu & Ettinger (2020),
        [n, hidden size] float32."""
        encoded = self.phrase_tokens(list(texts))
        for (ids, keep), text in zip(encoded, texts):
            self.check_length(ids, text)
            if not keep:
                raise KnowprobeError(f"phrase {quoted(text)} has no tokens to embed")
        out = {}

        @torch.inference_mode()
        def embed(index: np.ndarray) -> None:
            batch = self.pad([encoded[i][0] for i in index])
            states = self.hidden_states(batch).float()
            weights = torch.zeros(states.shape[:2], device=states.device)
            for row, i in enumerate(index):
                positions = torch.as_tensor(encoded[i][1], device=states.device) + int(batch.starts[row])
                weights[row, positions] = 1.0 / len(encoded[i][1])
            pooled = (states * weights[:, :, None]).sum(dim=1).cpu().numpy()
            if "embeddings" not in out:
                out["embeddings"] = np.empty((len(encoded), pooled.shape[1]), dtype=np.float32)
            out["embeddings"][index] = pooled

        lengths = np.fromiter((len(ids) for ids, _ in encoded), dtype=np.int64, count=len(encoded))
        run_batches(lengths, embed, self.settings, desc="embed")
        return self.finite(out.get("embeddings", np.empty((0, 0), dtype=np.float32)), "phrase embeddings")

    def check_length(self, ids: list[int], text: str) -> None:
        problem = self.length_problem(len(ids), text)
        if problem:
            raise KnowprobeError(problem)

    def length_problem(self, length: int, text: str) -> str | None:
        """Why an input of ``length`` tokens is too long for this model, or None."""
        if length > self.settings.max_length:
            return (
                f"input {quoted(text)} is {length} tokens long, more than scoring.max_length={self.settings.max_length}"
            )
        if self.max_positions is not None and length > self.max_positions:
            return (
                f"input {quoted(text)} is {length} tokens long, longer than this model takes "
                f"({self.max_positions} positions in its config)"
            )
        return None


def position_limit(model, positions_from_ids: bool) -> int | None:
    """The most tokens a model's position table takes (None where its config states none).
    RoBERTa-like models number positions from padding_idx + 1, so two of theirs are never used."""
    limit = getattr(model.config, "max_position_embeddings", None)  # GPT-2's n_positions is aliased to it
    if not isinstance(limit, int):
        return None
    if positions_from_ids:
        limit -= model.base_model.embeddings.padding_idx + 1
    return limit


@dataclass(frozen=True)
class SlotScores:
    """Log-probabilities at one slot of each input, each distinct text scored once: per input the
    targets' log-probs and ranks among the candidates; per distinct text (``index`` maps an input
    to it) the top-k candidates and, where kept, the final hidden state the head read."""

    index: np.ndarray  # [n] int64: the distinct text of each input
    target_logprobs: np.ndarray  # [n, targets] float32
    target_ranks: np.ndarray  # [n, targets] int32
    topk_ids: np.ndarray  # [distinct, k] int32
    topk_logprobs: np.ndarray  # [distinct, k] float32
    hidden: torch.Tensor | None = None  # [distinct, hidden size], the model's dtype, on the CPU
    distinct_texts: int = 0

    def per_input(self, keep_hidden: bool = False) -> CandidateScores:
        """The same, aligned with the inputs."""
        index = torch.from_numpy(self.index)
        return CandidateScores(
            target_logprobs=self.target_logprobs,
            target_ranks=self.target_ranks,
            topk_ids=self.topk_ids[self.index],
            topk_logprobs=self.topk_logprobs[self.index],
            hidden=self.hidden[index] if keep_hidden and self.hidden is not None else None,
        )


PLL_VARIANTS = ("within_word_l2r", "original")


def check_pll(pll: str) -> None:
    if pll not in PLL_VARIANTS:
        raise KnowprobeError(f"pll={pll!r}: the pseudo-log-likelihood is one of {', '.join(PLL_VARIANTS)}")


def check_spans(statements: list[str], answer_spans) -> list[tuple[int, int]]:
    """The answer spans as (begin, end) pairs inside their statements, or whole statements."""
    if answer_spans is None:
        return [(0, len(text)) for text in statements]
    spans = [(int(b), int(e)) for b, e in answer_spans]
    if len(spans) != len(statements):
        raise KnowprobeError(f"{len(spans)} answer spans for {len(statements)} statements")
    for text, (begin, end) in zip(statements, spans):
        if not 0 <= begin < end <= len(text):
            raise KnowprobeError(f"answer span ({begin}, {end}) is not a non-empty part of {text!r}")
    return spans


def overlaps(span: tuple[int, int], begin: int, end: int) -> bool:
    """Whether a token's characters ``span`` overlap the characters [begin, end)."""
    return span[0] < span[1] and span[0] < end and span[1] > begin


def distinct_inputs(texts: list[str]) -> tuple[np.ndarray, list[str]]:
    """Each input's distinct text (in order of first appearance) and the distinct texts."""
    import pandas as pd

    codes, uniques = pd.factorize(pd.Series(list(texts), dtype=object), sort=False)
    return codes.astype(np.int64), list(uniques)


def distinct_statements(
    statements, answer_spans: list[tuple[int, int]] | None, pll: str
) -> tuple[np.ndarray, list[str], list[tuple[int, int]]]:
    """``statement_logprob``'s inputs checked and each distinct (statement, answer span) taken
    once: ``index`` maps every input to its distinct one, whose texts and spans follow (a
    statement without ``answer_spans`` spans its whole text)."""
    check_pll(pll)
    statements = list(statements)
    spans = check_spans(statements, answer_spans)
    index, distinct = distinct_inputs([f"{b}:{e}:{text}" for text, (b, e) in zip(statements, spans)])
    first = np.zeros(len(distinct), dtype=np.int64)
    first[index] = np.arange(len(statements))  # a representative input of each distinct one
    return index, [statements[i] for i in first], [spans[i] for i in first]


def rows_by_distinct(index: np.ndarray, distinct: int) -> tuple[np.ndarray, np.ndarray]:
    """The inputs of each distinct text, as an order of the inputs and each text's start in it."""
    order = np.argsort(index, kind="stable")
    return order, np.searchsorted(index[order], np.arange(distinct + 1))


def rows_of(order: np.ndarray, starts: np.ndarray, batch: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The inputs of the distinct texts ``batch`` and each one's position in the batch."""
    first, counts = starts[batch], starts[batch + 1] - starts[batch]
    offsets = np.repeat(first - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts) + np.arange(counts.sum())
    return order[offsets], np.repeat(np.arange(len(batch)), counts)


class SlotAccumulator:
    """Where a scorer puts each batch's results: on the device, read back once at the end (per
    input and top-k arrays), or every ``flush_bytes`` of hidden states, so that the scoring loop
    never waits for the host (a read-back per batch stalls the GPU each time)."""

    def __init__(self, n: int, distinct: int, targets: int, top_k: int, device, keep_hidden: bool):
        self.device, self.keep_hidden = device, keep_hidden
        self.target_logprobs = torch.empty((n, targets), dtype=torch.float32, device=device)
        self.target_ranks = torch.empty((n, targets), dtype=torch.int32, device=device)
        self.topk_ids = torch.empty((distinct, top_k), dtype=torch.int32, device=device)
        self.topk_logprobs = torch.empty((distinct, top_k), dtype=torch.float32, device=device)
        self.hidden: torch.Tensor | None = None
        self.pending: list[tuple[torch.Tensor, torch.Tensor]] = []
        self.pending_bytes, self.distinct = 0, distinct

    FLUSH_BYTES = 1 << 30

    def add_hidden(self, batch: torch.Tensor, states: torch.Tensor) -> None:
        if not self.keep_hidden:
            return
        if self.hidden is None:
            with torch.inference_mode(False):  # a plain tensor, which the caller may write to
                self.hidden = torch.empty((self.distinct, states.shape[1]), dtype=states.dtype)
        self.pending.append((batch, states))
        self.pending_bytes += states.numel() * states.element_size()
        if self.pending_bytes >= self.FLUSH_BYTES:
            self.flush()

    def flush(self) -> None:
        with torch.no_grad(), torch.inference_mode(False):
            for batch, states in self.pending:
                self.hidden[batch.cpu()] = states.cpu()
        self.pending, self.pending_bytes = [], 0

    def result(self, index: np.ndarray) -> SlotScores:
        self.flush()
        return SlotScores(
            index=index,
            target_logprobs=self.target_logprobs.cpu().numpy(),
            target_ranks=self.target_ranks.cpu().numpy(),
            topk_ids=self.topk_ids.cpu().numpy(),
            topk_logprobs=self.topk_logprobs.cpu().numpy(),
            hidden=self.hidden,
            distinct_texts=self.distinct,
        )


# the most (input, target, candidate) comparisons ``score_slots`` makes at once: 64 MB as floats
RANK_PIECE_ELEMENTS = 1 << 24


def score_slots(
    logits: torch.Tensor,
    batch: torch.Tensor,
    rows: torch.Tensor,
    row_position: torch.Tensor,
    candidate_ids: torch.Tensor,
    targets: torch.Tensor | None,
    accumulator: SlotAccumulator,
) -> None:
    """From the slot logits of a batch of distinct texts ([b, vocabulary]): their top-k candidates,
    and the targets' log-probs and ranks for every input of those texts, into the accumulator."""
    logprobs = torch.log_softmax(logits.float(), dim=-1)
    candidates = logprobs[:, candidate_ids]
    top_logprobs, top_index = candidates.topk(accumulator.topk_ids.shape[1], dim=1)
    accumulator.topk_ids[batch] = candidate_ids[top_index].to(torch.int32)
    accumulator.topk_logprobs[batch] = top_logprobs
    if targets is not None and targets.shape[1]:
        gold = logprobs[row_position[:, None], targets]  # [rows, targets]
        accumulator.target_logprobs[rows] = gold
        # a rank compares an input's targets with every candidate of its text: [rows, targets,
        # candidates] at once, in pieces, since a text may stand for any number of inputs (an LPAQA
        # prompt beginning with [Y] gives every fact the same empty prefix: 40,000 inputs took 3.2 GB)
        step = max(1, RANK_PIECE_ELEMENTS // (candidates.shape[1] * targets.shape[1]))
        for start in range(0, len(rows), step):
            piece = slice(start, start + step)
            accumulator.target_ranks[rows[piece]] = (
                (candidates[row_position[piece]][:, None, :] > gold[piece, :, None]).sum(dim=2).to(torch.int32)
            )


def candidate_scores(
    logits: torch.Tensor, candidate_ids: torch.Tensor, targets: torch.Tensor | None, top_k: int
) -> tuple[np.ndarray, ...]:
    """From slot logits [n, vocabulary]: target log-probs and ranks, and the top-k candidates."""
    logprobs = torch.log_softmax(logits.float(), dim=-1)
    candidates = logprobs[:, candidate_ids]
    top_logprobs, top_index = candidates.topk(top_k, dim=1)
    if targets is None:
        target_logprobs = torch.zeros((len(logits), 0), device=logits.device)
        target_ranks = torch.zeros((len(logits), 0), dtype=torch.long, device=logits.device)
    else:
        target_logprobs = logprobs.gather(1, targets)
        target_ranks = (candidates[:, None, :] > target_logprobs[:, :, None]).sum(dim=2)
    return (
        target_logprobs.cpu().numpy(),
        target_ranks.cpu().numpy(),
        candidate_ids[top_index].cpu().numpy(),
        top_logprobs.cpu().numpy(),
    )


def empty_candidate_scores(n: int, targets: int, top_k: int) -> CandidateScores:
    return CandidateScores(
        target_logprobs=np.empty((n, targets), dtype=np.float32),
        target_ranks=np.empty((n, targets), dtype=np.int32),
        topk_ids=np.empty((n, top_k), dtype=np.int32),
        topk_logprobs=np.empty((n, top_k), dtype=np.float32),
    )


def as_targets(targets, n: int) -> np.ndarray | None:
    """Target token ids as an [n, t] int64 array (a 1-D array is one target per input)."""
    if targets is None:
        return None
    array = np.asarray(targets, dtype=np.int64)
    array = array[:, None] if array.ndim == 1 else array
    if array.shape[0] != n:
        raise ValueError(f"{array.shape[0]} target rows for {n} inputs")
    return array
