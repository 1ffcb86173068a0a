"""Numbers with their uncertainty, for every study: cluster bootstrap intervals, paired
comparisons (paired bootstrap, McNemar's exact test, Holm's correction), paraphrase consistency
(ParaRel's definition) and calibration (ECE, Brier, the answer-space prior, temperature scaling).

Pure, vectorised NumPy functions; a study hands them cluster ids (relations, properties) and
per-item values (a fact's correctness, a paired difference), B and a seed, and gets numbers back.
No function here knows a study.

**The two-stage cluster bootstrap.** A headline such as LPAQA's micro P@1 is a mean over
clusters (relations) of per-cluster means (over facts): every cluster weighs the same. One
replicate draws the clusters with replacement, then, within each drawn cluster, its items with
replacement, and recomputes the same statistic. Drawing n items with replacement from a cluster
whose items take the values v_1..v_L with frequencies f_1..f_L gives counts Multinomial(n, f):
the replicate's cluster mean is ``counts @ v / n``. Drawing those counts (as conditional
binomials, vectorised over replicates and drawn clusters) is the same distribution as drawing n
indices, at the cost of L draws instead of n: L = 2 for correctness, 3 for a paired difference,
so the full reproduction's tables take seconds (benchmarks/bootstrap.py). Replicates run in
chunks that bound memory; no Python loop runs per replicate.

Macro P@1 (per object, then per relation) is resampled accordingly: relations, then the
relation's objects (the units macro averages), then the facts of each drawn object. Objects with
the same (facts, right) are exchangeable, so the draw is over those classes: the sum over c drawn
objects of one class of Binomial(n, p) is Binomial(c n, p).

The interval is the 2.5th and 97.5th percentile of the B replicates (95%, percentile method).
With fewer than ``min_clusters`` clusters no interval is given: the resampled clusters cannot
stand for a population of them (``Interval.note`` says so).

**Paired comparisons.** Two systems on the same items: the difference's replicates resample the
per-item differences A - B, which is resampling the same indices for both. Per cluster, McNemar's
exact test on the discordant items (A right and B wrong: b; the reverse: c): the two-sided
binomial tail ``min(1, 2 P(X <= min(b, c)))``, X ~ Binomial(b + c, 1/2), then Holm's step-down
correction over the clusters of a comparison.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats

DEFAULT_B = 10_000
MIN_CLUSTERS = 5
CHUNK_ELEMENTS = 4_000_000  # drawn values per chunk of replicates (bounds memory)


def stream(seed: int, *key: str) -> np.random.Generator:
    """A random stream of its own for each ``key`` (e.g. model, prompt set, method), so that a
    row's interval does not depend on which other rows a table holds."""
    return np.random.default_rng([seed, *(zlib.crc32(str(part).encode("utf-8")) for part in key)])


# --- clusters as levels --------------------------------------------------------------------------


@dataclass(frozen=True)
class Clusters:
    """Per-item values grouped by cluster as distinct levels and their counts: ``levels[cluster,
    L]`` (padded), ``counts[cluster, L]`` (0 where padded), ``sizes[cluster]``."""

    names: np.ndarray
    levels: np.ndarray
    counts: np.ndarray

    @property
    def sizes(self) -> np.ndarray:
        return self.counts.sum(axis=1)

    @property
    def means(self) -> np.ndarray:
        return (self.levels * self.counts).sum(axis=1) / self.sizes

    def __len__(self) -> int:
        return len(self.names)


def clusters_of(cluster_ids, values) -> Clusters:
    """Group ``values[item]`` by ``cluster_ids[item]`` (any hashable ids; clusters sorted)."""
    cluster_ids = np.asarray(cluster_ids)
    values = np.asarray(values, dtype=np.float64)
    if cluster_ids.shape != values.shape or values.ndim != 1:
        raise ValueError(f"cluster ids {cluster_ids.shape} and values {values.shape}: one of each per item")
    if not np.isfinite(values).all():
        raise ValueError("values must be finite")
    names, cluster = np.unique(cluster_ids, return_inverse=True)
    pairs, pair_counts = np.unique(np.stack([cluster, values]), axis=1, return_counts=True)
    pair_cluster = pairs[0].astype(np.int64)
    width = np.bincount(pair_cluster, minlength=len(names)).max(initial=1)
    start = np.searchsorted(pair_cluster, np.arange(len(names)))
    slot = np.arange(len(pair_cluster)) - start[pair_cluster]
    levels = np.zeros((len(names), width))
    counts = np.zeros((len(names), width), dtype=np.int64)
    levels[pair_cluster, slot] = pairs[1]
    counts[pair_cluster, slot] = pair_counts
    return Clusters(names, levels, counts)


