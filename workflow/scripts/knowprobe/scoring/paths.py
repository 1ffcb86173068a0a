"""Which computation path a loaded model takes, decided by what it does, checked once at load.

The scorers have faster paths than a plain padded forward, each exact only where the model
behaves in a certain way:

- **the head where it is read** (stored hidden states): the logits are the output embedding (or
  head) applied to the base model's final hidden states, with nothing after it (no soft-capping,
  scaling or bias outside the head), so the head runs only at the positions a score reads and a
  hidden state stored by one job gives another job the same log-probs;
- **packed rows** (causal): texts placed in one row, each token attending to its own text's
  earlier tokens through a custom 4-D attention mask at its own position ids, computed exactly as
  alone (prefix sharing places a prefix several texts begin with once);
- **left padding**: a batch padded on the left with explicit position ids computes each text as
  alone;
- **the last layer where it is read** (masked; ``final_layer``).

No list of class names decides: each path is tried on a short probe input against the model's
own plain forward of each text alone, in the precision it runs in, and a model that does not
give the same numbers (to float rounding: a relative difference under ``tolerance(dtype)``)
takes the next path, with one log line saying so. A broken path differs by far more: a mask the
model ignores lets a text see another's tokens, a head with a soft-cap bends every logit.
"""

from __future__ import annotations

import logging

import numpy as np
import torch

log = logging.getLogger(__name__)

# the largest relative difference (max |a - b| / max |b|) counted as float rounding: packed and
# padded inputs run through differently shaped products, which round differently
TOLERANCE = {torch.float32: 1e-3, torch.float64: 1e-6}
HALF_TOLERANCE = 5e-2


def tolerance(dtype: torch.dtype) -> float:
    return TOLERANCE.get(dtype, HALF_TOLERANCE)


def relative_difference(found: torch.Tensor, expected: torch.Tensor) -> float:
    found, expected = found.double(), expected.double()
    return float((found - expected).abs().max() / expected.abs().max().clamp_min(1e-12))


def model_dtype(model) -> torch.dtype:
    return next(model.parameters()).dtype


def probe_sequences(tokenizer, model) -> list[list[int]]:
    """Three short token sequences of ordinary (non-special) tokens, the second sharing the
    first's first three tokens: what packing with a shared prefix, padding of unequal lengths and
    the head are tried on."""
    size = model.get_input_embeddings().num_embeddings
    special = set(tokenizer.all_special_ids) | {tokenizer.pad_token_id, tokenizer.unk_token_id}
    pool = [i for i in np.linspace(0, size - 1, num=64, dtype=np.int64).tolist() if i not in special]
    pool += [i for i in range(min(size, 512)) if i not in special and i not in pool]
    first, second, third = pool[:7], pool[:3] + pool[7:10], pool[10:14]
    return [first, second, third]


@torch.inference_mode()
def plain_forward(model, sequence: list[int], device) -> torch.Tensor:
    ids = torch.tensor([sequence], device=device)
    return model(input_ids=ids).logits[0]


@torch.inference_mode()
def verified_head(model, head, sequences: list[list[int]], device) -> torch.nn.Module | None:
    """``head`` where applying it to the base model's final hidden states gives the model's own
    logits on each probe sequence, else None (logged once)."""
    if head is None:
        log.info("%s: no output head to apply to hidden states; logits come from its whole forward", name(model))
        return None
    limit = tolerance(model_dtype(model))
    worst = 0.0
    try:
        for sequence in sequences:
            ids = torch.tensor([sequence], device=device)
            found = head(model.base_model(input_ids=ids)[0])[0]
            worst = max(worst, relative_difference(found.float(), plain_forward(model, sequence, device).float()))
    except Exception as error:  # a head that does not take the base model's states is not plain
        log.info(
            "%s: its head does not apply to its hidden states (%s); logits come from its whole forward",
            name(model),
            type(error).__name__,
        )
        return None
    if worst > limit:
        log.info(
            "%s: its logits are not its head applied to its final hidden states (relative difference %.2g: a "
            "soft-cap or scaling after the head); logits come from its whole forward, hidden states are not stored",
            name(model),
            worst,
        )
        return None
    return head


def name(model) -> str:
    return type(model).__name__
