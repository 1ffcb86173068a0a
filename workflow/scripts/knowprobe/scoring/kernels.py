"""The same functions by faster kernels: what a loaded model computes, unchanged but for rounding.

GPT-2, GPT-Neo and GPT-J use the tanh approximation of GELU, which transformers writes out in
Python (``NewGELUActivation``, ``FastGELUActivation``: ``0.5 x (1 + tanh(√(2/π) (x + 0.044715
x³)))``), five element-wise kernels over every [tokens, 4 × hidden] activation. PyTorch computes
the same formula in one (``gelu(x, approximate="tanh")``, transformers' own ``gelu_pytorch_tanh``).
Measured 2026-11-27 on BEAR's statements at GPT-2-small size on the 2-core CPU, one thread
(docs/benchmarks.md, "Statement scoring"): 13.70 s -> 11.93 s in float32, 5.14 s -> 4.28 s in
bfloat16, where the written-out formula also rounds every intermediate to bfloat16 (the fused
kernel computes in float32 and rounds once). In float32 the two agree to rounding (the tests hold
the logits to 1e-5).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

# transformers' written-out tanh approximations of GELU (transformers.activations)
WRITTEN_OUT_TANH_GELU = frozenset({"NewGELUActivation", "FastGELUActivation"})


class FusedTanhGELU(torch.nn.Module):
    """GELU's tanh approximation in PyTorch's one kernel."""

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return F.gelu(hidden, approximate="tanh")


def fuse_activations(model: torch.nn.Module) -> int:
    """Put ``FusedTanhGELU`` in place of every written-out tanh GELU of ``model`` (in place);
    returns how many were replaced (0 for models without one: BERT's exact GELU and Llama's
    SiLU are one kernel already)."""
    replaced = 0
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if type(child).__name__ in WRITTEN_OUT_TANH_GELU:
                setattr(parent, name, FusedTanhGELU())
                replaced += 1
    return replaced
