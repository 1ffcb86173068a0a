"""knowprobe.uncertainty.consistency: ParaRel's consistency, by hand."""

import numpy as np
import pytest

from knowprobe.uncertainty import consistency


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
    kept = np.array([[not consistency.article_mismatch(t, o) for t in templates] for o in objects])
    assert kept.tolist() == [[True, True, False], [True, True, True], [True, True, False], [True, True, True]]
    right = answers == np.array(objects)[:, None]
    present = np.ones_like(kept)
    total, rows = consistency.consistency(["P19"] * 4, answers, right, kept, present, reading="per_subject")
    assert total.consistency == pytest.approx((1 + 2 / 6 + 1 + 2 / 6) / 4)
    assert total.consistent_accuracy == pytest.approx(2 / 4)
    assert total.all_agree == pytest.approx(2 / 4)
    assert (total.subjects, total.skipped, total.clusters) == (4, 2, 1)
    # ParaRel's code: the relation's pairs pooled (2 + 2 + 2 + 2 agreeing of 2 + 6 + 2 + 6), every
    # prompt for consistent accuracy (the first subject's skipped "an" prompt is wrong)
    total, rows = consistency.consistency(["P19"] * 4, answers, right, kept, present)
    assert total.consistency == pytest.approx(8 / 16) and rows["pairs"] == [16]
    assert total.consistent_accuracy == pytest.approx(1 / 4) and total.all_agree == pytest.approx(2 / 4)
    assert total.skipped == 2 and consistency.consistency(["P19"] * 4, answers, right, kept)[0].skipped == 2
    assert not consistency.article_mismatch("[X] is a [Y] .", "Paris") and consistency.article_mismatch(
        "[X] is a [Y] .", "Oslo"
    )
