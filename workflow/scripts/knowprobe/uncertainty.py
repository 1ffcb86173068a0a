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
objects of one class of Binomial(n, p) is Binomial(c n, p). A relation with many classes (more
than ``EXACT_CLASSES``) has the sum of its resampled objects' accuracies drawn from the normal
distribution of its exact mean and variance instead (see ``macro_replicates``).

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
from dataclasses import dataclass, field

import numpy as np
from scipy import stats as scipy_stats

DEFAULT_B = 10_000
MIN_CLUSTERS = 5
CHUNK_ELEMENTS = 4_000_000  # drawn values per chunk of replicates (bounds memory)
EXACT_CLASSES = 12  # macro: clusters with more classes of objects draw their sum from its normal distribution
NORMAL_CLUSTERS = 500  # with this many clusters, the items' stage is drawn as the normal sum (see replicates)


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
    distinct, level = np.unique(values, return_inverse=True)
    pair_counts = np.bincount(cluster.ravel() * len(distinct) + level.ravel(), minlength=len(names) * len(distinct))
    pair_counts = pair_counts.reshape(len(names), len(distinct))
    present = pair_counts > 0
    width = max(int(present.sum(axis=1).max(initial=1)), 1)
    # each cluster's levels first (stable), padded with zero counts
    order = np.argsort(~present, axis=1, kind="stable")[:, :width]
    counts = np.take_along_axis(pair_counts, order, axis=1).astype(np.int64)
    levels = np.where(counts > 0, distinct[order], 0.0)
    return Clusters(names, levels, counts)


def multinomial(rng: np.random.Generator, n: np.ndarray, probabilities: np.ndarray) -> np.ndarray:
    """Multinomial counts ``[..., L]`` for ``n[...]`` draws over ``probabilities[..., L]`` (broadcast
    against ``n``), as conditional binomials (vectorised over ``...``, L small)."""
    n = np.asarray(n, dtype=np.int64)
    shape = np.broadcast_shapes(n.shape, probabilities.shape[:-1])
    probabilities = np.broadcast_to(probabilities, (*shape, probabilities.shape[-1]))
    left = np.broadcast_to(n, shape).copy()
    mass = np.ones(shape)
    out = np.zeros(probabilities.shape, dtype=np.int64)
    for level in range(probabilities.shape[-1] - 1):
        p = probabilities[..., level]
        share = np.divide(p, mass, out=np.zeros(shape), where=mass > 1e-12)
        out[..., level] = rng.binomial(left, np.clip(share, 0.0, 1.0))
        left -= out[..., level]
        mass = mass - p
    out[..., -1] = left
    return out


