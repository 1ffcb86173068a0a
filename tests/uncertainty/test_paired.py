"""knowprobe.uncertainty.paired: the paired interval, McNemar's exact test (against the binomial tail)
and Holm's correction."""

import numpy as np
import pytest
from scipy import stats

from knowprobe.uncertainty import paired


def test_a_model_against_itself_is_zero():
    rng = np.random.default_rng(0)
    cluster, right = np.repeat(np.arange(12), 30), rng.random(360) < 0.5
    interval = paired.paired_interval(cluster, right, right, 1000, rng)
    assert (interval.value, interval.low, interval.high) == (0.0, 0.0, 0.0)
    verdicts = paired.mcnemar_per_cluster(cluster, right, right)["verdict"]
    assert set(verdicts) == {"no difference"}


def test_mcnemar_is_the_binomial_tail():
    # A right and B wrong on 9 facts, the reverse on 2: 2 P(X <= 2), X ~ Bin(11, 1/2)
    tail = sum(stats.binom.pmf(k, 11, 0.5) for k in range(3))
    assert paired.mcnemar_exact(9, 2) == pytest.approx(2 * tail) == pytest.approx(134 / 2048)
    assert paired.mcnemar_exact(0, 0) == 1.0 and paired.mcnemar_exact(3, 3) == 1.0
    a = np.array([1] * 9 + [0] * 2 + [1] * 5, bool)
    b = np.array([0] * 9 + [1] * 2 + [1] * 5, bool)
    table = paired.mcnemar_per_cluster(np.zeros(16), a, b)
    assert (table["b"][0], table["c"][0]) == (9, 2) and table["p"][0] == pytest.approx(134 / 2048)


def test_holm():
    assert paired.holm([0.01, 0.04, 0.03, 0.5]) == pytest.approx([0.04, 0.09, 0.09, 0.5])


def test_mcnemar_per_cluster_is_each_clusters_exact_test():
    rng = np.random.default_rng(2)
    cluster = rng.integers(0, 30, 900)
    a, b = rng.random(900) < 0.5, rng.random(900) < 0.45
    table = paired.mcnemar_per_cluster(cluster, a, b)
    expected = [paired.mcnemar_exact(int(x), int(y)) for x, y in zip(table["b"], table["c"])]
    assert table["p"].tolist() == expected
    assert paired.mcnemar_per_cluster(np.zeros(0), np.zeros(0, bool), np.zeros(0, bool))["p"].shape == (0,)
