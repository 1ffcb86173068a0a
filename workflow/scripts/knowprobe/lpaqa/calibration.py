"""Calibration of a prompt set's answers (Top-1 prompt of each relation), for every LPAQA run
(any model, any score with a distribution over candidates): p(c) is the softmax over the
candidates of the run's scores (``SCORE_DISTRIBUTIONS``; recomputed from the probe's stored hidden
states, or its stored statement scores), the confidence is max p(c) and an answer is right when the
gold object scores highest. Per model and test set: ECE over equal-width bins, the multi-class Brier score,
accuracy and mean confidence, and the answer-space prior's KL divergence from the gold objects'
distribution (per relation, averaged over relations); all again after temperature scaling fitted
on T-REx-train's train split. The measures are knowprobe.uncertainty's."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .. import uncertainty
from ..uncertainty import bootstrap, calibration

# what p(c) is under each score of lpaqa.probe.scores, as the calibration rows state it
SCORE_DISTRIBUTIONS = {
    "mask": "softmax over the candidate vocabulary of the log-probs at the mask",
    "next_token": "softmax over the candidate vocabulary of the next-token log-probs after the prompt's prefix",
    "statement": "softmax over the relation's candidate set C_r of the statements' log-likelihoods",
}
MEASURES = ("accuracy", "confidence", "ece", "brier", "prior_kl")
MAX_TRAIN_FACTS = 200  # per relation, for fitting the temperature (a seeded draw; bounds memory)


@dataclass
class Collected:
    """What a pass over relations keeps: per fact its confidence, correctness and Brier term, per
    relation its prior's KL divergence, at each temperature."""

    confidence: list = field(default_factory=list)
    right: list = field(default_factory=list)
    brier: list = field(default_factory=list)
    kl: list = field(default_factory=list)
    relations: list = field(default_factory=list)

    def add(self, scores: np.ndarray, gold: np.ndarray, temperature: float = 1.0, relation: str = "") -> None:
        p = calibration.softmax(scores, temperature)
        self.relations.append(np.full(len(gold), relation, dtype=object))
        self.confidence.append(p.max(axis=1))
        gold_p = p[np.arange(len(gold)), gold]
        self.right.append(gold_p >= p.max(axis=1))
        self.brier.append((p**2).sum(axis=1) - 2 * gold_p + 1)
        self.kl.append(calibration.prior_kl(p, gold))

    def summary(self, bins: int, settings: uncertainty.Settings | None = None, key: tuple = ()) -> tuple[dict, dict]:
        """The measures (accuracy, confidence and ECE in %) and the reliability bins; with
        ``settings``, each measure's 95% interval as ``<measure>_low`` and ``_high`` (the
        two-stage cluster bootstrap: relations, then facts; the prior's KL: relations)."""
        confidence, right = np.concatenate(self.confidence), np.concatenate(self.right)
        brier = np.concatenate(self.brier)
        out = {
            "facts": len(right),
            "relations": len(self.kl),
            "accuracy": 100 * right.mean(),
            "confidence": 100 * confidence.mean(),
            "ece": 100 * calibration.ece(confidence, right, bins),
            "brier": float(brier.mean()),
            "prior_kl": float(np.mean(self.kl)),
        }
        if settings is not None:
            relations = np.concatenate(self.relations)
            rng = bootstrap.stream(settings.seed, "calibration", *key)
            found = calibration.calibration_intervals(
                relations, confidence, right, brier, bins, settings.bootstrap, rng, settings.min_clusters
            )
            rng = bootstrap.stream(settings.seed, "prior_kl", *key)
            names = np.arange(len(self.kl)).astype(str)  # each relation a cluster of its one value
            found["prior_kl"] = bootstrap.cluster_interval(
                names, np.asarray(self.kl), settings.bootstrap, rng, settings.min_clusters
            )
            for measure in MEASURES:
                scale = 100 if measure in ("accuracy", "confidence", "ece") else 1
                out[f"{measure}_low"] = scale * found[measure].low
                out[f"{measure}_high"] = scale * found[measure].high
        return out, calibration.reliability(confidence, right, bins)


def top1_prompt(prompts: pd.DataFrame, dataset: str, relation: str) -> int:
    """The position (in the probe's prompt order) of a relation's Top-1 prompt by train accuracy."""
    rows = prompts[(prompts["dataset"] == dataset) & (prompts["relation"] == relation)]
    if rows.empty:
        return 0
    return int(rows.reset_index(drop=True)["train_rank"].to_numpy().argmin())


def train_sample(n: int, relation: str, seed: int = 0) -> np.ndarray:
    rng = bootstrap.stream(seed, "calibration", relation)
    return np.sort(rng.permutation(n)[:MAX_TRAIN_FACTS])
