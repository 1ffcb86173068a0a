"""The float32 recheck of decisions near a tie (knowprobe.scoring.recheck), every study's: on
groups of candidates scored with a known error, against float32's own decisions."""

from __future__ import annotations

import numpy as np
import pytest

from knowprobe.scoring.recheck import RECHECK_MIN_SAMPLE, decide, even_sample, recheck_groups


def noisy_groups(groups: int, noise: float, seed: int = 0):
    """Groups of 2 to 40 candidates whose float32 scores lie close (random-weight models' way) and
    their low-precision scores, each moved by up to ``noise``."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 41, groups)
    ids = np.repeat(np.arange(groups), sizes)
    rng.shuffle(ids)  # a group's candidates need not lie together
    exact = -20 + rng.normal(0, 0.5, len(ids))
    low = exact + rng.uniform(-noise, noise, len(ids))
    return ids, exact, low


def best_of(scores, ids):
    return {g: decide(scores[ids == g], "best") for g in np.unique(ids)}


def test_even_sample_is_evenly_spaced_with_a_floor():
    assert even_sample(100, 0.02).tolist() == list(range(100))  # fewer than the floor: all
    sample = even_sample(100_000, 0.02)
    assert len(sample) == 2_000 and sample[0] == 0 and sample[-1] == 99_999 and np.all(np.diff(sample) >= 49)
    assert len(even_sample(1_000, 0.02)) == RECHECK_MIN_SAMPLE and len(even_sample(0, 0.02)) == 0


def test_recheck_gives_float32s_best_of_every_group():
    ids, exact, low = noisy_groups(3_000, noise=0.02)
    assert best_of(low, ids) != best_of(exact, ids)  # the low precision moved some decisions
    asked = []

    def rescore(positions):
        assert np.all(np.diff(positions) > 0)  # sorted, each once
        asked.append(positions)
        return exact[positions]

    checked, report = recheck_groups(low, ids, rescore, share=0.02, factor=4)
    assert best_of(checked, ids) == best_of(exact, ids)
    assert report.groups == 3_000 and report.sample == RECHECK_MIN_SAMPLE
    assert 0.02 < report.error <= 0.04 and report.bound == 4 * report.error and not report.bound_too_tight
    changed = sum(a != b for a, b in zip(best_of(low, ids).values(), best_of(exact, ids).values()))
    assert report.changed_sample + report.changed_near == changed
    rescored = np.concatenate(asked)
    assert len(set(rescored)) == len(rescored) == report.rescored < len(low)  # far from all of them
    kept = np.setdiff1d(np.arange(len(low)), rescored)
    assert np.array_equal(checked[kept], low[kept]) and np.array_equal(checked[rescored], exact[rescored])
    # the sampled groups were rescored whole, the near ones only within the bound of their best
    sampled = np.unique(ids[asked[0]])
    assert len(sampled) == report.sample and sum((ids == g).sum() for g in sampled) == len(asked[0])
    near = ids[asked[1]]
    for g in np.unique(near):
        values = low[ids == g]
        assert (near == g).sum() == (values >= values.max() - report.bound).sum() >= 2
    assert "float32 recheck: 256 of 3,000 groups sampled" in report.describe()


def test_pairs_decide_by_the_first_strictly_above_the_other():
    """COMPS's decision: the acceptable sentence (a pair's first) strictly above the unacceptable
    one; a tie is not."""
    assert decide(np.array([1.0, 0.5]), "first_above_rest") is True
    assert decide(np.array([0.5, 0.5]), "first_above_rest") is False
    assert decide(np.array([0.5, 0.5]), "best") == 0  # the best, ties to the first
    assert decide(np.array([0.1, 0.5, 0.5]), "best") == 1
    with pytest.raises(ValueError, match="one of best, first_above_rest"):
        recheck_groups(np.zeros(2), np.zeros(2), lambda p: p, 0.02, 4, decision="most")


def test_scores_that_are_not_finite_take_no_part():
    low = np.array([1.0, np.nan, 0.5, -1.0, 0.01, 2.0, np.nan, 3.0])
    ids = np.array([0, 0, 1, 1, 2, 2, 3, 3])  # group 0 and 3: one finite score each, no decision
    asked = []

    def rescore(positions):
        asked.extend(positions.tolist())
        return low[positions] + np.where(positions % 2 == 0, 0.001, 0.0)

    checked, report = recheck_groups(low, ids, rescore, share=0.02, factor=4, decision="first_above_rest")
    assert report.groups == 2 and sorted(asked) == [2, 3, 4, 5] and np.isfinite(report.error)
    assert np.isnan(checked[1]) and np.isnan(checked[6]) and checked[0] == 1.0 and checked[7] == 3.0


def test_a_bound_too_tight_for_the_near_groups_is_flagged():
    ids, exact, low = noisy_groups(2_000, noise=0.001)
    groups = np.unique(ids)
    sample = set(groups[even_sample(len(groups), 0.02)].tolist())
    # a few groups outside the sample moved far more than any sampled one
    for g in [g for g in groups if g not in sample][:5]:
        first, second = np.flatnonzero(ids == g)[:2]
        low[first], low[second] = -15.0, -15.0005  # the group's two best, near a tie
        exact[first], exact[second] = -15.05, -15.0
    _, report = recheck_groups(low, ids, lambda p: exact[p], share=0.02, factor=4)
    assert report.changed_near >= 5 and report.bound_too_tight
