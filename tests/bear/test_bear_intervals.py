"""BEAR's intervals: the BEAR score and each template's accuracy with a two-stage cluster bootstrap
interval over relations (then instances), against a plain reimplementation; paired comparisons."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from knowprobe import uncertainty
from knowprobe.bear import intervals, metrics


def predicted(seed=0, relations=8):
    """Two models on ``relations`` relations of 5 to 40 instances, three templates each."""
    rng = np.random.default_rng(seed)
    rows = []
    sizes = rng.integers(5, 41, relations)
    ease = rng.random(relations)
    for model, shift in [("big", 0.15), ("small", 0.0)]:
        for r, size in enumerate(sizes):
            for template in range(3):
                right = rng.random(size) < np.clip(ease[r] + shift - 0.1 * template, 0, 1)
                for instance in range(size):
                    rows.append(
                        {
                            "model": model,
                            "relation": f"P{r}",
                            "template": template,
                            "instance": f"Q{r}-{instance}",
                            "correct": bool(right[instance]),
                        }
                    )
    return pd.DataFrame(rows)


def plain_bootstrap(predicted: pd.DataFrame, model: str, b: int, rng) -> np.ndarray:
    """The textbook way: per replicate, draw relations with replacement, then each drawn relation's
    instances (with all their templates) by index, and recompute the mean of the templates' micro
    accuracies over every drawn (instance, template)."""
    part = predicted[predicted["model"] == model]
    per_relation = [
        group.pivot_table(index="instance", columns="template", values="correct").to_numpy(float)
        for _, group in part.groupby("relation")
    ]
    out = np.empty(b)
    for i in range(b):
        drawn = [per_relation[c] for c in rng.integers(0, len(per_relation), len(per_relation))]
        resampled = np.concatenate([m[rng.integers(0, len(m), len(m))] for m in drawn])
        out[i] = resampled.mean(axis=0).mean()  # each template's micro accuracy, then their mean
    return out


def test_the_bear_score_is_the_mean_of_the_templates_micro_accuracies_with_the_plain_bootstraps_interval():
    frame = predicted()
    table = intervals.interval_table(intervals.items(frame), uncertainty.Settings(bootstrap=4000, seed=3))
    per_template = metrics.micro(metrics.by_relation(frame), ["model", "template"])
    summary = metrics.over_templates(per_template, ["model"], 1).set_index("model")
    for model in ("big", "small"):
        rows = table[table["model"] == model].set_index("measure")
        score = rows.loc[intervals.SCORE]
        assert score.accuracy == pytest.approx(summary.loc[model, "mean"])
        assert score["sem"] == pytest.approx(summary.loc[model, "sem"]) and score.templates == 3
        for template in range(3):
            expected = per_template[(per_template["model"] == model) & (per_template["template"] == template)]
            assert rows.loc[f"template {template + 1}", "accuracy"] == pytest.approx(expected["accuracy"].iloc[0])
        assert (score.relations, score.instances) == (8, len(frame) // 6)
        plain = 100 * plain_bootstrap(frame, model, 4000, np.random.default_rng(1))
        low, high = np.percentile(plain, [2.5, 97.5])
        # two independent Monte Carlo runs of the same distribution: bounds within a point
        assert score.low == pytest.approx(low, abs=1.0) and score.high == pytest.approx(high, abs=1.0)
        assert score.low < score.accuracy < score.high


def test_too_few_relations_say_so_and_the_headline_carries_interval_and_sem():
    table = intervals.interval_table(intervals.items(predicted(relations=4)), uncertainty.Settings(bootstrap=200))
    assert table["low"].isna().all() and (table["note"] == "4 clusters: fewer than 5").all()
    line = intervals.headlines(table.assign(note=table["note"].fillna("")))[0]
    assert line.startswith("big: BEAR score ") and "4 relations, too few for an interval" in line
    assert "sem over 3 templates" in line
    table = intervals.interval_table(intervals.items(predicted()), uncertainty.Settings(bootstrap=200))
    assert "8 relations, 95% interval;" in intervals.headlines(table.fillna({"note": ""}))[0]
    assert list(intervals.layout(table)["measure"][:4]) == ["BEAR score", "template 1", "template 2", "template 3"]


def test_identical_numbers_for_identical_seeds():
    frame = intervals.items(predicted())
    first = intervals.interval_table(frame, uncertainty.Settings(bootstrap=300, seed=7))
    again = intervals.interval_table(frame, uncertainty.Settings(bootstrap=300, seed=7))
    other = intervals.interval_table(frame, uncertainty.Settings(bootstrap=300, seed=8))
    pd.testing.assert_frame_equal(first, again)
    assert not np.allclose(first["low"], other["low"])


def test_each_model_against_the_next_and_a_model_against_itself_is_zero():
    frame = intervals.items(predicted())
    assert intervals.default_comparisons({"model_pairs": None}, ["big", "small"]) == [("big", "small")]
    assert intervals.default_comparisons({"model_pairs": [["small", "big"], ["x", "big"]]}, ["big", "small"]) == [
        ("small", "big")
    ]
    settings = uncertainty.Settings(bootstrap=500)
    summary, tests = intervals.comparisons(frame, [("big", "small"), ("big", "big")], settings)
    assert list(summary["measure"][:4]) == ["BEAR score", "template 1", "template 2", "template 3"]
    table = intervals.interval_table(frame, settings).set_index(["model", "measure"])
    for row in summary[summary["B"] == "small"].itertuples():
        expected = table.loc[("big", row.measure), "accuracy"] - table.loc[("small", row.measure), "accuracy"]
        assert row.difference == pytest.approx(expected) and row.low <= row.difference <= row.high
    score = summary.iloc[0]
    assert pd.isna(score["A better"]) and score["note"] == "McNemar's tests per template"
    templates = summary[(summary["B"] == "small") & (summary["measure"] != intervals.SCORE)]
    assert (templates[["A better", "no difference", "B better"]].sum(axis=1) == 8).all()
    assert len(tests[tests["B"] == "small"]) == 3 * 8
    itself = summary[summary["B"] == "big"]
    assert (itself[["difference", "low", "high"]] == 0).all().all()
    assert (itself.loc[itself["measure"] != intervals.SCORE, "no difference"] == 8).all()
    layout = intervals.comparison_layout(summary)
    assert layout.loc[0, "A better"] == "–" and layout.loc[1, "A better"].isdigit()


def test_the_figure_draws_a_bar_per_measure_with_its_bounds():
    table = intervals.interval_table(intervals.items(predicted()), uncertainty.Settings(bootstrap=200))
    models, values, errors = intervals.figure_bars(table)
    assert models == ["big", "small"] and list(values) == ["BEAR score", "template 1", "template 2", "template 3"]
    big = table[(table["model"] == "big") & (table["measure"] == "BEAR score")].iloc[0]
    assert values["BEAR score"][0] == big.accuracy and errors["BEAR score"][0][0] == big.low
