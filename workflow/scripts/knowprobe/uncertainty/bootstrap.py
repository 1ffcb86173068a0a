"""The two-stage cluster bootstrap and its intervals, for every study.

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
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

import numpy as np

from . import DEFAULT_B, MIN_CLUSTERS, Settings

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


def chunks(total: int, per_replicate: int):
    """Sizes of the chunks of ``total`` replicates, each at most ``CHUNK_ELEMENTS`` drawn values of
    ``per_replicate`` each: the loops of every subject's resampling (bounds memory)."""
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
        for size in chunks(b, len(classes) * (width + 1)):
            drawn = multinomial(rng, np.full(size, m), (members / m)[None])  # [size, classes]
            level_counts = multinomial(rng, drawn * n, (counts / n[:, None])[None])
            sums = (level_counts * levels[None]).sum(axis=-1)
            if pooled:
                out[done : done + size] = sums.sum(axis=1) / (drawn * n).sum(axis=1)
            else:
                out[done : done + size] = (sums / n).sum(axis=1) / m
            done += size
        return out
    for size in chunks(b, m * groups.levels.shape[1]):
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
    take COMPS's comparisons past a minute (benchmarks/bootstrap.py;
    tests/uncertainty/test_bootstrap.py compares the two)."""
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
    for size in chunks(b, len(classes)):
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
    binomial per class (benchmarks/bootstrap.py; tests/uncertainty/test_bootstrap.py compares the two)."""
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
    for size in chunks(b, m * EXACT_CLASSES):
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
    for size in chunks(b, len(items)):
        counts = replicate_counts(items, size, rng, macro).astype(np.float64)
        if pooled:
            out[done : done + size] = (counts @ values) / counts.sum(axis=1, keepdims=True)
        else:
            out[done : done + size] = counts @ weighted
        done += size
    return value, out


# --- a study's table: one row per group, with its interval ---------------------------------------


INTERVAL_COLUMNS = ["value", "low", "high", "clusters", "items", "note"]


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
        rows.append({**dict(zip(keys, key)), **interval_dict(found)})
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
    rows = [{**dict(zip(keys, key)), **interval_dict(intervals[key])} for key in intervals]
    return pd.DataFrame(rows, columns=[*keys, *INTERVAL_COLUMNS]), found


def interval_dict(found: Interval) -> dict:
    return {
        "value": found.value,
        "low": found.low,
        "high": found.high,
        "clusters": found.clusters,
        "items": found.items,
        "note": found.note,
    }
