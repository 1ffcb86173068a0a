"""The shared uncertainty layer (knowprobe.uncertainty): cluster bootstrap, paired comparisons,
McNemar and Holm, ParaRel's consistency, calibration."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from knowprobe import uncertainty as u
from knowprobe.lpaqa.metrics import average_over_relations, p_at_1


def test_one_cluster_of_iid_items_gives_the_binomial_standard_error():
    rng = np.random.default_rng(1)
    n, p = 2000, 0.3
    values = rng.random(n) < p
    draws = u.replicates(u.clusters_of(np.zeros(n, int), values), 20_000, np.random.default_rng(2))
    observed = values.mean()
    expected = np.sqrt(observed * (1 - observed) / n)
    assert abs(draws.std() / expected - 1) < 0.02
    assert abs(draws.mean() - observed) < 0.002


def test_the_draws_match_resampling_indices():
    """Drawing level counts is the same distribution as drawing items with replacement."""
    rng = np.random.default_rng(0)
    cluster = np.repeat(np.arange(6), [5, 40, 12, 80, 3, 30])
    values = rng.integers(-1, 2, len(cluster)).astype(float)
    fast = u.replicates(u.clusters_of(cluster, values), 20_000, np.random.default_rng(1))
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
    micro = u.cluster_interval(frame["relation"], frame["correct"], 2000, np.random.default_rng(0))
    macro = u.macro_interval(frame["relation"], frame["obj_label"], frame["correct"], 2000, np.random.default_rng(0))
    assert micro.value == pytest.approx(table["micro"]) and macro.value == pytest.approx(table["macro"])
    assert micro.low < micro.value < micro.high and macro.low < macro.value < macro.high
    assert (micro.clusters, micro.items) == (8, 400)


def test_fewer_than_five_clusters_gives_no_interval():
    interval = u.cluster_interval(np.repeat([1, 2, 3, 4], 10), np.ones(40), 100)
    assert np.isnan(interval.low) and interval.value == 1.0
    assert interval.cell(100) == "100.0 (4 clusters: fewer than 5)"


def test_identical_seeds_give_identical_numbers():
    cluster, values = np.repeat(np.arange(10), 20), np.arange(200) % 3 == 0
    first = u.cluster_interval(cluster, values, 500, u.stream(7, "model", "Man"))
    again = u.cluster_interval(cluster, values, 500, u.stream(7, "model", "Man"))
    other = u.cluster_interval(cluster, values, 500, u.stream(8, "model", "Man"))
    assert first == again and first != other


def test_a_model_against_itself_is_zero():
    rng = np.random.default_rng(0)
    cluster, right = np.repeat(np.arange(12), 30), rng.random(360) < 0.5
    interval = u.paired_interval(cluster, right, right, 1000, rng)
    assert (interval.value, interval.low, interval.high) == (0.0, 0.0, 0.0)
    verdicts = u.mcnemar_per_cluster(cluster, right, right)["verdict"]
    assert set(verdicts) == {"no difference"}


def test_mcnemar_is_the_binomial_tail():
    # A right and B wrong on 9 facts, the reverse on 2: 2 P(X <= 2), X ~ Bin(11, 1/2)
    tail = sum(stats.binom.pmf(k, 11, 0.5) for k in range(3))
    assert u.mcnemar_exact(9, 2) == pytest.approx(2 * tail) == pytest.approx(134 / 2048)
    assert u.mcnemar_exact(0, 0) == 1.0 and u.mcnemar_exact(3, 3) == 1.0
    a = np.array([1] * 9 + [0] * 2 + [1] * 5, bool)
    b = np.array([0] * 9 + [1] * 2 + [1] * 5, bool)
    table = u.mcnemar_per_cluster(np.zeros(16), a, b)
    assert (table["b"][0], table["c"][0]) == (9, 2) and table["p"][0] == pytest.approx(134 / 2048)


def test_holm():
    assert u.holm([0.01, 0.04, 0.03, 0.5]) == pytest.approx([0.04, 0.09, 0.09, 0.5])


def test_consistency_by_hand():
    """3 prompts x 4 subjects; the "an [Y]" prompt is skipped for objects starting otherwise."""
    templates = ["[X] was born in [Y] .", "[X] is a native of [Y] .", "[X] is an [Y] ."]
    objects = ["Paris", "Oslo", "Rome", "Athens"]
    answers = np.array(
        [
            ["Paris", "Paris", "Lyon"],  # an-prompt skipped: 2 kept, agree, both right
            ["Oslo", "Bergen", "Oslo"],  # an-prompt kept (Oslo): 6 ordered pairs, 2 agree
            ["Rome", "Rome", "Rome"],  # skipped: agree, right
            ["Sparta", "Athens", "Athens"],  # kept (Athens): 2 of 6 agree
        ]
    )
    kept = np.array([[not u.article_mismatch(t, o) for t in templates] for o in objects])
    assert kept.tolist() == [[True, True, False], [True, True, True], [True, True, False], [True, True, True]]
    right = answers == np.array(objects)[:, None]
    present = np.ones_like(kept)
    total, rows = u.consistency(["P19"] * 4, answers, right, kept, present, reading="per_subject")
    assert total.consistency == pytest.approx((1 + 2 / 6 + 1 + 2 / 6) / 4)
    assert total.consistent_accuracy == pytest.approx(2 / 4)
    assert total.all_agree == pytest.approx(2 / 4)
    assert (total.subjects, total.skipped, total.clusters) == (4, 2, 1)
    # ParaRel's code: the relation's pairs pooled (2 + 2 + 2 + 2 agreeing of 2 + 6 + 2 + 6), every
    # prompt for consistent accuracy (the first subject's skipped "an" prompt is wrong)
    total, rows = u.consistency(["P19"] * 4, answers, right, kept, present)
    assert total.consistency == pytest.approx(8 / 16) and rows["pairs"] == [16]
    assert total.consistent_accuracy == pytest.approx(1 / 4) and total.all_agree == pytest.approx(2 / 4)
    assert total.skipped == 2 and u.consistency(["P19"] * 4, answers, right, kept)[0].skipped == 2
    assert not u.article_mismatch("[X] is a [Y] .", "Paris") and u.article_mismatch("[X] is a [Y] .", "Oslo")


def test_ece_and_brier_by_hand():
    confidence = np.array([0.95, 0.92, 0.55, 0.52, 0.58, 0.15])
    right = np.array([1, 0, 1, 1, 0, 0], bool)
    # bins [0.9, 1]: conf 0.935, acc 0.5; [0.5, 0.6): conf 0.55, acc 2/3; [0.1, 0.2): conf .15, acc 0
    expected = (2 * abs(0.5 - 0.935) + 3 * abs(2 / 3 - 0.55) + 1 * 0.15) / 6
    assert u.ece(confidence, right) == pytest.approx(expected)
    p = np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]])
    assert u.brier(p, np.array([0, 1])) == pytest.approx(((0.09 + 0.04 + 0.01) + (0.01 + 0.81 + 0.64)) / 2)
    assert u.prior_kl(p, np.array([0, 0])) == pytest.approx(np.log(1 / 0.4))


def test_a_confidence_on_a_bin_edge_belongs_to_the_bin_it_closes():
    """Guo et al.'s bins are ((m - 1)/M, m/M]: 0.5 is in (0.4, 0.5], 0.3 in (0.2, 0.3], 0 in the first."""
    table = u.reliability(np.array([0.5, 0.3, 0.0, 1.0, 0.55]), np.array([1, 0, 0, 1, 0], bool), bins=10)
    assert table["n"].tolist() == [1, 0, 1, 0, 1, 1, 0, 0, 0, 1]
    # 0.5 (right) alone in its bin: gap 0.5; with half-open [a, b) bins it would share 0.55's (wrong)
    expected = (abs(1 - 0.5) + abs(0 - 0.3) + 0 + 0 + abs(0 - 0.55)) / 5
    assert u.ece([0.5, 0.3, 0.0, 1.0, 0.55], [1, 0, 0, 1, 0]) == pytest.approx(expected)


