"""The probing engine: log-probabilities of candidate objects at the mask, per (fact, prompt).

For each pair the subject fills ``[X]`` and the mask token ``[Y]``. Inputs are sorted by
length and packed into batches under a token budget; the encoder runs once per batch and
the LM head only at the mask positions (the head is a vocabulary-sized projection, so
running it at every position, as LAMA does, costs more than the rest of a small model).
Log-probabilities are normalised over the model's full vocabulary in float32, then
restricted to the candidates: the gold object's log-prob and rank, and the top-k
candidates, are stored so that selection and ensembles never rerun the model.
"""

from __future__ import annotations

import fcntl
import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import torch

from .io import KnowprobeError, progress
from .prompts import fill_template

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ProbeSettings:
    batch_size: int = 64  # most sequences in a batch
    max_tokens: int = 16384  # most padded tokens in a batch
    top_k: int = 50
    dtype: str = "auto"  # auto: bfloat16 (or float16) on CUDA, float32 on CPU
    device: str = "auto"
    max_length: int = 256


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


def resolve_device(name: str) -> torch.device:
    if name != "auto":
        return torch.device(name)
    if not torch.cuda.is_available():
        return torch.device("cpu")
    return torch.device("cuda", claim_gpu())


_gpu_locks: list = []


def claim_gpu() -> int:
    """Index of a visible GPU that no other knowprobe job on this machine holds.

    Snakemake counts ``gpu`` resources but assigns no devices; under SLURM the scheduler
    sets CUDA_VISIBLE_DEVICES to the job's own GPU. On a workstation run with
    ``--resources gpu=N``, each job takes a different GPU by locking a file per device.
    """
    count = torch.cuda.device_count()
    if count <= 1:
        return 0
    lock_dir = Path(tempfile.gettempdir()) / f"knowprobe-gpu-{os.getuid()}"
    lock_dir.mkdir(exist_ok=True)
    for index in range(count):
        handle = open(lock_dir / f"{index}.lock", "w")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            continue
        _gpu_locks.append(handle)  # held until the process exits
        return index
    log.warning("all %d GPUs are held by other knowprobe jobs; sharing GPU 0", count)
    return 0


def resolve_dtype(name: str, device: torch.device) -> torch.dtype:
    if name == "auto":
        if device.type != "cuda":
            return torch.float32
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[name]


def pair_facts_with_prompts(facts: pd.DataFrame, prompts: pd.DataFrame) -> pd.DataFrame:
    """One row per (fact, prompt) of the same relation; ``prompt_id`` numbers the prompt set's rows."""
    prompts = prompts.reset_index(drop=True).assign(prompt_id=lambda f: np.arange(len(f), dtype=np.int32))
    without = sorted(set(facts["relation"]) - set(prompts["relation"]))
    if without:
        lost = int(facts["relation"].isin(without).sum())
        log.warning(
            "%d facts of %d relations have no prompt in this set and are not probed: %s",
            lost,
            len(without),
            ", ".join(without),
        )
    pairs = facts.merge(prompts[["relation", "prompt_id", "template", "source"]], on="relation", how="inner")
    return pairs.sort_values(["relation", "prompt_id", "fact_id"], kind="stable").reset_index(drop=True)


def make_batches(lengths: np.ndarray, batch_size: int, max_tokens: int) -> list[np.ndarray]:
    """Indices grouped into batches of similar length, each under both limits."""
    order = np.argsort(lengths, kind="stable")
    batches, start = [], 0
    while start < len(order):
        end = start + 1
        # lengths ascend, so the padded size of order[start:end] is end-start times the last length
        while end < len(order) and end - start < batch_size and (end + 1 - start) * lengths[order[end]] <= max_tokens:
            end += 1
        batches.append(order[start:end])
        start = end
    return batches


def _is_oom(error: BaseException) -> bool:
    return isinstance(error, torch.cuda.OutOfMemoryError) or "out of memory" in str(error).lower()


