"""Multi-token answers: open decoding at masks (X-FACTR's three ways), the mLAMA score of a closed
candidate set, and greedy generation for causal models (docs/scoring.md, "Open decoding and
generation (multi-token answers)").

Conventions shared by every function here:

* Log-probabilities are ``log_softmax`` over the model's **whole vocabulary** in float32 (the
  scoring layer's rule, whatever precision the weights run in). A token left out of the choice
  (below) is still in the normalisation: a kept log-prob is never renormalised over what remains.
* The argmax is ``torch.argmax``: among equal values it returns the first, so ties go to the
  **lowest token id** (and, where positions compete, to the left-most position).
* Masked models never predict a special token: ``tokenizer.all_special_ids`` (BERT's [PAD], [UNK],
  [CLS], [SEP], [MASK]; RoBERTa's <s>, </s>, <pad>, <unk>, <mask>) are set to -inf for the choice
  only. A predicted [MASK] would leave its position masked (X-FACTR's decoder counts a mask filled
  by [MASK] as unchanged), [PAD]/[CLS]/[SEP] are not text, and [UNK] is no answer. X-FACTR's code
  has the hook for this (``restrict_vocab``, set to -inf before its log-softmax) but leaves it
  empty; we exclude the specials and keep the full-vocabulary normalisation.
* Words are detokenized with ``tokenizer.decode(ids, skip_special_tokens=False,
  clean_up_tokenization_spaces=True)`` and stripped of surrounding whitespace (WordPiece's "##"
  pieces join their word; byte-level BPE's leading space goes).

The masked decoder follows X-FACTR's ``iter_decode_beam_search`` (jzbjyb/X-FACTR,
scripts/probe.py, commit c1938ec) with beam 1 where the issue's definition leaves a choice; see
``masked_decode``.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import torch

from ..io import KnowprobeError
from .causal import CausalLM
from .final_layer import final_layer_at
from .masked import MaskedLM
from .runtime import Padded, overlaps, quoted, run_batches

SLOT = "[Y]"  # where the answer goes in a prompt (knowprobe.prompts.OBJECT)
METHODS = ("independent", "order", "confidence")
INDEPENDENT, ORDER, CONFIDENCE = range(len(METHODS))  # decode_rows' method codes
LENGTH_BY = ("mean", "sum")


def decode_text(tokenizer, ids) -> str:
    """A prediction's text: ``tokenizer.decode`` with its clean-up of spaces, stripped."""
    return tokenizer.decode([int(i) for i in ids], clean_up_tokenization_spaces=True).strip()


# --- masked models: the template with k masks ------------------------------------------------


def slot_tokens(scorer: MaskedLM, prompts: Sequence[str]) -> tuple[list[list[int]], np.ndarray]:
    """Each prompt tokenized with its ``[Y]`` as one mask token (the tokenizer's own additions
    included), and where that mask sits. ``k`` masks are then put there at the token level, so
    that the input is the same whatever the tokenizer does with spaces between mask tokens."""
    mask = scorer.tokenizer.mask_token
    if mask is None:
        raise KnowprobeError(f"{type(scorer.tokenizer).__name__}: no mask token")
    texts = []
    for prompt in prompts:
        if prompt.count(SLOT) != 1:
            raise KnowprobeError(f"prompt {quoted(prompt)} needs exactly one {SLOT}")
        texts.append(prompt.replace(SLOT, mask))
    encoded = scorer.tokenizer(texts, add_special_tokens=True)["input_ids"]
    return [list(ids) for ids in encoded], scorer.mask_positions(texts, encoded, masks=1, slot=0)


def with_masks(scorer: MaskedLM, ids: list[int], at: int, k: int, text: str) -> list[int]:
    sequence = ids[:at] + [scorer.tokenizer.mask_token_id] * k + ids[at + 1 :]
    scorer.check_length(sequence, text)
    return sequence


def excluded_ids(tokenizer) -> torch.Tensor:
    return torch.as_tensor(sorted(set(tokenizer.all_special_ids)), dtype=torch.long)


@torch.inference_mode()
def logits_at_pairs(scorer: MaskedLM, batch: Padded, rows: torch.Tensor, at: torch.Tensor):
    """Vocabulary logits (float32) at (row, position) pairs of a padded batch: the encoder once,
    its last layer and the LM head only there (``final_layer_at``)."""
    if scorer.head is None:
        return scorer.full_logits(batch)[rows, at].float()
    with final_layer_at(scorer.final_layer, rows, at):
        states = scorer.hidden_states(batch)[rows, at]
    return scorer.slot_logits(states).float()


