"""knowprobe.uncertainty.bootstrap: the two-stage cluster bootstrap (micro, pooled, macro, many
clusters) against resampling indices and textbook formulas, and the rows of a table resampled together."""

import numpy as np
import pandas as pd
import pytest

from knowprobe import uncertainty as u
from knowprobe.lpaqa.metrics import average_over_relations, p_at_1
from knowprobe.uncertainty import bootstrap, paired


def test_one_cluster_of_iid_items_gives_the_binomial_standard_error():
    rng = np.random.default_rng(1)
    n, p = 2000, 0.3
    values = rng.random(n) < p
    draws = bootstrap.replicates(bootstrap.clusters_of(np.zeros(n, int), values), 20_000, np.random.default_rng(2))
    observed = values.mean()
    expected = np.sqrt(observed * (1 - observed) / n)
    assert abs(draws.std() / expected - 1) < 0.02
    assert abs(draws.mean() - observed) < 0.002


def test_the_draws_match_resampling_indices():
    """Drawing level counts is the same distribution as drawing items with replacement."""
    rng = np.random.default_rng(0)
    cluster = np.repeat(np.arange(6), [5, 40, 12, 80, 3, 30])
    values = rng.integers(-1, 2, len(cluster)).astype(float)
    fast = bootstrap.replicates(bootstrap.clusters_of(cluster, values), 20_000, np.random.default_rng(1))
    slow = np.empty(4000)
    groups = [values[cluster == c] for c in range(6)]
    draw = np.random.default_rng(3)
    for i in range(len(slow)):
        picked = draw.integers(0, 6, 6)
        slow[i] = np.mean([draw.choice(groups[c], len(groups[c])).mean() for c in picked])
    assert abs(fast.std() / slow.std() - 1) < 0.06
    assert abs(fast.mean() - slow.mean()) < 0.01


def test_the_interval_estimates_the_tables_statistic():
    """LPAQA's micro and macro P@1: the mean over relations of per-relation means."""
    rng = np.random.default_rng(5)
    frame = pd.DataFrame(
        {
            "relation": np.repeat([f"P{i}" for i in range(8)], 50),
            "obj_label": rng.choice(list("abcdefg"), 400),
            "correct": rng.random(400) < 0.4,
        }
    )
    table = average_over_relations(p_at_1(frame)).iloc[0]
    micro = bootstrap.cluster_interval(frame["relation"], frame["correct"], 2000, np.random.default_rng(0))
    macro = bootstrap.macro_interval(
        frame["relation"], frame["obj_label"], frame["correct"], 2000, np.random.default_rng(0)
    )
    assert micro.value == pytest.approx(table["micro"]) and macro.value == pytest.approx(table["macro"])
    assert micro.low < micro.value < micro.high and macro.low < macro.value < macro.high
    assert (micro.clusters, micro.items) == (8, 400)


def test_fewer_than_five_clusters_gives_no_interval():
    interval = bootstrap.cluster_interval(np.repeat([1, 2, 3, 4], 10), np.ones(40), 100)
    assert np.isnan(interval.low) and interval.value == 1.0
    assert interval.cell(100) == "100.0 (4 clusters: fewer than 5)"


def test_identical_seeds_give_identical_numbers():
    cluster, values = np.repeat(np.arange(10), 20), np.arange(200) % 3 == 0
    first = bootstrap.cluster_interval(cluster, values, 500, bootstrap.stream(7, "model", "Man"))
    again = bootstrap.cluster_interval(cluster, values, 500, bootstrap.stream(7, "model", "Man"))
    other = bootstrap.cluster_interval(cluster, values, 500, bootstrap.stream(8, "model", "Man"))
    assert first == again and first != other


