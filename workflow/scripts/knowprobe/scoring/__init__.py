"""The scoring layer every study shares: one way to load models and run them in batches, and
the scores the studies ask for, for masked and causal language models alike.

==========================  ==========================================  ==========================================
score                       MaskedLM                                    CausalLM
==========================  ==========================================  ==========================================
``candidate_logprobs``      candidates at a mask token                  candidates as the next token after a prefix
``conditional_logprob``     conditional pseudo-log-likelihood of a      log-prob of a continuation given a prefix,
                            continuation given a prefix                 every token of it
``statement_logprob``       pseudo-log-likelihood of a statement        log-prob of a statement after BOS (else
                            (``within_word_l2r`` or ``original``), or   EOS), every token, or from the answer's
                            of its answer's tokens only                 first token on
``phrase_embeddings``       mean final hidden state over a text's own   the same, over the tokens after BOS
                            tokens (specials left out)
==========================  ==========================================  ==========================================

Multi-token answers (``decoding``): ``masked_decode`` (X-FACTR's open decoding at masks;
``masked_decode_jointly`` runs several of its methods at once, sharing their identical forwards),
``mlama_scores`` (a closed candidate set at k masks) and ``causal_generate`` (greedy generation).

``load(model_dir, kind, settings)`` gives the scorer of a model's declared kind, on the device and
in the precision the settings choose (``knowprobe.models`` loads model files, ``knowprobe.devices``
picks a free GPU, ``kernels`` puts faster kernels of the same functions in); ``runtime`` holds the
batching every scorer shares. The API follows
lm-evaluation-harness's ``loglikelihood`` (prefix, continuation pairs) and minicons'
``conditional_score``; statement scores follow lm-pub-quiz (BEAR), with ``knowprobe.statements``
filling the templates; results are plain NumPy arrays aligned with the inputs.
"""

from __future__ import annotations

from pathlib import Path

from ..devices import resolve_device, resolve_dtype, saved_dtype, use_precision
from ..io import KnowprobeError
from ..models import load_model, load_tokenizer, token_ids_problem
from .causal import CausalLM
from .decoding import causal_generate, masked_decode, masked_decode_jointly, mlama_scores
from .kernels import fuse_activations
from .masked import MaskedLM
from .runtime import CandidateScores, ScoringSettings

__all__ = [
    "CandidateScores",
    "CausalLM",
    "MaskedLM",
    "ScoringSettings",
    "causal_generate",
    "fuse_activations",
    "load",
    "masked_decode",
    "masked_decode_jointly",
    "mlama_scores",
]


def load(
    model_dir: str | Path, kind: str, settings: ScoringSettings | None = None, start_token: bool = True
) -> MaskedLM | CausalLM:
    """The scorer of a saved model (``save_pretrained`` layout) of the given kind, on the device
    and in the precision the settings choose. ``start_token`` (causal models only): whether texts
    begin with the model's BOS token; each study says which it uses (docs/scoring.md)."""
    settings = settings or ScoringSettings()
    device = resolve_device(settings.device)
    tokenizer = load_tokenizer(model_dir, kind, start_token=start_token)
    model = load_model(model_dir, kind, resolve_dtype(settings.dtype, device, saved_dtype(model_dir)))
    problem = token_ids_problem(tokenizer, model, kind, start_token)
    if problem:
        raise KnowprobeError(f"{model_dir}: {problem}")
    model = model.to(device)
    fuse_activations(model)  # GPT-2's GELU in one kernel (kernels.py): the same function, faster
    use_precision(model, settings.dtype, device)
    if kind == "masked":
        return MaskedLM(model, tokenizer, settings)
    return CausalLM(model, tokenizer, settings, start_token=start_token)