def test_temperature_scaling_recovers_a_known_temperature():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(4000, 6)) * 3
    gold = np.array([rng.choice(6, p=row) for row in u.softmax(logits, 2.0)])
    assert u.fit_temperature(logits, gold) == pytest.approx(2.0, rel=0.1)


def test_macro_draws_match_resampling_objects_then_facts():
    """The class draws (exact and, for relations with many classes, normal) against the plain
    three-stage resampling of indices."""
    rng = np.random.default_rng(0)
    sizes = [40, 300, 25, 120, 60, 200]
    cluster = np.repeat(np.arange(6), sizes)
    objects = np.concatenate([rng.integers(0, k, n) for n, k in zip(sizes, [3, 90, 2, 40, 5, 70])])
    right = rng.random(len(cluster)) < 0.45
    value, fast, _ = u.macro_replicates(cluster, objects, right, 20_000, np.random.default_rng(1))
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
    groups = u.clusters_of(cluster, values)
    assert len(np.unique(np.concatenate([groups.levels, groups.counts], axis=1), axis=0)) <= 200  # classes used
    for pooled in (False, True):
        by_class = u.replicates(groups, 20_000, np.random.default_rng(1), pooled)
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
    cluster = np.repeat(np.arange(u.NORMAL_CLUSTERS + 100), rng.integers(2, 30, u.NORMAL_CLUSTERS + 100))
    values = rng.integers(-1, 2, len(cluster)).astype(float) * (rng.random(len(cluster)) < 0.5)
    groups = u.clusters_of(cluster, values)
    for pooled in (False, True):
        normal = u.replicates(groups, 20_000, np.random.default_rng(1), pooled)
        with monkeypatch.context() as patch:
            patch.setattr(u, "NORMAL_CLUSTERS", 10**9)
            exact = u.replicates(groups, 20_000, np.random.default_rng(1), pooled)
        assert not np.array_equal(normal, exact)  # the two paths draw differently
        assert abs(normal.std() / exact.std() - 1) < 0.03
        assert abs(normal.mean() - exact.mean()) < 0.1 * exact.std()
        low, high = np.percentile(normal, [2.5, 97.5]) - np.percentile(exact, [2.5, 97.5])
        assert abs(low) < 0.1 * exact.std() and abs(high) < 0.1 * exact.std()