def test_macro_draws_match_resampling_objects_then_facts():
    """The class draws (exact and, for relations with many classes, normal) against the plain
    three-stage resampling of indices."""
    rng = np.random.default_rng(0)
    sizes = [40, 300, 25, 120, 60, 200]
    cluster = np.repeat(np.arange(6), sizes)
    objects = np.concatenate([rng.integers(0, k, n) for n, k in zip(sizes, [3, 90, 2, 40, 5, 70])])
    right = rng.random(len(cluster)) < 0.45
    value, fast, _ = bootstrap.macro_replicates(cluster, objects, right, 20_000, np.random.default_rng(1))
    slow = np.empty(2000)
    relations = []
    for c in range(6):
        mine = cluster == c
        relations.append([right[mine & (objects == o)] for o in np.unique(objects[mine])])
    draw = np.random.default_rng(2)
    for i in range(len(slow)):
        picked = draw.integers(0, 6, 6)
        per_relation = []
        for c in picked:
            objs = relations[c]
            chosen = draw.integers(0, len(objs), len(objs))
            per_relation.append(np.mean([draw.choice(objs[o], len(objs[o])).mean() for o in chosen]))
        slow[i] = np.mean(per_relation)
    assert abs(fast.std() / slow.std() - 1) < 0.06
    assert abs(fast.mean() - slow.mean()) < 0.005 and abs(fast.mean() - value) < 0.005


def test_many_clusters_of_few_kinds_draw_as_each_cluster_alone():
    """Clusters drawn by class (same size, same counts) against clusters drawn one by one."""
    rng = np.random.default_rng(4)
    cluster = np.repeat(np.arange(400), 12)
    values = rng.random(len(cluster)) < 0.6
    groups = bootstrap.clusters_of(cluster, values)
    assert len(np.unique(np.concatenate([groups.levels, groups.counts], axis=1), axis=0)) <= 200  # classes used
    for pooled in (False, True):
        by_class = bootstrap.replicates(groups, 20_000, np.random.default_rng(1), pooled)
        one_by_one = np.array(
            [
                np.mean([rng.choice(values[cluster == c], 12).mean() for c in rng.integers(0, 400, 400)])
                for _ in range(600)
            ]
        )
        assert abs(by_class.std() / one_by_one.std() - 1) < 0.1
        assert abs(by_class.mean() - values.mean()) < 0.002


def test_many_clusters_draw_the_items_stage_from_its_normal_sum(monkeypatch):
    """With NORMAL_CLUSTERS clusters or more the items' stage is drawn as a normal sum of its exact
    mean and variance; its replicates agree with the exact level-count draws (forced below)."""
    rng = np.random.default_rng(6)
    cluster = np.repeat(
        np.arange(bootstrap.NORMAL_CLUSTERS + 100), rng.integers(2, 30, bootstrap.NORMAL_CLUSTERS + 100)
    )
    values = rng.integers(-1, 2, len(cluster)).astype(float) * (rng.random(len(cluster)) < 0.5)
    groups = bootstrap.clusters_of(cluster, values)
    for pooled in (False, True):
        normal = bootstrap.replicates(groups, 20_000, np.random.default_rng(1), pooled)
        with monkeypatch.context() as patch:
            patch.setattr(bootstrap, "NORMAL_CLUSTERS", 10**9)
            exact = bootstrap.replicates(groups, 20_000, np.random.default_rng(1), pooled)
        assert not np.array_equal(normal, exact)  # the two paths draw differently
        assert abs(normal.std() / exact.std() - 1) < 0.03
        assert abs(normal.mean() - exact.mean()) < 0.1 * exact.std()
        low, high = np.percentile(normal, [2.5, 97.5]) - np.percentile(exact, [2.5, 97.5])
        assert abs(low) < 0.1 * exact.std() and abs(high) < 0.1 * exact.std()


