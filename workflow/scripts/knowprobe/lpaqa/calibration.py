"""Calibration of a prompt set's answers (Top-1 prompt of each relation): p(c) is the softmax
over the candidate set of the candidates' log-probs (as the probe computed them, recomputed from
its stored hidden states), the confidence is max p(c) and an answer is right when the gold object
scores highest. Per model and test set: ECE over equal-width bins, the multi-class Brier score,
accuracy and mean confidence, and the answer-space prior's KL divergence from the gold objects'
distribution (per relation, averaged over relations); all again after temperature scaling fitted
on T-REx-train's train split. The measures are knowprobe.uncertainty's."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .. import uncertainty

MAX_TRAIN_FACTS = 200  # per relation, for fitting the temperature (a seeded draw; bounds memory)


@dataclass
class Collected:
    """What a pass over relations keeps: per fact its confidence, correctness and Brier term, per
    relation its prior's KL divergence, at each temperature."""

    confidence: list = field(default_factory=list)
    right: list = field(default_factory=list)
    brier: list = field(default_factory=list)
    kl: list = field(default_factory=list)

    def add(self, scores: np.ndarray, gold: np.ndarray, temperature: float = 1.0) -> None:
        p = uncertainty.softmax(scores, temperature)
        self.confidence.append(p.max(axis=1))
        gold_p = p[np.arange(len(gold)), gold]
        self.right.append(gold_p >= p.max(axis=1))
        self.brier.append((p**2).sum(axis=1) - 2 * gold_p + 1)
        self.kl.append(uncertainty.prior_kl(p, gold))

    def summary(self, bins: int) -> tuple[dict, dict]:
        confidence, right = np.concatenate(self.confidence), np.concatenate(self.right)
        return (
            {
                "facts": len(right),
                "relations": len(self.kl),
                "accuracy": 100 * right.mean(),
                "confidence": 100 * confidence.mean(),
                "ece": 100 * uncertainty.ece(confidence, right, bins),
                "brier": float(np.concatenate(self.brier).mean()),
                "prior_kl": float(np.mean(self.kl)),
            },
            uncertainty.reliability(confidence, right, bins),
        )


def top1_prompt(prompts: pd.DataFrame, dataset: str, relation: str) -> int:
    """The position (in the probe's prompt order) of a relation's Top-1 prompt by train accuracy."""
    rows = prompts[(prompts["dataset"] == dataset) & (prompts["relation"] == relation)]
    if rows.empty:
        return 0
    return int(rows.reset_index(drop=True)["train_rank"].to_numpy().argmin())


def train_sample(n: int, relation: str, seed: int = 0) -> np.ndarray:
    rng = uncertainty.stream(seed, "calibration", relation)
    return np.sort(rng.permutation(n)[:MAX_TRAIN_FACTS])