class MaskedLMScorer:
    """Scores filled prompts with one masked LM against one candidate set."""

    def __init__(self, model, tokenizer, candidate_ids, settings: ProbeSettings = ProbeSettings()):
        self.settings = settings
        self.device = next(model.parameters()).device
        self.model = model
        self.tokenizer = tokenizer
        self.head = mask_head(model)
        if self.head is None:
            log.warning("%s: no known LM head; computing logits at every position", type(model).__name__)
        self.candidate_ids = torch.tensor(np.array(candidate_ids, dtype=np.int64), device=self.device)
        self.top_k = min(settings.top_k, len(candidate_ids))

    def encode(self, texts: list[str]) -> tuple[list[list[int]], np.ndarray]:
        """Token ids of each text and the position of its single mask token."""
        encoded = self.tokenizer(texts, add_special_tokens=True, truncation=True, max_length=self.settings.max_length)[
            "input_ids"
        ]
        mask_id = self.tokenizer.mask_token_id
        positions = np.empty(len(encoded), dtype=np.int64)
        for i, ids in enumerate(encoded):
            where = [p for p, token in enumerate(ids) if token == mask_id]
            if len(where) != 1:
                raise KnowprobeError(
                    f"prompt {texts[i]!r} has {len(where)} mask tokens after tokenization "
                    f"(needs 1; a subject label holding the mask token, or truncation at "
                    f"max_length={self.settings.max_length})"
                )
            positions[i] = where[0]
        return encoded, positions

    @torch.inference_mode()
    def _mask_logits(self, input_ids: torch.Tensor, attention: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        rows = torch.arange(len(positions), device=self.device)
        if self.head is None:
            logits = self.model(input_ids=input_ids, attention_mask=attention).logits
            return logits[rows, positions]
        hidden = self.model.base_model(input_ids=input_ids, attention_mask=attention)[0]
        return self.head(hidden[rows, positions])

    def _score_batch(self, encoded, positions, gold, index):
        width = max(len(encoded[i]) for i in index)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        ids = np.full((len(index), width), pad, dtype=np.int64)
        attention = np.zeros((len(index), width), dtype=np.int64)
        for row, i in enumerate(index):
            ids[row, : len(encoded[i])] = encoded[i]
            attention[row, : len(encoded[i])] = 1

        def to(array):
            return torch.from_numpy(array).to(self.device, non_blocking=True)

        logits = self._mask_logits(to(ids), to(attention), to(positions[index]))
        logprobs = torch.log_softmax(logits.float(), dim=-1)
        gold_t = to(gold[index])
        gold_logprob = logprobs.gather(1, gold_t[:, None])[:, 0]
        candidates = logprobs[:, self.candidate_ids]
        gold_rank = (candidates > gold_logprob[:, None]).sum(dim=1)
        top_logprob, top_index = candidates.topk(self.top_k, dim=1)
        top_ids = self.candidate_ids[top_index]
        return (gold_logprob.cpu().numpy(), gold_rank.cpu().numpy(), top_ids.cpu().numpy(), top_logprob.cpu().numpy())

    def score(self, texts: list[str], gold_ids) -> dict[str, np.ndarray]:
        """Arrays aligned with ``texts``: gold log-prob and rank, top-k candidate ids and log-probs."""
        encoded, positions = self.encode(texts)
        gold = np.asarray(gold_ids, dtype=np.int64)
        n = len(texts)
        out = {
            "gold_logprob": np.empty(n, dtype=np.float32),
            "gold_rank": np.empty(n, dtype=np.int32),
            "topk_ids": np.empty((n, self.top_k), dtype=np.int32),
            "topk_logprobs": np.empty((n, self.top_k), dtype=np.float32),
        }
        lengths = np.fromiter((len(ids) for ids in encoded), dtype=np.int64, count=n)
        batch_size, max_tokens = self.settings.batch_size, self.settings.max_tokens
        scored = np.zeros(n, dtype=bool)
        with progress(total=n, unit="prompt", desc="probe") as bar:
            while not scored.all():
                remaining = np.flatnonzero(~scored)
                # a budget below the longest input would leave that input in no batch
                budget = max(max_tokens, int(lengths[remaining].max()))
                try:
                    for batch in make_batches(lengths[remaining], batch_size, budget):
                        index = remaining[batch]
                        results = self._score_batch(encoded, positions, gold, index)
                        for key, value in zip(out, results):
                            out[key][index] = value
                        scored[index] = True
                        bar.update(len(index))
                except (torch.cuda.OutOfMemoryError, RuntimeError) as error:
                    if not _is_oom(error) or batch_size == 1:
                        raise
                    if torch.cuda.is_available():
                        torch.cuda.empty_cache()
                    batch_size, max_tokens = max(1, batch_size // 2), max(1, max_tokens // 2)
                    log.warning("out of memory; going on with batch_size=%d, max_tokens=%d", batch_size, max_tokens)
        return out


def probe(
    facts: pd.DataFrame,
    prompts: pd.DataFrame,
    model,
    tokenizer,
    candidates: pd.DataFrame,
    settings: ProbeSettings = ProbeSettings(),
) -> pa.Table:
    """Probe every (fact, prompt) pair; see README "Data contracts: probe output"."""
    pairs = pair_facts_with_prompts(facts, prompts)
    if pairs.empty:
        raise KnowprobeError("no (fact, prompt) pair to probe: facts and prompts share no relation")
    texts = [fill_template(t, s, tokenizer.mask_token) for t, s in zip(pairs["template"], pairs["sub_label"])]
    scorer = MaskedLMScorer(model, tokenizer, candidates["token_id"].to_numpy(), settings)
    log.info(
        "probing %d (fact, prompt) pairs: %d facts, %d prompts, %d candidates, top_k=%d, device=%s, dtype=%s",
        len(pairs),
        pairs["fact_id"].nunique(),
        pairs["prompt_id"].nunique(),
        len(candidates),
        scorer.top_k,
        scorer.device,
        next(model.parameters()).dtype,
    )
    scores = scorer.score(texts, pairs["obj_token_id"].to_numpy())
    word_of = dict(zip(candidates["token_id"], candidates["word"]))
    columns = {
        "relation": pa.array(pairs["relation"], pa.string()),
        "fact_id": pa.array(pairs["fact_id"], pa.string()),
        "sub_label": pa.array(pairs["sub_label"], pa.string()),
        "obj_label": pa.array(pairs["obj_label"], pa.string()),
        "obj_token_id": pa.array(pairs["obj_token_id"], pa.int64()),
        "prompt_id": pa.array(pairs["prompt_id"], pa.int32()),
        "template": pa.array(pairs["template"], pa.string()),
        "source": pa.array(pairs["source"], pa.string()),
        "gold_logprob": pa.array(scores["gold_logprob"]),
        "gold_rank": pa.array(scores["gold_rank"]),
        "prediction": pa.array([word_of[i] for i in scores["topk_ids"][:, 0]], pa.string()),
        "topk_ids": pa.FixedSizeListArray.from_arrays(pa.array(scores["topk_ids"].ravel()), scorer.top_k),
        "topk_logprobs": pa.FixedSizeListArray.from_arrays(pa.array(scores["topk_logprobs"].ravel()), scorer.top_k),
    }
    return pa.table(columns)
