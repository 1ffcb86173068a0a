"""Calibration of a model's answers over a candidate set: reliability bins and ECE (Guo et al.,
2017), the Brier score, the divergence from the answer-space prior, and temperature scaling, with
the cluster bootstrap's intervals (docs/uncertainty.md)."""

from __future__ import annotations

import numpy as np

from . import DEFAULT_B, MIN_CLUSTERS
from .bootstrap import Interval, chunks, item_set, percentile_interval, replicate_counts


def softmax(scores: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    """p(c) over the candidate set (last axis) of ``scores / temperature``."""
    z = np.asarray(scores, dtype=np.float64) / temperature
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def reliability(confidence: np.ndarray, right: np.ndarray, bins: int = 10) -> dict:
    """Equal-width bins of confidence over [0, 1] as Guo et al. (2017) define them, ((m - 1)/M,
    m/M]: a confidence on an edge belongs to the bin it closes (0.5 to (0.4, 0.5]), and the first
    bin also holds 0. Per bin its items, mean confidence and accuracy (NaN when empty)."""
    confidence = np.asarray(confidence, dtype=np.float64)
    edges = np.arange(bins + 1) / bins  # m / M as the division gives it (0.3; linspace: 0.30000000000000004)
    which = np.clip(np.searchsorted(edges, confidence, side="left") - 1, 0, bins - 1)
    count = np.bincount(which, minlength=bins)
    conf = np.bincount(which, weights=confidence, minlength=bins)
    acc = np.bincount(which, weights=np.asarray(right, dtype=np.float64), minlength=bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        return {"low": edges[:-1], "high": edges[1:], "n": count, "confidence": conf / count, "accuracy": acc / count}


def ece(confidence, right, bins: int = 10) -> float:
    """Expected calibration error (Guo et al. 2017; X-FACTR): sum over the equal-width bins
    ((m - 1)/M, m/M] of the bin's share of items times |accuracy - mean confidence|."""
    table = reliability(np.asarray(confidence, dtype=np.float64), right, bins)
    used = table["n"] > 0
    gap = np.abs(table["accuracy"][used] - table["confidence"][used])
    return float((table["n"][used] * gap).sum() / max(table["n"].sum(), 1))


def calibration_intervals(
    cluster_ids,
    confidence,
    right,
    brier_terms,
    bins: int = 10,
    b: int = DEFAULT_B,
    rng: np.random.Generator | None = None,
    min_clusters: int = MIN_CLUSTERS,
) -> dict[str, Interval]:
    """Accuracy, mean confidence, ECE (over ``bins`` bins, ``reliability``'s) and the Brier score,
    each over all items (pooled, as the calibration table has them), with the two-stage cluster
    bootstrap interval (clusters, then items, drawn as indices by ``replicate_counts``; one draw for
    the four): a replicate recomputes ECE from its drawn items' bins."""
    confidence, right = np.asarray(confidence, float), np.asarray(right, float)
    brier_terms = np.asarray(brier_terms, float)
    edges = np.arange(bins + 1) / bins
    which = np.clip(np.searchsorted(edges, confidence, side="left") - 1, 0, bins - 1)
    gaps = np.zeros((len(confidence), bins))
    gaps[np.arange(len(confidence)), which] = right - confidence
    columns = np.column_stack([right, confidence, brier_terms, np.ones(len(right))])
    n = len(right)
    values = {
        "accuracy": float(right.mean()) if n else np.nan,
        "confidence": float(confidence.mean()) if n else np.nan,
        "ece": ece(confidence, right, bins) if n else np.nan,
        "brier": float(brier_terms.mean()) if n else np.nan,
    }
    items, order = item_set(np.asarray(cluster_ids), np.arange(n))
    m = len(items.names)
    if m < min_clusters:
        return {name: percentile_interval(v, np.empty(0), m, n, min_clusters) for name, v in values.items()}
    rng = rng if rng is not None else np.random.default_rng(0)
    columns, gaps = columns[order], gaps[order]
    draws = {name: np.empty(b) for name in values}
    done = 0
    for size in chunks(b, n):
        counts = replicate_counts(items, size, rng).astype(np.float64)
        sums = counts @ columns
        total = sums[:, 3]
        draws["accuracy"][done : done + size] = sums[:, 0] / total
        draws["confidence"][done : done + size] = sums[:, 1] / total
        draws["brier"][done : done + size] = sums[:, 2] / total
        draws["ece"][done : done + size] = np.abs(counts @ gaps).sum(axis=1) / total
        done += size
    return {name: percentile_interval(values[name], draws[name], m, n, min_clusters) for name in values}


def brier(probabilities: np.ndarray, gold: np.ndarray) -> float:
    """Multi-class Brier score: the mean over items of sum_c (p(c) - [c = gold])^2."""
    p = np.asarray(probabilities, dtype=np.float64)
    rows = np.arange(len(gold))
    squared = (p**2).sum(axis=1) - 2 * p[rows, gold] + 1
    return float(squared.mean()) if len(gold) else np.nan


def prior_kl(probabilities: np.ndarray, gold: np.ndarray) -> float:
    """KL(gold || prior) of a cluster: the prior is the mean p(c) over its items (the answer
    space the model leans to), the gold distribution the share of its items of each gold object;
    the prior is a softmax, so never 0 where the gold distribution is not."""
    p = np.asarray(probabilities, dtype=np.float64)
    prior = p.mean(axis=0)
    objects, counts = np.unique(gold, return_counts=True)
    share = counts / counts.sum()
    return float((share * np.log(share / np.maximum(prior[objects], 1e-300))).sum())


def negative_log_likelihood(scores: np.ndarray, gold: np.ndarray, temperature: float) -> float:
    z = np.asarray(scores, dtype=np.float64) / temperature
    top = z.max(axis=1)
    log_norm = top + np.log(np.exp(z - top[:, None]).sum(axis=1))
    return float((log_norm - z[np.arange(len(gold)), gold]).mean())


def fit_temperature(scores: np.ndarray, gold: np.ndarray, low: float = 0.05, high: float = 20.0) -> float:
    """The temperature minimising the mean negative log-likelihood of the gold candidates (Guo et
    al. 2017), searched over log T in [log low, log high] (bounded Brent)."""
    from scipy.optimize import minimize_scalar

    if not len(gold):
        return 1.0
    result = minimize_scalar(
        lambda log_t: negative_log_likelihood(scores, gold, float(np.exp(log_t))),
        bounds=(np.log(low), np.log(high)),
        method="bounded",
        options={"xatol": 1e-4},
    )
    return float(np.exp(result.x))