def _chunks(total: int, per_replicate: int):
    size = max(1, CHUNK_ELEMENTS // max(per_replicate, 1))
    for start in range(0, total, size):
        yield min(size, total - start)


def cluster_draws(rng: np.random.Generator, size: int, m: int) -> np.ndarray:
    """``[size, m]``: how often each of ``m`` clusters is drawn in each of ``size`` replicates
    (m draws with replacement)."""
    picked = rng.integers(0, m, size=(size, m)) + m * np.arange(size)[:, None]
    return np.bincount(picked.ravel(), minlength=size * m).reshape(size, m)


def replicates(
    groups: Clusters, b: int = DEFAULT_B, rng: np.random.Generator | None = None, pooled: bool = False
) -> np.ndarray:
    """``[b]`` replicates of the mean over clusters of per-cluster means (``pooled``: of the mean
    over all items, every item weighing the same), by the two-stage cluster bootstrap (clusters
    with replacement, then items within each drawn cluster).

    A cluster drawn c times contributes c independent resamples of its items; their sums add up
    to one multinomial draw of c n items over its levels (the sum of independent multinomials of
    the same frequencies), so each replicate needs one draw per cluster and level."""
    rng = rng if rng is not None else np.random.default_rng(0)
    m = len(groups)
    if m == 0:
        return np.full(b, np.nan)
    if m >= NORMAL_CLUSTERS:
        return normal_replicates(groups, b, rng, pooled)
    sizes = groups.sizes
    frequencies = groups.counts / sizes[:, None]
    out = np.empty(b)
    done = 0
    # clusters with the same counts at the same levels are exchangeable: with few such classes
    # (many clusters of few sizes, as COMPS's properties), draw how many clusters each class gets
    signature = np.concatenate([groups.levels, groups.counts], axis=1)
    classes, members = np.unique(signature, axis=0, return_counts=True)
    if len(classes) <= m // 2:
        width = groups.levels.shape[1]
        levels, counts = classes[:, :width], classes[:, width:].astype(np.int64)
        n = counts.sum(axis=1)
        for size in _chunks(b, len(classes) * (width + 1)):
            drawn = multinomial(rng, np.full(size, m), (members / m)[None])  # [size, classes]
            level_counts = multinomial(rng, drawn * n, (counts / n[:, None])[None])
            sums = (level_counts * levels[None]).sum(axis=-1)
            if pooled:
                out[done : done + size] = sums.sum(axis=1) / (drawn * n).sum(axis=1)
            else:
                out[done : done + size] = (sums / n).sum(axis=1) / m
            done += size
        return out
    for size in _chunks(b, m * groups.levels.shape[1]):
        drawn = cluster_draws(rng, size, m)
        counts = multinomial(rng, drawn * sizes, frequencies[None])
        sums = (counts * groups.levels[None]).sum(axis=-1)  # [size, m]: over every drawn copy
        if pooled:
            out[done : done + size] = sums.sum(axis=1) / (drawn * sizes).sum(axis=1)
        else:
            out[done : done + size] = (sums / sizes).sum(axis=1) / m
        done += size
    return out


def normal_replicates(groups: Clusters, b: int, rng: np.random.Generator, pooled: bool = False) -> np.ndarray:
    """``[b]`` replicates of the two-stage cluster bootstrap for many clusters (at least
    ``NORMAL_CLUSTERS``, as COMPS's properties): the clusters' stage is drawn exactly (how often
    each cluster is drawn: one multinomial over the classes of clusters with the same size, mean
    and variance), the items' stage from the normal distribution of its exact mean and variance
    given those draws: a cluster of n items with mean mu and variance s2 (over its items) drawn c
    times adds c n mu to the total and c n s2 to its variance (``pooled``; else c mu and c s2 / n
    to the sum of cluster means). The total is a sum of at least ``NORMAL_CLUSTERS`` independent
    bounded terms, where the exact draw would cost a binomial per (replicate, cluster, level) and
    take COMPS's comparisons past a minute (benchmarks/bootstrap.py; tests/test_uncertainty.py
    compares the two)."""
    m = len(groups)
    sizes = groups.sizes.astype(np.float64)
    means = groups.means
    variance = (groups.counts * (groups.levels - means[:, None]) ** 2).sum(axis=1) / sizes
    if pooled:
        terms = np.stack([sizes * means, sizes * variance, sizes], axis=1)
    else:
        terms = np.stack([means, variance / sizes, np.ones(m)], axis=1)
    classes, members = np.unique(terms, axis=0, return_counts=True)
    out = np.empty(b)
    done = 0
    for size in _chunks(b, len(classes)):
        drawn = rng.multinomial(m, members / m, size=size).astype(np.float64)  # [size, classes]
        total, spread, weight = (drawn @ classes).T
        out[done : done + size] = (total + np.sqrt(spread) * rng.standard_normal(size)) / weight
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
    pooled: bool = False,
) -> Interval:
    """The mean over clusters of per-cluster means of ``values`` (e.g. micro P@1 from per-fact
    correctness; ``pooled``: the mean over all items, e.g. COMPS's accuracy) with its two-stage
    cluster bootstrap interval."""
    groups = clusters_of(cluster_ids, values)
    items = int(groups.sizes.sum())
    if not len(groups):
        value = np.nan
    elif pooled:
        value = float((groups.levels * groups.counts).sum() / items)
    else:
        value = float(groups.means.mean())
    if len(groups) < min_clusters:
        return percentile_interval(value, np.empty(0), len(groups), items, min_clusters, level)
    draws = replicates(groups, b, rng, pooled)
    return percentile_interval(value, draws, len(groups), items, min_clusters, level)


# --- macro: clusters, then objects, then items ---------------------------------------------------