def test_mcnemar_per_cluster_is_each_clusters_exact_test():
    rng = np.random.default_rng(2)
    cluster = rng.integers(0, 30, 900)
    a, b = rng.random(900) < 0.5, rng.random(900) < 0.45
    table = u.mcnemar_per_cluster(cluster, a, b)
    expected = [u.mcnemar_exact(int(x), int(y)) for x, y in zip(table["b"], table["c"])]
    assert table["p"].tolist() == expected
    assert u.mcnemar_per_cluster(np.zeros(0), np.zeros(0, bool), np.zeros(0, bool))["p"].shape == (0,)


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
    items, order = u.item_set(cluster, np.arange(len(cluster)), objects if macro else None)
    value, fast = u.shared_replicates(items, values[order], 20_000, np.random.default_rng(1), macro=macro)
    slow = _textbook(cluster, objects, values, 1500, np.random.default_rng(2), macro)
    expected = u.macro_interval(cluster, objects, values[:, 0], 10).value if macro else None
    if macro:
        assert value[0] == pytest.approx(expected)
    else:
        assert value[0] == pytest.approx(u.cluster_interval(cluster, values[:, 0], 10).value)
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
    alone, _ = u.shared_interval_rows(rows[rows["method"] == "A"], ["method"], "relation", "fact", "correct", settings)
    every, shared = u.shared_interval_rows(rows, ["method"], "relation", "fact", "correct", settings)
    for column in ("value", "low", "high"):  # the same draws: equal up to the sums' rounding
        assert alone[column].iloc[0] == pytest.approx(every[column].iloc[0], rel=1e-12)
    groups = dict(tuple(rows.groupby(["method"])))
    summary, _ = u.comparison_table(
        groups, [(("A",), ("A",))], lambda k: "", "relation", "fact", "correct", settings, shared=shared
    )
    assert (summary["difference"].iloc[0], summary["low"].iloc[0], summary["high"].iloc[0]) == (0, 0, 0)
    summary, _ = u.comparison_table(
        groups, [(("A",), ("B",))], lambda k: "", "relation", "fact", "correct", settings, shared=shared
    )
    assert summary["low"].iloc[0] < summary["difference"].iloc[0] < summary["high"].iloc[0]