def multinomial(rng: np.random.Generator, n: np.ndarray, probabilities: np.ndarray) -> np.ndarray:
    """Multinomial counts ``[..., L]`` for ``n[...]`` draws over ``probabilities[..., L]``, as
    conditional binomials (vectorised over ``...``, L small)."""
    left = n.astype(np.int64).copy()
    mass = np.ones(n.shape)
    out = np.zeros(probabilities.shape, dtype=np.int64)
    for level in range(probabilities.shape[-1] - 1):
        p = probabilities[..., level]
        share = np.divide(p, mass, out=np.zeros_like(p), where=mass > 1e-12)
        out[..., level] = rng.binomial(left, np.clip(share, 0.0, 1.0))
        left -= out[..., level]
        mass = mass - p
    out[..., -1] = left
    return out


def _chunks(total: int, per_replicate: int):
    size = max(1, CHUNK_ELEMENTS // max(per_replicate, 1))
    for start in range(0, total, size):
        yield min(size, total - start)


def replicates(groups: Clusters, b: int = DEFAULT_B, rng: np.random.Generator | None = None) -> np.ndarray:
    """``[b]`` replicates of the mean over clusters of per-cluster means, by the two-stage cluster
    bootstrap (clusters with replacement, then items within each drawn cluster)."""
    rng = rng if rng is not None else np.random.default_rng(0)
    m = len(groups)
    if m == 0:
        return np.full(b, np.nan)
    sizes = groups.sizes
    frequencies = groups.counts / sizes[:, None]
    out = np.empty(b)
    done = 0
    for size in _chunks(b, m * groups.levels.shape[1]):
        drawn = rng.integers(0, m, size=(size, m))
        counts = multinomial(rng, sizes[drawn], frequencies[drawn])
        means = (counts * groups.levels[drawn]).sum(axis=-1) / sizes[drawn]
        out[done : done + size] = means.mean(axis=1)
        done += size
    return out


@dataclass(frozen=True)
class Interval:
    """A statistic with its 95% percentile interval; ``note`` says why there is none."""

    value: float
    low: float
    high: float
    clusters: int
    items: int
    note: str = ""

    def cell(self, scale: float = 1.0, digits: int = 1) -> str:
        """``value [low, high]`` (``value (note)`` without an interval)."""
        value = f"{scale * self.value:.{digits}f}"
        if np.isnan(self.low):
            return f"{value} ({self.note})" if self.note else value
        return f"{value} [{scale * self.low:.{digits}f}, {scale * self.high:.{digits}f}]"


def percentile_interval(
    value: float, draws: np.ndarray, clusters: int, items: int, min_clusters: int = MIN_CLUSTERS, level: float = 0.95
) -> Interval:
    if clusters < min_clusters:
        return Interval(value, np.nan, np.nan, clusters, items, f"{clusters} clusters: fewer than {min_clusters}")
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(draws, [tail, 100 - tail])
    return Interval(float(value), float(low), float(high), clusters, items)


def cluster_interval(
    cluster_ids,
    values,
    b: int = DEFAULT_B,
    rng: np.random.Generator | None = None,
    min_clusters: int = MIN_CLUSTERS,
    level: float = 0.95,
) -> Interval:
    """The mean over clusters of per-cluster means of ``values`` (e.g. micro P@1 from per-fact
    correctness) with its two-stage cluster bootstrap interval."""
    groups = clusters_of(cluster_ids, values)
    if len(groups) < min_clusters:
        value = float(groups.means.mean()) if len(groups) else np.nan
        return percentile_interval(value, np.empty(0), len(groups), int(groups.sizes.sum()), min_clusters, level)
    draws = replicates(groups, b, rng)
    return percentile_interval(
        float(groups.means.mean()), draws, len(groups), int(groups.sizes.sum()), min_clusters, level
    )


# --- macro: clusters, then objects, then items ---------------------------------------------------


def macro_replicates(
    cluster_ids, object_ids, correct, b: int = DEFAULT_B, rng: np.random.Generator | None = None
) -> tuple[float, np.ndarray, int]:
    """Macro accuracy (per object, then per cluster, then over clusters) and ``[b]`` replicates:
    clusters with replacement, then each drawn cluster's objects, then each drawn object's items.
    Returns (value, replicates, clusters)."""
    rng = rng if rng is not None else np.random.default_rng(0)
    cluster_ids, object_ids = np.asarray(cluster_ids), np.asarray(object_ids)
    correct = np.asarray(correct, dtype=np.int64)
    names, cluster = np.unique(cluster_ids, return_inverse=True)
    _, obj = np.unique(np.stack([cluster, np.unique(object_ids, return_inverse=True)[1]]), axis=1, return_inverse=True)
    obj = obj.ravel()
    n_obj = np.bincount(obj)
    k_obj = np.bincount(obj, weights=correct).astype(np.int64)
    obj_cluster = np.zeros(len(n_obj), dtype=np.int64)
    obj_cluster[obj] = cluster
    # classes of exchangeable objects: (cluster, facts, right)
    classes, class_counts = np.unique(np.stack([obj_cluster, n_obj, k_obj]), axis=1, return_counts=True)
    groups = clusters_of(classes[0], np.arange(classes.shape[1]))  # per cluster: its classes as levels
    class_index = groups.levels.astype(np.int64)
    weight = np.where(groups.counts > 0, class_counts[class_index], 0)  # objects per class
    n_class, k_class = classes[1][class_index], classes[2][class_index]
    objects = weight.sum(axis=1)
    per_cluster = (weight * k_class / n_class).sum(axis=1) / objects
    value = float(per_cluster.mean()) if len(names) else np.nan
    m = len(names)
    out = np.empty(b)
    done = 0
    for size in _chunks(b, m * weight.shape[1]):
        drawn = rng.integers(0, m, size=(size, m))
        drawn_objects = multinomial(rng, objects[drawn], weight[drawn] / objects[drawn][..., None])
        right = rng.binomial(
            drawn_objects * n_class[drawn], np.where(n_class[drawn] > 0, k_class[drawn] / n_class[drawn], 0)
        )
        means = (right / n_class[drawn]).sum(axis=-1) / objects[drawn]
        out[done : done + size] = means.mean(axis=1)
        done += size
    return value, out, m


def macro_interval(
    cluster_ids,
    object_ids,
    correct,
    b: int = DEFAULT_B,
    rng: np.random.Generator | None = None,
    min_clusters: int = MIN_CLUSTERS,
) -> Interval:
    value, draws, m = macro_replicates(
        cluster_ids, object_ids, correct, b if len(set(cluster_ids)) >= min_clusters else 1, rng
    )
    return percentile_interval(value, draws, m, len(correct), min_clusters)


# --- paired comparisons --------------------------------------------------------------------------


def paired_interval(
    cluster_ids, correct_a, correct_b, b: int = DEFAULT_B, rng=None, min_clusters: int = MIN_CLUSTERS
) -> Interval:
    """A - B of the mean over clusters of per-cluster means, with the interval of the paired
    cluster bootstrap: both resampled at the same items (their difference is what is drawn)."""
    difference = np.asarray(correct_a, dtype=np.float64) - np.asarray(correct_b, dtype=np.float64)
    return cluster_interval(cluster_ids, difference, b, rng, min_clusters)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value of ``b`` and ``c`` discordant items: 2 P(X <= min(b, c)),
    X ~ Binomial(b + c, 1/2), at most 1 (1 without discordant items)."""
    n = b + c
    if n == 0:
        return 1.0
    return float(min(1.0, 2.0 * scipy_stats.binom.cdf(min(b, c), n, 0.5)))


def holm(p_values) -> np.ndarray:
    """Holm's step-down adjusted p-values (same order as given)."""
    p = np.asarray(p_values, dtype=np.float64)
    m = len(p)
    if not m:
        return p
    order = np.argsort(p, kind="stable")
    adjusted = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(adjusted, 1.0)
    return out


def mcnemar_per_cluster(cluster_ids, correct_a, correct_b, alpha: float = 0.05) -> dict:
    """Per cluster: discordant counts ``b`` (A right, B wrong) and ``c``, McNemar's exact p-value,
    Holm's adjusted one, and the verdict ``A better``, ``B better`` or ``no difference`` at
    ``alpha`` after Holm. Returns columns as arrays (clusters sorted)."""
    cluster_ids = np.asarray(cluster_ids)
    a, bb = np.asarray(correct_a, dtype=bool), np.asarray(correct_b, dtype=bool)
    names, cluster = np.unique(cluster_ids, return_inverse=True)
    b = np.bincount(cluster, weights=a & ~bb, minlength=len(names)).astype(np.int64)
    c = np.bincount(cluster, weights=~a & bb, minlength=len(names)).astype(np.int64)
    p = np.array([mcnemar_exact(int(x), int(y)) for x, y in zip(b, c)])
    adjusted = holm(p)
    verdict = np.where(adjusted < alpha, np.where(b > c, "A better", "B better"), "no difference")
    return {"cluster": names, "b": b, "c": c, "p": p, "p_holm": adjusted, "verdict": verdict}


# --- paraphrase consistency (ParaRel) ------------------------------------------------------------

VOWELS = set("aeiouAEIOU")


def article_mismatch(template: str, obj: str) -> bool:
    """ParaRel's rule: a prompt whose "a" before ``[Y]`` meets an object starting with a vowel, or
    whose "an" meets one starting otherwise, is skipped for that fact."""
    padded = f" {template}"
    starts_vowel = bool(obj) and obj[0] in VOWELS
    return (" a [Y]" in padded and starts_vowel) or (" an [Y]" in padded and not starts_vowel)


@dataclass(frozen=True)
class Consistency:
    consistency: float  # mean over clusters of the mean over subjects of the agreeing ordered pairs' share
    consistent_accuracy: float  # ... of the share of subjects all of whose prompts are right
    all_agree: float  # ... of the share of subjects all of whose prompts agree
    clusters: int
    subjects: int  # subjects with at least two prompts kept
    skipped: int  # (subject, prompt) answers skipped by the article rule


def subject_consistency(answers: np.ndarray, right: np.ndarray, kept: np.ndarray):
    """Per subject (rows of ``[subject, prompt]`` arrays of answer codes, correctness and whether
    the prompt is kept): the share of ordered pairs of kept prompts agreeing, whether all kept are
    right, whether all agree, and whether the subject has two kept prompts (else the rest is NaN)."""
    n = kept.sum(axis=1)
    same = (answers[:, :, None] == answers[:, None, :]) & kept[:, :, None] & kept[:, None, :]
    agreeing = same.sum(axis=(1, 2)) - n  # ordered pairs: leave out each prompt with itself
    pairs = n * (n - 1)
    valid = n >= 2
    share = np.where(valid, agreeing / np.maximum(pairs, 1), np.nan)
    all_right = np.where(valid, (right | ~kept).all(axis=1), np.nan)
    all_agree = np.where(valid, agreeing == pairs, np.nan)
    return share, all_right, all_agree, valid


def consistency(cluster_ids, answers, right, kept) -> tuple[Consistency, dict]:
    """ParaRel's consistency over ``[subject, prompt]`` arrays (one row per subject, with its
    cluster in ``cluster_ids``; prompts padded with ``kept = False``): per cluster the mean over
    subjects, then the mean over clusters. Returns the totals and per-cluster columns."""
    share, all_right, all_agree, valid = subject_consistency(np.asarray(answers), np.asarray(right), np.asarray(kept))
    cluster_ids = np.asarray(cluster_ids)
    names = np.unique(cluster_ids[valid])
    rows = {"cluster": names, "subjects": [], "consistency": [], "consistent_accuracy": [], "all_agree": []}
    for name in names:
        mask = valid & (cluster_ids == name)
        rows["subjects"].append(int(mask.sum()))
        rows["consistency"].append(float(share[mask].mean()))
        rows["consistent_accuracy"].append(float(all_right[mask].mean()))
        rows["all_agree"].append(float(all_agree[mask].mean()))
    total = Consistency(
        float(np.mean(rows["consistency"])) if len(names) else np.nan,
        float(np.mean(rows["consistent_accuracy"])) if len(names) else np.nan,
        float(np.mean(rows["all_agree"])) if len(names) else np.nan,
        len(names),
        int(valid.sum()),
        int((~np.asarray(kept)).sum()),
    )
    return total, rows


# --- calibration ---------------------------------------------------------------------------------


def softmax(scores: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    """p(c) over the candidate set (last axis) of ``scores / temperature``."""
    z = np.asarray(scores, dtype=np.float64) / temperature
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def reliability(confidence: np.ndarray, right: np.ndarray, bins: int = 10) -> dict:
    """Equal-width bins of confidence over [0, 1] (the last closed): per bin its items, mean
    confidence and accuracy (NaN when empty)."""
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.clip(np.searchsorted(edges, confidence, side="right") - 1, 0, bins - 1)
    count = np.bincount(which, minlength=bins)
    conf = np.bincount(which, weights=confidence, minlength=bins)
    acc = np.bincount(which, weights=np.asarray(right, dtype=np.float64), minlength=bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        return {"low": edges[:-1], "high": edges[1:], "n": count, "confidence": conf / count, "accuracy": acc / count}


def ece(confidence, right, bins: int = 10) -> float:
    """Expected calibration error (Guo et al. 2017; X-FACTR): sum over equal-width bins of the
    bin's share of items times |accuracy - mean confidence|."""
    table = reliability(np.asarray(confidence, dtype=np.float64), right, bins)
    used = table["n"] > 0
    gap = np.abs(table["accuracy"][used] - table["confidence"][used])
    return float((table["n"][used] * gap).sum() / max(table["n"].sum(), 1))


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


# --- tables: what the studies call ---------------------------------------------------------------


@dataclass(frozen=True)
class Settings:
    """The config's ``uncertainty``."""

    bootstrap: int = DEFAULT_B
    seed: int = 0
    min_clusters: int = MIN_CLUSTERS
    alpha: float = 0.05
    bins: int = 10


INTERVAL_COLUMNS = ["value", "low", "high", "clusters", "items", "note"]


def interval_rows(frame, keys: list[str], cluster: str, value: str, settings: Settings, objects: str | None = None):
    """One row per group of ``keys``: the mean over ``cluster`` of per-cluster means of ``value``
    (with ``objects``, the macro mean: per object, then per cluster) and its interval, as
    ``keys + INTERVAL_COLUMNS``; each group draws from a stream seeded by the seed and its key."""
    import pandas as pd

    rows = []
    for key, group in frame.groupby(keys, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        rng = stream(settings.seed, *key, value, objects or "")
        if objects is None:
            found = cluster_interval(group[cluster], group[value], settings.bootstrap, rng, settings.min_clusters)
        else:
            found = macro_interval(
                group[cluster], group[objects], group[value], settings.bootstrap, rng, settings.min_clusters
            )
        rows.append({**dict(zip(keys, key)), **_interval_dict(found)})
    return pd.DataFrame(rows, columns=[*keys, *INTERVAL_COLUMNS])


def _interval_dict(found: Interval) -> dict:
    return {
        "value": found.value,
        "low": found.low,
        "high": found.high,
        "clusters": found.clusters,
        "items": found.items,
        "note": found.note,
    }


def compare(a, b, key: tuple, cluster: str, item: str, value: str, settings: Settings) -> tuple[dict, dict]:
    """A paired comparison of two frames of per-item ``value`` (0/1) on the items both have (joined on
    ``cluster`` and ``item``): the difference A - B with its paired interval, and the per-cluster
    McNemar tests with Holm's verdicts counted. Returns (summary, per-cluster columns)."""
    joined = a[[cluster, item, value]].merge(b[[cluster, item, value]], on=[cluster, item], suffixes=("_a", "_b"))
    right_a, right_b = joined[f"{value}_a"].to_numpy(bool), joined[f"{value}_b"].to_numpy(bool)
    rng = stream(settings.seed, "paired", *key)
    found = paired_interval(joined[cluster], right_a, right_b, settings.bootstrap, rng, settings.min_clusters)
    tests = mcnemar_per_cluster(joined[cluster].to_numpy(), right_a, right_b, settings.alpha)
    verdicts = list(tests["verdict"])
    summary = {
        **_interval_dict(found),
        "A better": verdicts.count("A better"),
        "no difference": verdicts.count("no difference"),
        "B better": verdicts.count("B better"),
    }
    return summary, tests