def macro_replicates(
    cluster_ids, object_ids, correct, b: int = DEFAULT_B, rng: np.random.Generator | None = None
) -> tuple[float, np.ndarray, int]:
    """Macro accuracy (per object, then per cluster, then over clusters) and ``[b]`` replicates:
    clusters with replacement, then each drawn cluster's objects, then each drawn object's items.
    Returns (value, replicates, clusters).

    Objects of one cluster with the same (items, right) form a class; a cluster drawn c times
    draws c O objects (O its objects) over its classes at once, and the right items of the
    objects drawn of a class of n items, p right, sum to Binomial(drawn n, p). A cluster with
    more than ``EXACT_CLASSES`` classes (many objects of many sizes) has the sum of its c O
    resampled object accuracies drawn from the normal distribution of the same mean and variance
    (the variance of one: the mean over objects of p(1 - p)/n plus the variance of p over
    objects): a sum of at least that many bounded terms, where the exact draw would cost a
    binomial per class (benchmarks/bootstrap.py; tests/test_uncertainty.py compares the two)."""
    rng = rng if rng is not None else np.random.default_rng(0)
    cluster_ids, object_ids = np.asarray(cluster_ids), np.asarray(object_ids)
    correct = np.asarray(correct, dtype=np.int64)
    names, cluster = np.unique(cluster_ids, return_inverse=True)
    _, object_code = np.unique(object_ids, return_inverse=True)
    _, obj = np.unique(cluster.ravel() * (object_code.max(initial=0) + 1) + object_code.ravel(), return_inverse=True)
    n_obj = np.bincount(obj)
    k_obj = np.bincount(obj, weights=correct).astype(np.int64)
    obj_cluster = np.zeros(len(n_obj), dtype=np.int64)
    obj_cluster[obj] = cluster.ravel()
    m = len(names)
    classes = []  # per cluster: objects per class, items per class's object, right per class's object
    for c in range(m):
        mine = obj_cluster == c
        pairs, counts = np.unique(np.stack([n_obj[mine], k_obj[mine]]), axis=1, return_counts=True)
        classes.append((counts, pairs[0], pairs[1]))
    per_cluster = np.array([(w * k / n).sum() / w.sum() for w, n, k in classes])
    value = float(per_cluster.mean()) if m else np.nan
    out = np.empty(b)
    done = 0
    for size in _chunks(b, m * EXACT_CLASSES):
        drawn = cluster_draws(rng, size, m)
        total = np.zeros(size)
        for c, (w, n, k) in enumerate(classes):
            objects = w.sum()
            if len(w) <= EXACT_CLASSES:
                picked = multinomial(rng, drawn[:, c] * objects, (w / objects)[None])
                right = rng.binomial(picked * n, k / n)
                total += (right / n).sum(axis=1) / objects
            else:
                # the sum of the c O resampled object accuracies, by its exact mean and variance
                p = k / n
                mean = (w * p).sum() / objects
                variance = (w * p * (1 - p) / n).sum() / objects + (w * (p - mean) ** 2).sum() / objects
                copies = drawn[:, c] * objects
                total += (copies * mean + np.sqrt(copies * variance) * rng.standard_normal(size)) / objects
        out[done : done + size] = total / m
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


# --- one study's rows on the same items: resampling shared by every row and comparison -----------


@dataclass(frozen=True)
class ItemSet:
    """Items (``cluster``, ``item``, and for macro their ``object``) in one order, sorted by
    cluster and object: the rows of a study that were measured on the same items share it, and so
    share every bootstrap replicate drawn over it."""

    clusters: np.ndarray  # cluster code per item (sorted)
    objects: np.ndarray  # object code per item, unique across clusters (sorted within a cluster)
    names: np.ndarray  # the clusters' names
    key: tuple  # a digest of the (cluster, item) names in this order, and whether objects count: the set's identity

    def __len__(self) -> int:
        return len(self.clusters)


def item_set(cluster_ids, item_ids, object_ids=None) -> tuple[ItemSet, np.ndarray]:
    """The ``ItemSet`` of the given items and the order that sorts a row's values into it (by
    cluster, object and item name)."""
    import pandas as pd

    cluster_ids, item_ids = np.asarray(cluster_ids), np.asarray(item_ids)
    cluster = pd.Categorical(cluster_ids)
    objects = None if object_ids is None else pd.Categorical(np.asarray(object_ids)).codes
    return items_from_codes(
        cluster.codes, pd.Categorical(item_ids).codes, objects, np.asarray(cluster.categories), (cluster_ids, item_ids)
    )


def items_from_codes(cluster_codes, item_codes, object_codes, cluster_names, identity) -> tuple[ItemSet, np.ndarray]:
    """``item_set`` from codes whose order is the names' (``pandas.Categorical``'s), the clusters'
    names indexed by their codes; ``identity``: what names the items (cluster and item names),
    hashed into the set's key (which seeds its draws)."""
    import hashlib

    objects = np.zeros(len(cluster_codes), dtype=np.int64) if object_codes is None else np.asarray(object_codes)
    order = np.lexsort((item_codes, objects, cluster_codes))
    used, cluster = np.unique(np.asarray(cluster_codes)[order], return_inverse=True)
    objects = objects[order]
    _, joint = np.unique(cluster.ravel() * (objects.max(initial=0) + 1) + objects, return_inverse=True)
    digest = hashlib.sha1()
    for part in identity:
        digest.update("\x1f".join(map(str, np.asarray(part)[order])).encode("utf-8") + b"\x1e")
    key = (digest.hexdigest(), object_code_flag(object_codes))
    return ItemSet(cluster.ravel(), joint.ravel(), np.asarray(cluster_names)[used], key), order


def object_code_flag(object_codes) -> bool:
    return object_codes is not None