def _textbook(cluster, objects, values, b, rng, macro):
    """Per replicate: relations with replacement, (macro: each drawn relation's objects with
    replacement,) then the drawn relation's (object's) facts with replacement."""
    clusters = np.unique(cluster)
    out = np.empty((b, values.shape[1]))
    for i in range(b):
        means = []
        for c in rng.choice(clusters, len(clusters)):
            if macro:
                mine = np.unique(objects[cluster == c])
                per_object = []
                for o in rng.choice(mine, len(mine)):
                    rows = values[(cluster == c) & (objects == o)]
                    per_object.append(rows[rng.integers(0, len(rows), len(rows))].mean(axis=0))
                means.append(np.mean(per_object, axis=0))
            else:
                rows = values[cluster == c]
                means.append(rows[rng.integers(0, len(rows), len(rows))].mean(axis=0))
        out[i] = np.mean(means, axis=0)
    return out


@pytest.mark.parametrize("macro", [False, True])
def test_shared_draws_match_resampling_indices_and_pair_the_rows(macro):
    """Rows on the same items resampled together: each row's replicates have the textbook
    distribution, and A - B's replicates have that of resampling the same indices for both."""
    rng = np.random.default_rng(4)
    cluster = np.repeat([f"P{i}" for i in range(7)], [30, 5, 60, 12, 44, 8, 25])
    objects = rng.choice(list("abcde"), len(cluster))
    values = (rng.random((len(cluster), 2)) < [0.3, 0.6]).astype(float)
    values[:, 1] = np.where(rng.random(len(cluster)) < 0.7, values[:, 0], values[:, 1])  # correlated rows
    items, order = bootstrap.item_set(cluster, np.arange(len(cluster)), objects if macro else None)
    value, fast = bootstrap.shared_replicates(items, values[order], 20_000, np.random.default_rng(1), macro=macro)
    slow = _textbook(cluster, objects, values, 1500, np.random.default_rng(2), macro)
    expected = bootstrap.macro_interval(cluster, objects, values[:, 0], 10).value if macro else None
    if macro:
        assert value[0] == pytest.approx(expected)
    else:
        assert value[0] == pytest.approx(bootstrap.cluster_interval(cluster, values[:, 0], 10).value)
    for f, s in [
        (fast[:, 0], slow[:, 0]),
        (fast[:, 1], slow[:, 1]),
        (fast[:, 0] - fast[:, 1], slow[:, 0] - slow[:, 1]),
    ]:
        assert abs(f.std() / s.std() - 1) < 0.1
        assert abs(f.mean() - s.mean()) < 0.25 * s.std()


def test_shared_rows_give_the_same_numbers_whatever_else_the_table_holds():
    rng = np.random.default_rng(0)
    facts = pd.DataFrame(
        {
            "relation": np.repeat([f"P{i}" for i in range(6)], 40),
            "fact": np.tile(np.arange(40), 6).astype(str),
        }
    )
    rows = pd.concat([facts.assign(method=m, correct=rng.random(len(facts)) < 0.4) for m in "ABC"])
    settings = u.Settings(bootstrap=500)
    alone, _ = bootstrap.shared_interval_rows(
        rows[rows["method"] == "A"], ["method"], "relation", "fact", "correct", settings
    )
    every, shared = bootstrap.shared_interval_rows(rows, ["method"], "relation", "fact", "correct", settings)
    for column in ("value", "low", "high"):  # the same draws: equal up to the sums' rounding
        assert alone[column].iloc[0] == pytest.approx(every[column].iloc[0], rel=1e-12)
    groups = dict(tuple(rows.groupby(["method"])))
    summary, _ = paired.comparison_table(
        groups, [(("A",), ("A",))], lambda k: "", "relation", "fact", "correct", settings, shared=shared
    )
    assert (summary["difference"].iloc[0], summary["low"].iloc[0], summary["high"].iloc[0]) == (0, 0, 0)
    summary, _ = paired.comparison_table(
        groups, [(("A",), ("B",))], lambda k: "", "relation", "fact", "correct", settings, shared=shared
    )
    assert summary["low"].iloc[0] < summary["difference"].iloc[0] < summary["high"].iloc[0]
