"""The order of a relation's prompts by their train accuracy, which Top-1 and Top-K take their
prompts from: its own module so that both the selection stage (``selection``) and the multi-token
probe (``multitoken_probe``) read it, and a change to either stage reruns only that stage."""

from __future__ import annotations

import numpy as np


def prompt_order(train_correct: np.ndarray, set_rank: np.ndarray) -> np.ndarray:
    """Prompts best first: by train micro P@1, then the set's own rank, then position.
    ``train_correct[prompt, fact]``; a relation without train facts keeps the set's order."""
    accuracy = train_correct.mean(axis=1) if train_correct.shape[1] else np.zeros(len(set_rank))
    return np.lexsort((np.arange(len(set_rank)), set_rank, -accuracy))