def replicate_counts(items: ItemSet, size: int, rng: np.random.Generator, macro: bool = False) -> np.ndarray:
    """``[size, items]``: how often each item is drawn in each of ``size`` replicates of the
    two-stage bootstrap (clusters with replacement, then each drawn cluster's items; ``macro``:
    clusters, then each drawn cluster's objects, as many as it has, then each drawn object's
    items), as indices (the textbook resampling, vectorised over the replicates of a chunk). A
    row's replicate is these counts times its values times ``item_weights``."""
    n, m = len(items), len(items.names)
    unit = items.objects if macro else items.clusters  # the units whose items are drawn
    unit_size = np.bincount(unit)
    unit_start = np.concatenate([[0], np.cumsum(unit_size)[:-1]])
    cluster_units = np.bincount(items.clusters[unit_start], minlength=m)  # units per cluster (1 for micro)
    first_unit = np.concatenate([[0], np.cumsum(cluster_units)[:-1]])
    base = np.repeat(np.arange(size, dtype=np.int64) * n, m)  # each replicate's offset, per drawn cluster
    picked = rng.integers(0, m, size * m)  # the clusters drawn
    if macro:  # each drawn cluster draws as many of its objects as it has
        slots = cluster_units[picked]
        base, picked = np.repeat(base, slots), np.repeat(picked, slots)
        units = first_unit[picked] + (rng.random(len(picked)) * cluster_units[picked]).astype(np.int64)
    else:
        units = picked
    draws = unit_size[units]
    start = np.repeat(base + unit_start[units], draws)
    within = (rng.random(len(start)) * np.repeat(draws, draws)).astype(np.int64)
    return np.bincount(start + within, minlength=size * n).reshape(size, n)


def item_weights(items: ItemSet, macro: bool = False) -> np.ndarray:
    """Each item's weight in the statistic (and in every replicate, per draw): 1 / (clusters x the
    cluster's items); ``macro``: 1 / (clusters x the cluster's objects x the object's items)."""
    m = len(items.names)
    if not macro:
        return 1.0 / (m * np.bincount(items.clusters)[items.clusters])
    unit_size = np.bincount(items.objects)
    cluster_of_unit = np.zeros(len(unit_size), dtype=np.int64)
    cluster_of_unit[items.objects] = items.clusters
    cluster_units = np.bincount(cluster_of_unit, minlength=m)
    return 1.0 / (m * cluster_units[items.clusters] * unit_size[items.objects])