@torch.inference_mode()
def decode_rows(
    scorer: MaskedLM, sequences: list[list[int]], first: np.ndarray, counts: np.ndarray, methods: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fill the ``counts[r]`` consecutive masks from ``first[r]`` of each sequence by the method
    ``METHODS[methods[r]]``: one forward per step for the whole batch (``independent``: one step;
    ``order`` and ``confidence``: one mask per row per step, a row leaving the batch once it is
    filled). Rows whose inputs are identical at a step (one prompt and number of masks under
    several methods before their choices part, or a prompt asked twice) run as one row of that
    forward, the last layer and head only at the masks some row of theirs reads.
    Returns per row and mask: the token, its log-prob when it was filled, and that step; [rows,
    max count], -1 / NaN beyond a row's count."""
    batch = scorer.pad(sequences)
    device = scorer.device
    ids = batch.input_ids.clone()
    n, width = len(sequences), int(counts.max())
    slots = torch.arange(width, device=device)
    positions = scorer.to_device(batch.starts + first)[:, None] + slots  # [n, width]
    unfilled = slots[None, :] < scorer.to_device(counts)[:, None]
    code = scorer.to_device(np.asarray(methods, dtype=np.int64))
    out_ids = torch.full((n, width), -1, dtype=torch.long, device=device)
    out_logprobs = torch.full((n, width), float("nan"), dtype=torch.float32, device=device)
    out_steps = torch.full((n, width), -1, dtype=torch.long, device=device)
    excluded = excluded_ids(scorer.tokenizer).to(device)
    for step in range(width):
        active = torch.nonzero(unfilled.any(dim=1))[:, 0]  # independent rows leave after step 0
        if not len(active):
            break
        # the distinct inputs of the rows still open, and a row of each (identical ids: identical
        # padding, so the same attention mask and positions)
        _, group = torch.unique(ids[active], dim=0, return_inverse=True)
        groups = int(group.max()) + 1
        first_row = torch.full((groups,), len(active), device=device).scatter_reduce(
            0, group, torch.arange(len(active), device=device), reduce="amin"
        )
        distinct = active[first_row]
        # the masks each row reads: order its left-most open one, the others every open one
        open_slots = unfilled[active]
        method = code[active]
        reads = open_slots & (method != ORDER)[:, None]
        in_order = torch.nonzero(method == ORDER)[:, 0]
        reads[in_order, open_slots[in_order].to(torch.int8).argmax(dim=1)] = True
        row, slot = torch.nonzero(reads, as_tuple=True)
        at = positions[active]
        needed = torch.zeros((groups, ids.shape[1]), dtype=torch.bool, device=device)
        needed[group[row], at[row, slot]] = True
        pair_group, pair_position = torch.nonzero(needed, as_tuple=True)
        position_ids = None if batch.position_ids is None else batch.position_ids[distinct]
        sub = Padded(ids[distinct], batch.attention_mask[distinct], position_ids, batch.starts[distinct.cpu().numpy()])
        logprobs = torch.log_softmax(logits_at_pairs(scorer, sub, pair_group, pair_position), dim=-1)
        choice = logprobs.index_fill(1, excluded, float("-inf")).argmax(dim=1)  # ties: lowest id
        value = logprobs.gather(1, choice[:, None])[:, 0]
        pair_of = torch.full(needed.shape, -1, dtype=torch.long, device=device)
        pair_of[pair_group, pair_position] = torch.arange(len(pair_group), device=device)
        # independent fills every mask it reads, order its one; confidence the read mask whose
        # top-1 log-prob is highest (ties: the left-most)
        best = torch.full(open_slots.shape, float("-inf"), device=device)
        best[row, slot] = value[pair_of[group[row], at[row, slot]]]
        confident = torch.nonzero(method == CONFIDENCE)[:, 0]
        keep = method[row] != CONFIDENCE
        row = torch.cat([row[keep], confident])
        slot = torch.cat([slot[keep], best[confident].argmax(dim=1)])
        pair = pair_of[group[row], at[row, slot]]
        target = active[row]
        ids[target, positions[target, slot]] = choice[pair]
        out_ids[target, slot], out_logprobs[target, slot], out_steps[target, slot] = choice[pair], value[pair], step
        unfilled[target, slot] = False
    return out_ids.cpu().numpy(), out_logprobs.cpu().numpy(), out_steps.cpu().numpy()


@dataclass(frozen=True)
class OpenDecoding:
    """``masked_decode``'s results, aligned with the prompts. Every length's candidate is kept
    (``[n, M, M]``: prompt, m - 1, mask; -1 / NaN past the m-th mask); the chosen length's are the
    prediction."""

    candidate_ids: np.ndarray  # [n, M, M] int64: the tokens filled with m masks
    candidate_logprobs: np.ndarray  # [n, M, M] float32: each token's log-prob when it was filled
    fill_steps: np.ndarray  # [n, M, M] int64: the step at which each mask was filled (0 first)
    candidate_texts: list[list[str]]  # [n][M]: each length's candidate, detokenized
    scores: np.ndarray  # [n, M] float64: each length's mean (or sum) of its log-probs
    lengths: np.ndarray  # [n] int64: the chosen number of masks m (1..M)

    @property
    def token_ids(self) -> list[list[int]]:
        return [self.candidate_ids[i, m - 1, :m].tolist() for i, m in enumerate(self.lengths)]

    @property
    def token_logprobs(self) -> list[np.ndarray]:
        return [self.candidate_logprobs[i, m - 1, :m] for i, m in enumerate(self.lengths)]

    @property
    def texts(self) -> list[str]:
        return [self.candidate_texts[i][m - 1] for i, m in enumerate(self.lengths)]

    @property
    def score(self) -> np.ndarray:
        return self.scores[np.arange(len(self.lengths)), self.lengths - 1]


def masked_decode(
    scorer: MaskedLM,
    prompts: Sequence[str],
    max_masks: int = 5,
    method: str = "independent",
    length_by: str = "sum",
) -> OpenDecoding:
    """Open decoding of each prompt's ``[Y]`` (the subject already filled) by a masked LM, X-FACTR's
    way (Jiang et al., EMNLP 2020), beam 1: for m = 1..``max_masks`` the ``[Y]`` becomes m mask
    tokens and they are filled by

    * ``independent``: one forward; every mask its argmax (X-FACTR ``--init_method all
      --iter_method none --max_iter 1``);
    * ``order``: one forward per mask, the left-most unfilled mask filled each time, the filled
      tokens visible to the next forward (X-FACTR ``--init_method left``);
    * ``confidence``: one forward per mask, filling the unfilled mask whose top-1 log-prob is the
      highest (X-FACTR ``--init_method confidence``: the maximum over every mask position's best
      token; ties to the left-most mask).

    Each token's log-prob is kept from the forward that filled it (X-FACTR updates a position's
    log-prob only when it changes; it does not rescore at the end, ``reprob`` off). The length is
    the m whose candidate has the highest sum of log-probs over its m masks (``length_by="sum"``,
    the default): the paper's accuracies are computed by X-FACTR's ``scripts/ana.py``, whose
    ``EvalContext`` picks among the lengths by ``np.sum`` of each prediction's log-probs unless
    ``--norm`` is given (``scripts/probe.py`` at c1938ec, ``LamaPredictions.eval``).
    ``length_by="mean"`` is the other reading: the mean over the m masks, ``ana.py --norm`` and
    the online probe's own choice (``probe.py`` without ``--no_len_norm``). Ties go to the shorter
    (X-FACTR's ``max(0)`` over lengths returns the first). Not followed: X-FACTR adds a random
    tie-breaker in [0, 1e-5) to the kept log-probs at every step to order its beams; with one beam
    it only shifts them, so it is left out. Rows (prompt, m) are batched together
    (``run_batches``), one forward per batch and step.
    """
    return masked_decode_jointly(scorer, prompts, (method,), max_masks, length_by)[method]


def masked_decode_jointly(
    scorer: MaskedLM,
    prompts: Sequence[str],
    methods: Sequence[str] = METHODS,
    max_masks: int = 5,
    length_by: str = "sum",
) -> dict[str, OpenDecoding]:
    """Each prompt decoded by each of ``methods`` (``masked_decode``'s definitions) in one run: the
    rows (prompt, m, method) of one (prompt, m) sit side by side in a batch (unless a batch's
    limit falls between them), so that their first forward, whose input is the same for every
    method, runs once, and so does any later one while two
    methods have filled the same tokens (``decode_rows``). Each method's result is the one
    ``masked_decode`` gives it alone (up to the float rounding of another batch's shape)."""
    methods = list(dict.fromkeys(methods))
    wrong = [m for m in methods if m not in METHODS]
    if wrong or not methods:
        raise KnowprobeError(f"method={(wrong or [None])[0]!r}: one of {', '.join(METHODS)}")
    if length_by not in LENGTH_BY:
        raise KnowprobeError(f"length_by={length_by!r}: one of {', '.join(LENGTH_BY)}")
    if max_masks < 1:
        raise KnowprobeError(f"max_masks={max_masks}: at least 1")
    prompts = list(prompts)
    n, big_m, k = len(prompts), max_masks, len(methods)
    encoded, at = slot_tokens(scorer, prompts)
    # rows: prompt-major, then m, then method, so a (prompt, m)'s rows have one length and batch together
    row_prompt = np.repeat(np.arange(n), big_m * k)
    row_masks = np.tile(np.repeat(np.arange(1, big_m + 1), k), n)
    row_method = np.tile(np.arange(k), n * big_m)
    codes = np.array([METHODS.index(m) for m in methods], dtype=np.int64)
    sequences = [with_masks(scorer, encoded[i], int(at[i]), int(m), prompts[i]) for i, m in zip(row_prompt, row_masks)]
    candidate_ids = np.full((k, n, big_m, big_m), -1, dtype=np.int64)
    candidate_logprobs = np.full((k, n, big_m, big_m), np.nan, dtype=np.float32)
    fill_steps = np.full((k, n, big_m, big_m), -1, dtype=np.int64)

    def score(index: np.ndarray) -> None:
        tokens, logprobs, steps = decode_rows(
            scorer, [sequences[r] for r in index], at[row_prompt[index]], row_masks[index], codes[row_method[index]]
        )
        width = tokens.shape[1]
        where = (row_method[index], row_prompt[index], row_masks[index] - 1)
        candidate_ids[where[0], where[1], where[2], :width] = tokens
        candidate_logprobs[where[0], where[1], where[2], :width] = logprobs
        fill_steps[where[0], where[1], where[2], :width] = steps

    lengths = np.fromiter((len(s) for s in sequences), dtype=np.int64, count=len(sequences))
    if n:
        run_batches(lengths, score, scorer.settings, desc=f"open decoding ({', '.join(methods)})")
    filled = candidate_ids >= 0
    scorer.finite(candidate_logprobs[filled], "open-decoding log-probs")
    summed = np.where(filled, candidate_logprobs.astype(np.float64), 0.0).sum(axis=3)
    scores = summed / np.arange(1, big_m + 1) if length_by == "mean" else summed
    texts = scorer.tokenizer.batch_decode(
        [candidate_ids[j, i, m, : m + 1].tolist() for j in range(k) for i in range(n) for m in range(big_m)],
        clean_up_tokenization_spaces=True,
    )
    out = {}
    for j, method in enumerate(methods):
        mine = texts[j * n * big_m : (j + 1) * n * big_m]
        out[method] = OpenDecoding(
            candidate_ids=candidate_ids[j],
            candidate_logprobs=candidate_logprobs[j],
            fill_steps=fill_steps[j],
            candidate_texts=[[t.strip() for t in mine[i * big_m : (i + 1) * big_m]] for i in range(n)],
            scores=scores[j],
            lengths=(np.argmax(scores[j], axis=1) + 1).astype(np.int64) if n else np.zeros(0, dtype=np.int64),
        )
    return out


@dataclass(frozen=True)
class MlamaScores:
    """``mlama_scores``'s results: [prompts, candidates], NaN / 0 where a prompt has fewer
    candidates than the longest list."""

    scores: np.ndarray  # float64: mean over the candidate's k masks of log P(its token i at mask i)
    token_counts: np.ndarray  # int64: k, the candidate's tokens in the filled prompt

    @property
    def ranks(self) -> np.ndarray:
        """[n, C] int64: how many of the prompt's candidates score strictly higher (0: the best)."""
        s = np.where(np.isnan(self.scores), -np.inf, self.scores)
        return (s[:, None, :] > s[:, :, None]).sum(axis=2)

    @property
    def best(self) -> np.ndarray:
        """[n] int64: the index of each prompt's best candidate (ties: the first)."""
        return np.argmax(np.where(np.isnan(self.scores), -np.inf, self.scores), axis=1)


def candidate_tokens(scorer: MaskedLM, prompt: str, candidate: str) -> list[int]:
    """The candidate's tokens as they are in the prompt filled with it: the tokens whose
    characters overlap the candidate's (so a byte-level BPE's leading space goes with it)."""
    begin = prompt.index(SLOT)
    text = prompt[:begin] + candidate + prompt[begin + len(SLOT) :]
    encoding = scorer.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    span = (begin, begin + len(candidate))
    ids = [t for t, offsets in zip(encoding["input_ids"], encoding["offset_mapping"]) if overlaps(offsets, *span)]
    if not ids:
        raise KnowprobeError(f"candidate {quoted(candidate)} has no tokens in {quoted(text)}")
    return ids


def mlama_scores(scorer: MaskedLM, prompts: Sequence[str], candidates) -> MlamaScores:
    """The mLAMA score (Kassner et al., 2021) of every candidate for each prompt: for a candidate
    of k tokens (as tokenized in the filled prompt), the prompt with k masks at ``[Y]``, and the
    mean over i of log P(the candidate's token i at mask i), all masks open in one forward (no
    iteration). ``candidates``: one list shared by every prompt, or one list per prompt. Each
    (prompt, k) runs once whatever the number of candidates of k tokens."""
    prompts = list(prompts)
    candidates = list(candidates)
    if candidates and not isinstance(candidates[0], str):
        per_prompt = [list(c) for c in candidates]
        if len(per_prompt) != len(prompts):
            raise KnowprobeError(f"{len(per_prompt)} candidate lists for {len(prompts)} prompts")
    else:
        per_prompt = [candidates] * len(prompts)
    encoded, at = slot_tokens(scorer, prompts)
    width = max((len(c) for c in per_prompt), default=0)
    counts = np.zeros((len(prompts), width), dtype=np.int64)
    rows: dict[tuple[int, int], int] = {}
    reads = []  # (row, mask, token, prompt, candidate)
    cache: dict[tuple[str, str, str], list[int]] = {}
    for i, (prompt, candidate_list) in enumerate(zip(prompts, per_prompt)):
        begin = prompt.index(SLOT)
        for c, candidate in enumerate(candidate_list):
            # a candidate's tokens depend on its neighbours only: cached on them
            key = (prompt[max(begin - 1, 0) : begin], prompt[begin + len(SLOT) :], candidate)
            if key not in cache:
                cache[key] = candidate_tokens(scorer, prompt, candidate)
            tokens = cache[key]
            counts[i, c] = len(tokens)
            row = rows.setdefault((i, len(tokens)), len(rows))
            reads += [(row, j, token, i, c) for j, token in enumerate(tokens)]
    read = np.array(reads, dtype=np.int64).reshape(-1, 5)
    sequences = [with_masks(scorer, encoded[i], int(at[i]), k, prompts[i]) for i, k in rows]
    first = np.array([at[i] for i, _ in rows], dtype=np.int64)
    read_order = np.argsort(read[:, 0], kind="stable")
    read_starts = np.searchsorted(read[read_order, 0], np.arange(len(rows) + 1))
    values = np.zeros(len(read), dtype=np.float32)
    row_in_batch = np.zeros(len(rows), dtype=np.int64)

    @torch.inference_mode()
    def score(index: np.ndarray) -> None:
        batch = scorer.pad([sequences[r] for r in index])
        mine = np.concatenate([read_order[read_starts[r] : read_starts[r + 1]] for r in index])
        row_in_batch[index] = np.arange(len(index))
        local = row_in_batch[read[mine, 0]]
        rows_t = scorer.to_device(local)
        at_t = scorer.to_device(batch.starts[local] + first[read[mine, 0]] + read[mine, 1])
        pairs, inverse = torch.unique(torch.stack([rows_t, at_t]), dim=1, return_inverse=True)
        logprobs = torch.log_softmax(logits_at_pairs(scorer, batch, pairs[0], pairs[1]), dim=-1)
        values[mine] = logprobs[inverse, scorer.to_device(read[mine, 2])].cpu().numpy()

    lengths = np.fromiter((len(s) for s in sequences), dtype=np.int64, count=len(sequences))
    if len(sequences):
        run_batches(lengths, score, scorer.settings, desc="mLAMA score")
    scorer.finite(values, "mLAMA log-probs")
    scores = np.full((len(prompts), width), np.nan, dtype=np.float64)
    sums = np.zeros((len(prompts), width), dtype=np.float64)
    np.add.at(sums, (read[:, 3], read[:, 4]), values.astype(np.float64))
    has = counts > 0
    scores[has] = sums[has] / counts[has]
    return MlamaScores(scores=scores, token_counts=counts)


# --- causal models: greedy generation ----------------------------------------------------------


@dataclass(frozen=True)
class Generations:
    """``causal_generate``'s results, aligned with the prefixes."""

    texts: list[str]  # the answer: the generated text before the stop, stripped
    token_ids: list[list[int]]  # the answer's tokens: the generated ones up to the last that spells it
    logprobs: np.ndarray  # [n] float64: their summed log-probs (0 for an empty answer)
    generated_ids: list[list[int]]  # every generated token (EOS not included)
    stopped_by: list[str]  # "newline", "stop_text", "eos" or "length"


def cut_answer(text: str, stop: str) -> tuple[str, str | None]:
    """The text before the first newline or ``stop`` (whichever comes first), stripped, and what
    stopped it (None: neither is in the text)."""
    cuts = [(text.find("\n"), "newline")]
    if stop:
        cuts.append((text.find(stop), "stop_text"))
    found = [(where, why) for where, why in cuts if where >= 0]
    if not found:
        return text.strip(), None
    where, why = min(found)
    return text[:where].strip(), why


def stop_list(stop_texts, n: int) -> list[str]:
    if stop_texts is None or isinstance(stop_texts, str):
        return [(stop_texts or "").strip()] * n
    stops = [(s or "").strip() for s in stop_texts]
    if len(stops) != n:
        raise KnowprobeError(f"{len(stops)} stop texts for {n} prefixes")
    return stops


def uses_cache(scorer: CausalLM) -> bool:
    """Whether ``greedy_steps`` decodes with the model's key/value cache: where the model computes
    left-padded batches as texts alone (``ModelRunner.pads_left``: each row's last token in the
    last column, new tokens appended after it), with position ids the scorer gives."""
    return scorer.pads_left and not scorer.positions_from_ids


@torch.inference_mode()
def greedy_steps(scorer: CausalLM, sequences: list[list[int]], steps: int, live: np.ndarray):
    """Greedy decoding of a batch of token sequences: yields, for at most ``steps`` steps, each
    row's argmax token and its float32 log-softmax value over the whole vocabulary ([rows] each;
    ties: the lowest id), the token appended to the row for the next step. ``live`` (the caller's,
    read at each step) marks the rows still asked for. With the key/value cache (``uses_cache``)
    every row runs one token a step, live or not; without it, each live row's whole sequence runs
    again (``CausalLM.logits_at``), the rows that stopped left out."""
    if not uses_cache(scorer):
        grown = [list(sequence) for sequence in sequences]
        for _ in range(steps):
            rows = np.flatnonzero(live)
            asked = [grown[row] for row in rows]
            last = np.array([len(sequence) - 1 for sequence in asked], dtype=np.int64)
            values = torch.log_softmax(scorer.logits_at(asked, np.arange(len(rows)), last).float(), dim=-1)
            choice = values.argmax(dim=1)
            chosen = values.gather(1, choice[:, None])[:, 0].cpu().numpy()
            tokens, found = np.zeros(len(sequences), dtype=np.int64), np.zeros(len(sequences))
            tokens[rows], found[rows] = choice.cpu().numpy(), chosen
            for row, token in zip(rows.tolist(), tokens[rows].tolist()):
                grown[row].append(token)
            yield tokens, found
        return
    batch = scorer.pad(sequences, side="left")
    attention, positions = batch.attention_mask, batch.position_ids
    inputs, cache = batch.input_ids, None
    # the base model and the scorer's head at each row's last token; a head the scorer does not
    # know: the model's own forward, its logits at the last token
    forward = scorer.model.base_model if scorer.head is not None else scorer.model
    # the cache's name: `cache` in transformers 5.x's later releases, `past_key_values` before
    key = "cache" if "cache" in inspect.signature(forward.forward).parameters else "past_key_values"
    for _ in range(steps):
        out = forward(
            input_ids=inputs, attention_mask=attention, position_ids=positions, use_cache=True, **{key: cache}
        )
        cache = out[key]
        logits = scorer.head(out[0][:, -1]) if scorer.head is not None else out.logits[:, -1]
        values = torch.log_softmax(logits.float(), dim=-1)
        choice = values.argmax(dim=1)
        yield choice.cpu().numpy(), values.gather(1, choice[:, None])[:, 0].cpu().numpy()
        inputs = choice[:, None]
        attention = torch.cat([attention, torch.ones_like(inputs)], dim=1)
        positions = positions[:, -1:] + 1


def causal_generate(
    scorer: CausalLM, prefixes: Sequence[str], stop_texts=None, max_new_tokens: int = 16
) -> Generations:
    """Greedy continuation of each prefix (the prompt's text before ``[Y]``, subject filled) by a
    causal LM, after the statement start token (``CausalLM.statement_start``: BOS, else EOS) as
    the scoring layer's statements are scored; the prefix's trailing whitespace is dropped (a
    byte-level BPE's answer token carries its own leading space, as lm-evaluation-harness's target
    delimiter goes with the continuation). At most ``max_new_tokens`` new tokens, each the argmax
    of the float32 log-softmax over the whole vocabulary (ties: the lowest id; nothing excluded:
    EOS ends the answer). Generation stops at EOS, or once the generated text holds a newline or
    the prompt's ``stop_texts`` (the template's next literal text after ``[Y]``, stripped of
    whitespace: "." for "[X] was born in [Y]."; one for all prefixes or one per prefix; None or
    empty: newline only). The answer is the decoded text before the first newline or stop text,
    stripped (note that a stop "." also cuts an answer such as "St. Louis"); its tokens are the
    generated ones up to the first after which the answer is complete (the token holding the stop
    counts where it also carries answer characters) and its log-prob their sum. The prefixes are
    batched by ``run_batches`` and each batch decoded by ``greedy_steps``: with the model's
    key/value cache where left-padded batches compute texts as alone (``uses_cache``, whatever side
    the scorer pads on otherwise; each step runs one new token a row), else by running each live
    row's whole sequence again."""
    prefixes = [p.rstrip() for p in prefixes]
    stops = stop_list(stop_texts, len(prefixes))
    ids, _ = scorer.encode(prefixes, scorer.statement_start)
    for sequence, text in zip(ids, prefixes):
        scorer.check_length(sequence + [0] * max_new_tokens, text)
    tokenizer = scorer.tokenizer
    eos = tokenizer.eos_token_id
    generated: list[list[int]] = [[] for _ in prefixes]
    logprobs: list[list[float]] = [[] for _ in prefixes]
    stopped = ["length"] * len(prefixes)

    def score(index: np.ndarray) -> None:
        live = np.ones(len(index), dtype=bool)
        for choice, chosen in greedy_steps(scorer, [ids[i] for i in index], max_new_tokens, live):
            for row in np.flatnonzero(live).tolist():
                i, token = index[row], int(choice[row])
                if eos is not None and token == eos:
                    stopped[i] = "eos"
                    live[row] = False
                    continue
                generated[i].append(token)
                logprobs[i].append(float(chosen[row]))
                _, why = cut_answer(tokenizer.decode(generated[i], clean_up_tokenization_spaces=True), stops[i])
                if why:
                    stopped[i] = why
                    live[row] = False
            if not live.any():
                break

    lengths = np.fromiter((len(s) for s in ids), dtype=np.int64, count=len(ids))
    settings = scorer.settings
    if uses_cache(scorer):
        # a step reads every weight for one token a row: rows of any prefix length share a batch
        # (the padding runs once, in the first step), up to the tokens the cache will hold
        lengths, settings = lengths + max_new_tokens, replace(settings, max_padding=float("inf"))
    if len(ids):
        run_batches(lengths, score, settings, desc="generation")
    texts, token_ids, totals = [], [], np.zeros(len(prefixes), dtype=np.float64)
    for i, tokens in enumerate(generated):
        answer, _ = cut_answer(tokenizer.decode(tokens, clean_up_tokenization_spaces=True), stops[i])
        used = 0
        if answer:
            used = next(
                j
                for j in range(1, len(tokens) + 1)
                if cut_answer(tokenizer.decode(tokens[:j], clean_up_tokenization_spaces=True), stops[i])[0] == answer
            )
        texts.append(answer)
        token_ids.append(tokens[:used])
        totals[i] = float(np.sum(np.asarray(logprobs[i][:used], dtype=np.float64)))
    scorer.finite(totals, "generated answers' log-probs")
    return Generations(texts, token_ids, totals, generated, stopped)
