"""Two systems on the same items, compared: the difference's replicates resample the per-item
differences A - B, which is resampling the same indices for both. Per cluster, McNemar's exact test
on the discordant items (A right and B wrong: b; the reverse: c): the two-sided binomial tail
``min(1, 2 P(X <= min(b, c)))``, X ~ Binomial(b + c, 1/2), then Holm's step-down correction over
the clusters of a comparison."""

from __future__ import annotations

import numpy as np
from scipy import stats as scipy_stats

from . import DEFAULT_B, MIN_CLUSTERS, Settings
from .bootstrap import Interval, SharedDraws, cluster_interval, interval_dict, percentile_interval, stream


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


# --- a study's table of comparisons --------------------------------------------------------------


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
        **interval_dict(found),
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