def shared_replicates(
    items: ItemSet,
    values: np.ndarray,
    b: int = DEFAULT_B,
    rng: np.random.Generator | None = None,
    macro: bool = False,
    pooled: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """The statistic of every column of ``values[item, row]`` (in ``items``' order; the mean over
    clusters of per-cluster means, ``macro``: of per-object means, then per cluster) and its ``[b,
    rows]`` replicates, every row resampled at the same indices (``replicate_counts``): one draw
    for all of a study's rows on these items, and the replicates of A - B of two rows are the
    difference of theirs (the paired bootstrap) at no further cost. ``pooled``: the mean over all
    items instead (every drawn item weighing the same)."""
    rng = rng if rng is not None else np.random.default_rng(0)
    values = np.asarray(values, dtype=np.float64).reshape(len(items), -1)
    weights = np.full(len(items), 1.0 / max(len(items), 1)) if pooled else item_weights(items, macro)
    weighted = values * weights[:, None]
    value = weighted.sum(axis=0) if len(items) else np.full(weighted.shape[1], np.nan)
    out = np.empty((b, weighted.shape[1]))
    done = 0
    for size in _chunks(b, len(items)):
        counts = replicate_counts(items, size, rng, macro).astype(np.float64)
        if pooled:
            out[done : done + size] = (counts @ values) / counts.sum(axis=1, keepdims=True)
        else:
            out[done : done + size] = counts @ weighted
        done += size
    return value, out


# --- paired comparisons --------------------------------------------------------------------------


def paired_interval(
    cluster_ids,
    correct_a,
    correct_b,
    b: int = DEFAULT_B,
    rng=None,
    min_clusters: int = MIN_CLUSTERS,
    pooled: bool = False,
) -> Interval:
    """A - B of the mean over clusters of per-cluster means, with the interval of the paired
    cluster bootstrap: both resampled at the same items (their difference is what is drawn)."""
    difference = np.asarray(correct_a, dtype=np.float64) - np.asarray(correct_b, dtype=np.float64)
    return cluster_interval(cluster_ids, difference, b, rng, min_clusters, pooled=pooled)


def mcnemar_exact(b, c):
    """Two-sided exact McNemar p-value of ``b`` and ``c`` discordant items: 2 P(X <= min(b, c)),
    X ~ Binomial(b + c, 1/2), at most 1 (1 without discordant items: cdf(0; 0, 1/2) = 1).
    Element-wise for arrays of counts (one per cluster); a float for two numbers."""
    b, c = np.asarray(b), np.asarray(c)
    p = np.minimum(1.0, 2.0 * scipy_stats.binom.cdf(np.minimum(b, c), b + c, 0.5))
    return float(p) if p.ndim == 0 else p


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
    p = mcnemar_exact(b, c)
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


READINGS = ("pararel", "per_subject")  # how consistency pools subjects (docs/uncertainty.md)


@dataclass(frozen=True)
class Consistency:
    consistency: float  # mean over clusters of the agreeing ordered pairs' share (reading: pooled or per subject)
    consistent_accuracy: float  # ... of the share of subjects all of whose prompts are right
    all_agree: float  # ... of the share of subjects all of whose prompts agree
    clusters: int
    subjects: int  # subjects counted (pararel: every subject of the clusters; per_subject: those with two kept prompts)
    skipped: int  # (subject, prompt) entries not kept (the article rule; a caller padding prompts counts its own)
    reading: str = "pararel"


def subject_consistency(answers: np.ndarray, right: np.ndarray, kept: np.ndarray, present: np.ndarray | None = None):
    """Per subject (rows of ``[subject, prompt]`` arrays of answer codes, correctness, whether the
    prompt is kept (the article rule) and whether it exists (``present``, default ``kept``: padding)):
    the ordered pairs of kept prompts, those agreeing, whether all present prompts are right, whether
    all kept prompts are right, whether all kept agree, and the kept prompts counted."""
    present = kept if present is None else present
    n = kept.sum(axis=1)
    same = (answers[:, :, None] == answers[:, None, :]) & kept[:, :, None] & kept[:, None, :]
    agreeing = same.sum(axis=(1, 2)) - n  # ordered pairs: leave out each prompt with itself
    pairs = n * (n - 1)
    return {
        "pairs": pairs,
        "agreeing": agreeing,
        "all_right_present": (right | ~present).all(axis=1),
        "all_right_kept": (right | ~kept).all(axis=1),
        "all_agree": agreeing == pairs,
        "kept": n,
    }


def subject_rows(answers, right, kept, present=None, reading: str = "pararel") -> dict:
    """Per subject, what each measure averages under ``reading`` (NaN where the subject does not
    enter it), the ordered pairs and the agreeing ones:

    * ``pararel`` (ParaRel's code, ``encode_consistency_probe.py``): consistency pools the
      relation's ordered pairs of kept prompts over its subjects (``analyze_results``: agreeing
      pairs over pairs); consistent accuracy is the share of *all* the relation's subjects every
      one of whose prompts is right, the article rule not applied (``group_score_lama_eval``); all
      agree, of the subjects with a kept prompt, those whose kept prompts give one answer
      (``consistent_subjects``).
    * ``per_subject``: each subject's share of agreeing pairs, then the mean over subjects with
      two kept prompts; consistent accuracy and all agree over the same subjects, on kept prompts."""
    if reading not in READINGS:
        raise ValueError(f"consistency reading {reading!r}: one of {', '.join(READINGS)}")
    found = subject_consistency(np.asarray(answers), np.asarray(right), np.asarray(kept), present)
    pairs, agreeing, n = found["pairs"], found["agreeing"], found["kept"]
    if reading == "pararel":
        share = np.full(len(pairs), np.nan)  # pooled: the cluster's sum of agreeing over its sum of pairs
        all_right = found["all_right_present"].astype(float)
        all_agree = np.where(n >= 1, found["all_agree"], np.nan)
    else:
        valid = n >= 2
        share = np.where(valid, agreeing / np.maximum(pairs, 1), np.nan)
        all_right = np.where(valid, found["all_right_kept"], np.nan)
        all_agree = np.where(valid, found["all_agree"], np.nan)
    return {"share": share, "all_right": all_right, "all_agree": all_agree, "pairs": pairs, "agreeing": agreeing}


def consistency(cluster_ids, answers, right, kept, present=None, reading: str = "pararel") -> tuple[Consistency, dict]:
    """ParaRel's consistency over ``[subject, prompt]`` arrays (one row per subject, with its
    cluster in ``cluster_ids``; prompts padded with ``present = kept = False``), read as
    ``subject_rows`` says: per cluster, then the mean over clusters. A cluster whose subjects have
    no pair of kept prompts has no consistency (NaN; ParaRel's code reports -1) and leaves that
    mean. Returns the totals and per-cluster columns."""
    rows_of = subject_rows(answers, right, kept, present, reading)
    cluster_ids = np.asarray(cluster_ids)
    per_subject = reading == "per_subject"
    entering = ~np.isnan(rows_of["share"]) if per_subject else np.ones(len(cluster_ids), bool)
    names = np.unique(cluster_ids[entering])
    rows = {
        "cluster": names,
        "subjects": [],
        "pairs": [],
        "consistency": [],
        "consistent_accuracy": [],
        "all_agree": [],
    }
    for name in names:
        mask = entering & (cluster_ids == name)
        pairs = int(rows_of["pairs"][mask].sum())
        if per_subject:
            value = float(rows_of["share"][mask].mean())
        else:
            value = float(rows_of["agreeing"][mask].sum() / pairs) if pairs else np.nan
        rows["subjects"].append(int(mask.sum()))
        rows["pairs"].append(pairs)
        rows["consistency"].append(value)
        rows["consistent_accuracy"].append(float(np.nanmean(rows_of["all_right"][mask])))
        agree = rows_of["all_agree"][mask]
        rows["all_agree"].append(float(np.nanmean(agree)) if (~np.isnan(agree)).any() else np.nan)

    def over_clusters(column):
        values = np.asarray(rows[column], dtype=float)
        return float(np.nanmean(values)) if (~np.isnan(values)).any() else np.nan

    total = Consistency(
        over_clusters("consistency"),
        over_clusters("consistent_accuracy"),
        over_clusters("all_agree"),
        len(names),
        int(entering.sum()),
        int((~np.asarray(kept)).sum() if present is None else (~np.asarray(kept) & np.asarray(present)).sum()),
        reading,
    )
    return total, rows


def ratio_interval(
    cluster_ids,
    numerators,
    denominators,
    b: int = DEFAULT_B,
    rng: np.random.Generator | None = None,
    min_clusters: int = MIN_CLUSTERS,
) -> Interval:
    """The mean over clusters of each cluster's pooled ratio (sum of numerators over sum of
    denominators of its items; ParaRel's consistency: agreeing pairs over pairs) with its two-stage
    cluster bootstrap interval: clusters, then items, drawn as indices (``replicate_counts``); a
    cluster drawn c times counts c times with the ratio of its c resamples pooled. Clusters without
    a denominator do not enter."""
    cluster_ids = np.asarray(cluster_ids)
    numerators, denominators = np.asarray(numerators, float), np.asarray(denominators, float)
    items, order = item_set(cluster_ids, np.arange(len(cluster_ids)))
    m = len(items.names)
    one_hot = np.zeros((len(items), m))
    one_hot[np.arange(len(items)), items.clusters] = 1.0
    num, den = numerators[order, None] * one_hot, denominators[order, None] * one_hot
    sums_num, sums_den = num.sum(axis=0), den.sum(axis=0)
    counted = sums_den > 0
    value = float((sums_num[counted] / sums_den[counted]).mean()) if counted.any() else np.nan
    if m < min_clusters or not counted.any():
        return percentile_interval(value, np.empty(0), m, len(items), min_clusters)
    rng = rng if rng is not None else np.random.default_rng(0)
    sizes = one_hot.sum(axis=0)
    out = np.empty(b)
    done = 0
    for size in _chunks(b, len(items)):
        counts = replicate_counts(items, size, rng).astype(np.float64)
        copies = (counts @ one_hot) / sizes  # how often each cluster was drawn
        drawn_num, drawn_den = counts @ num, counts @ den
        use = (copies > 0) & (drawn_den > 0)
        ratio = np.divide(drawn_num, drawn_den, out=np.zeros_like(drawn_num), where=use)
        out[done : done + size] = (copies * ratio).sum(axis=1) / np.maximum((copies * use).sum(axis=1), 1e-12)
        done += size
    return percentile_interval(value, out, m, len(items), min_clusters)


# --- calibration ---------------------------------------------------------------------------------


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
    for size in _chunks(b, n):
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


def in_percent(table, keys: list[str], value: str, clusters: str, items: str):
    """``interval_rows``' table under a study's own names: ``keys``, the value (as ``value``) with
    ``low`` and ``high`` in percent, the clusters and items counted (as ``clusters`` and ``items``:
    relations and facts, properties and pairs) and the ``note``."""
    return table[keys].assign(
        **{
            value: 100 * table["value"],
            "low": 100 * table["low"],
            "high": 100 * table["high"],
            clusters: table["clusters"],
            items: table["items"],
            "note": table["note"],
        }
    )


def interval_rows(
    frame,
    keys: list[str],
    cluster: str,
    value: str,
    settings: Settings,
    objects: str | None = None,
    pooled: bool = False,
):
    """One row per group of ``keys``: the mean over ``cluster`` of per-cluster means of ``value``
    (with ``objects``, the macro mean: per object, then per cluster; ``pooled``: the mean over
    items) and its interval, as
    ``keys + INTERVAL_COLUMNS``; each group draws from a stream seeded by the seed and its key."""
    import pandas as pd

    rows = []
    for key, group in frame.groupby(keys, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        rng = stream(settings.seed, *key, value, objects or "")
        if objects is None:
            found = cluster_interval(
                group[cluster], group[value], settings.bootstrap, rng, settings.min_clusters, pooled=pooled
            )
        else:
            found = macro_interval(
                group[cluster], group[objects], group[value], settings.bootstrap, rng, settings.min_clusters
            )
        rows.append({**dict(zip(keys, key)), **_interval_dict(found)})
    return pd.DataFrame(rows, columns=[*keys, *INTERVAL_COLUMNS])


@dataclass
class SharedDraws:
    """What ``shared_interval_rows`` drew, for the paired comparisons of the same rows: per row key
    its item set (an id), statistic, ``[b]`` replicates (absent with too few clusters) and values
    in the set's order, and per item set its ``ItemSet``."""

    item_set: dict = field(default_factory=dict)
    value: dict = field(default_factory=dict)
    draws: dict = field(default_factory=dict)
    values: dict = field(default_factory=dict)
    sets: dict = field(default_factory=dict)


def shared_interval_rows(
    frame,
    keys: list[str],
    cluster: str,
    item: str,
    value: str,
    settings: Settings,
    objects: str | None = None,
    pooled: bool = False,
):
    """``interval_rows``' table (the mean over ``cluster`` of per-cluster means of ``value``; with
    ``objects``, the macro mean; ``pooled``, the mean over items), with the rows measured on the
    same items resampled together:
    one draw of item counts per replicate for all of them (``shared_replicates``), from a stream
    seeded by the seed and the items' names, so a row's interval does not depend on which other
    rows a table holds. Returns the table and the ``SharedDraws`` that ``comparison_table`` takes
    for the paired comparisons of these rows (their replicates' differences)."""
    import pandas as pd

    # codes whose order is the names' (factorize sorts), so sorting by codes is sorting by names
    cluster_codes, names = pd.factorize(frame[cluster], sort=True)
    item_codes, item_names = pd.factorize(frame[item], sort=True)
    object_codes = None if objects is None else pd.factorize(frame[objects], sort=True)[0]
    names, item_names = np.asarray(names, dtype=object), np.asarray(item_names, dtype=object)
    values_all = frame[value].to_numpy(np.float64)
    by_items, found = {}, SharedDraws()
    # the rows of one item set: the same (cluster, item, object) codes once sorted by them
    for key, positions in frame.groupby(keys, sort=False).indices.items():
        key = key if isinstance(key, tuple) else (key,)
        sort_keys = (item_codes[positions], cluster_codes[positions])
        if object_codes is not None:
            sort_keys = (sort_keys[0], object_codes[positions], sort_keys[1])
        ordered = positions[np.lexsort(sort_keys)]
        codes = [cluster_codes, item_codes] + ([] if object_codes is None else [object_codes])
        signature = b"".join(np.ascontiguousarray(c[ordered]).tobytes() for c in codes)
        entry = by_items.setdefault(signature, ([], []))
        entry[0].append(key)
        entry[1].append(ordered)
    intervals = {}
    for number, (row_keys, row_positions) in enumerate(by_items.values()):
        first = row_positions[0]
        items, order = items_from_codes(
            cluster_codes[first],
            item_codes[first],
            None if object_codes is None else object_codes[first],
            names,
            (names[cluster_codes[first]], item_names[item_codes[first]]),
        )
        columns = [values_all[rows[order]] for rows in row_positions]  # every row in the set's order
        matrix = np.stack(columns, axis=1)
        m = len(items.names)
        if m >= settings.min_clusters:
            rng = stream(settings.seed, "items", *items.key, "pooled" if pooled else "")
            values, draws = shared_replicates(items, matrix, settings.bootstrap, rng, objects is not None, pooled)
        else:
            values = (
                matrix.mean(axis=0) if pooled else (matrix * item_weights(items, objects is not None)[:, None]).sum(0)
            )
            draws = None
        found.sets[number] = items
        for column, key in enumerate(row_keys):
            row_draws = draws[:, column] if draws is not None else np.empty(0)
            intervals[key] = percentile_interval(values[column], row_draws, m, len(items), settings.min_clusters)
            found.item_set[key], found.value[key] = number, float(values[column])
            found.values[key] = matrix[:, column]
            if draws is not None:
                found.draws[key] = row_draws
    rows = [{**dict(zip(keys, key)), **_interval_dict(intervals[key])} for key in intervals]
    return pd.DataFrame(rows, columns=[*keys, *INTERVAL_COLUMNS]), found


def _interval_dict(found: Interval) -> dict:
    return {
        "value": found.value,
        "low": found.low,
        "high": found.high,
        "clusters": found.clusters,
        "items": found.items,
        "note": found.note,
    }


def compare(
    a,
    b,
    key: tuple,
    cluster: str,
    item: str,
    value: str,
    settings: Settings,
    pooled: bool = False,
    shared: tuple | None = None,
) -> tuple[dict, dict]:
    """A paired comparison of two frames of per-item ``value`` (0/1) on the items both have (joined on
    ``cluster`` and ``item``): the difference A - B with its paired interval, and the per-cluster
    McNemar tests with Holm's verdicts counted. Returns (summary, per-cluster columns).
    ``shared``: (value A, replicates A, value B, replicates B, values A, values B, their
    ``ItemSet``) where both rows were resampled together on the same items
    (``shared_interval_rows``): the difference's replicates are theirs, and no join is needed."""
    if shared is not None:
        value_a, draws_a, value_b, draws_b, right_a, right_b, items = shared
        right_a, right_b = right_a.astype(bool), right_b.astype(bool)
        found = percentile_interval(
            value_a - value_b, draws_a - draws_b, len(items.names), len(items), settings.min_clusters
        )
        tests = mcnemar_per_cluster(items.clusters, right_a, right_b, settings.alpha)
        tests["cluster"] = items.names[tests["cluster"]]
    else:
        joined = a[[cluster, item, value]].merge(b[[cluster, item, value]], on=[cluster, item], suffixes=("_a", "_b"))
        right_a, right_b = joined[f"{value}_a"].to_numpy(bool), joined[f"{value}_b"].to_numpy(bool)
        rng = stream(settings.seed, "paired", *key)
        found = paired_interval(
            joined[cluster], right_a, right_b, settings.bootstrap, rng, settings.min_clusters, pooled=pooled
        )
        tests = mcnemar_per_cluster(joined[cluster].to_numpy(), right_a, right_b, settings.alpha)
    verdicts = list(tests["verdict"])
    summary = {
        **_interval_dict(found),
        "A better": verdicts.count("A better"),
        "no difference": verdicts.count("no difference"),
        "B better": verdicts.count("B better"),
    }
    return summary, tests


def comparison_table(
    groups: dict,
    pairs,
    dataset_of,
    cluster: str,
    item: str,
    value: str,
    settings: Settings,
    name_of=None,
    pooled: bool = False,
    shared: SharedDraws | None = None,
):
    """Every pair ``(A, B)`` of keys of ``groups`` (key -> frame of per-item ``value``): the
    difference in points (100 x A - B) with its paired interval, and the clusters where either is
    better (McNemar, Holm) or neither. ``dataset_of(key)`` names the part both are on (shown as
    ``dataset``; pass ``lambda key: ""`` if there is one), ``name_of(key)`` a row's name (its
    parts joined by blanks). ``shared``: the rows' replicates (``shared_interval_rows``, keyed as
    ``groups``); a pair on the same items takes the difference of theirs, any other pair is
    resampled on the items both have. Returns (summary, per-cluster tests)."""
    import pandas as pd

    summary, tests = [], []
    for a, b in pairs:
        if a not in groups or b not in groups:
            continue
        name_of = name_of or (lambda key: " ".join(map(str, key)))
        name_a, name_b = name_of(a), name_of(b)
        together = None
        if shared is not None and a in shared.draws and b in shared.draws and shared.item_set[a] == shared.item_set[b]:
            together = (
                *(shared.value[a], shared.draws[a], shared.value[b], shared.draws[b]),
                *(shared.values[a], shared.values[b], shared.sets[shared.item_set[a]]),
            )
        found, per_cluster = compare(
            groups[a], groups[b], (name_a, name_b), cluster, item, value, settings, pooled, together
        )
        dataset = dataset_of(a)
        summary.append(
            {
                "A": name_a,
                "B": name_b,
                "dataset": dataset,
                "difference": 100 * found["value"],
                "low": 100 * found["low"],
                "high": 100 * found["high"],
                "clusters": found["clusters"],
                "items": found["items"],
                "A better": found["A better"],
                "no difference": found["no difference"],
                "B better": found["B better"],
                "note": found["note"],
            }
        )
        tests.append(pd.DataFrame(per_cluster).assign(A=name_a, B=name_b, dataset=dataset))
    columns = ["A", "B", "dataset", "cluster", "b", "c", "p", "p_holm", "verdict"]
    return pd.DataFrame(summary), (
        pd.concat(tests, ignore_index=True)[columns] if tests else pd.DataFrame(columns=columns)
    )


def cell(value: float, low: float, high: float, digits: int = 1) -> str:
    """``value [low, high]``, or the value alone where there is no interval."""
    if low != low:  # NaN
        return f"{value:.{digits}f}"
    return f"{value:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def comparison_layout(summary, cluster_name: str = "clusters"):
    """The comparisons for people: A, B, (dataset), "A - B (points)" as value [low, high], the
    clusters, and the three counts."""
    import pandas as pd

    if summary.empty:
        return summary
    out = {"A": summary["A"], "B": summary["B"]}
    if (summary["dataset"] != "").any():
        out["dataset"] = summary["dataset"]
    out["A - B (points)"] = [cell(r.difference, r.low, r.high) for r in summary.itertuples()]
    out[cluster_name] = summary["clusters"]
    for column in ("A better", "no difference", "B better"):
        out[column] = summary[column]
    return pd.DataFrame(out)
