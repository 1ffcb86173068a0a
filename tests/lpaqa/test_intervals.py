"""LPAQA's numbers with their uncertainty: the headline rows' intervals, paired comparisons,
paraphrase consistency from probe tables, calibration's pieces."""

import numpy as np
import pandas as pd
import pytest

from knowprobe import uncertainty
from knowprobe.lpaqa import calibration, consistency, intervals
from knowprobe.lpaqa.metrics import average_over_relations, p_at_1
from knowprobe.uncertainty.calibration import brier, calibration_intervals, ece

SETTINGS = uncertainty.Settings(bootstrap=500, seed=3)


def method_facts(seed=0, relations=6, facts=40):
    rng = np.random.default_rng(seed)
    frames = []
    for model, skill in [("big", 0.6), ("small", 0.3)]:
        for prompt_set, methods in [("manual", ["Top1"]), ("mine", ["Top1", "Top3", "Top5", "Opti", "Oracle"])]:
            for method in methods:
                frames.append(
                    pd.DataFrame(
                        {
                            "model": model,
                            "prompt_set": prompt_set,
                            "method": method,
                            "dataset": "trex",
                            "relation": np.repeat([f"P{i}" for i in range(relations)], facts),
                            "fact_id": [f"f{i}" for i in range(relations * facts)],
                            "obj_label": rng.choice(["a", "b", "c"], relations * facts),
                            "correct": rng.random(relations * facts) < skill + (method == "Oracle") * 0.3,
                        }
                    )
                )
    return pd.concat(frames, ignore_index=True)


def majority_of(frame):
    rows = frame[(frame["prompt_set"] == "manual")].drop(columns=["prompt_set", "method"])
    return rows.assign(correct=rows["obj_label"] == "a")


def test_the_rows_are_tables_2_and_3s_with_their_values():
    frame = method_facts()
    facts = intervals.headline_facts(frame, majority_of(frame), ["manual", "mine"])
    table = intervals.interval_table(facts, SETTINGS)
    assert list(table[table["model"] == "big"]["prompts"]) == ["Majority", "Man", *["Mine"] * 5]
    opti = frame[(frame["model"] == "big") & (frame["method"] == "Opti")]
    expected = average_over_relations(p_at_1(opti)).iloc[0]
    row = table[(table["model"] == "big") & (table["method"] == "Opti")].iloc[0]
    assert row["micro"] == pytest.approx(100 * expected["micro"]) and row["macro"] == pytest.approx(
        100 * expected["macro"]
    )
    assert row["micro_low"] < row["micro"] < row["micro_high"] and row["relations"] == 6 and row["facts"] == 240
    layout = intervals.layout(table)
    assert layout.columns.tolist() == ["model", "prompts", "method", "T-REx micro", "T-REx macro", "T-REx relations"]
    assert layout.iloc[0]["T-REx micro"].count("[") == 1
    # the same seed, the same numbers; another seed, others
    assert intervals.interval_table(facts, SETTINGS).equals(table)
    other = intervals.interval_table(facts, uncertainty.Settings(bootstrap=500, seed=4))
    assert not other["micro_low"].equals(table["micro_low"])


def test_default_comparisons_and_their_table():
    frame = method_facts()
    facts = intervals.headline_facts(frame, majority_of(frame), ["manual", "mine"])
    config = {"baseline": {"prompt_set": "manual", "method": "Top1"}, "methods": ["Top1", "Opti", "Oracle"]}
    pairs = intervals.default_comparisons(facts, {**config, "model_pairs": None}, ["big", "small"])
    assert pairs[:3] == [
        (("big", "Mine", "Opti"), ("big", "Man", "Top1")),
        (("big", "Mine", "Oracle"), ("big", "Man", "Top1")),
        (("big", "Mine", "Top1"), ("big", "Man", "Top1")),
    ]
    assert pairs[-1] == (("big", "Man", "Top1"), ("small", "Man", "Top1"))
    summary, tests = intervals.comparisons(facts, pairs, SETTINGS)
    models = summary[summary["B"] == "small Man Top1"].iloc[0]
    assert models["A better"] + models["no difference"] + models["B better"] == 6 == models["relations"]
    assert models["low"] < models["difference"] < models["high"]
    assert set(tests["verdict"]) <= {"A better", "no difference", "B better"}
    layout = intervals.comparison_layout(summary)
    assert layout.columns.tolist() == [
        "A",
        "B",
        "dataset",
        "A - B (points)",
        "relations",
        "A better",
        "no difference",
        "B better",
    ]
    table = intervals.interval_table(facts, SETTINGS)
    line = intervals.headlines(table)[0]
    assert line.startswith("big: manual prompts ") and "best Top-1" in line and "6 relations" in line
    # issue 55: a run of the manual prompts alone still heads the report, without a best set
    manual_only = intervals.headlines(table[table["prompts"].isin(["Majority", "Man"])])
    assert manual_only and manual_only[0].startswith("big: manual prompts ") and "best Top-1" not in manual_only[0]
    # issue 53: the runs of the models given first (pretrained) lead, every score of theirs shown; the
    # other runs of a score other than the mask are counted
    runs = table.assign(model=table["model"].map({"big": "big", "small": "real@next_token"}))
    mixed = pd.concat([runs, runs[runs["model"] == "big"].assign(model="big@statement")])
    lines = intervals.headlines(mixed, first=["real"])
    assert [line.split(":")[0] for line in lines] == ["real@next_token", "big"]
    assert lines[-1].endswith("; 1 more runs (other scores) in the table")
    assert [line.split(":")[0] for line in intervals.headlines(mixed)] == ["big"]


def test_default_model_pairs_compare_runs_of_one_score():
    """Issue 52: every run has headline rows; by default each run's baseline is compared with the
    next run's of the same score only (another score ranks another candidate set)."""
    frame = method_facts()
    frame = pd.concat(
        [
            frame.assign(model=frame["model"].map({"big": run, "small": other}))
            for run, other in [("big", "small"), ("big@statement", "small@statement")]
        ],
        ignore_index=True,
    )
    facts = intervals.headline_facts(frame, majority_of(frame), ["manual", "mine"])
    config = {"baseline": {"prompt_set": "manual", "method": "Top1"}, "methods": ["Top1"], "model_pairs": None}
    scores = {"big": "mask", "big@statement": "statement", "small": "mask", "small@statement": "statement"}
    order = ["big", "big@statement", "small", "small@statement"]
    across = [(a[0], b[0]) for a, b in intervals.default_comparisons(facts, config, order, scores) if a[0] != b[0]]
    assert across == [("big", "small"), ("big@statement", "small@statement")]
    # without scores, each run against the next, as before
    across = [(a[0], b[0]) for a, b in intervals.default_comparisons(facts, config, order) if a[0] != b[0]]
    assert across == list(zip(order, order[1:]))
    assert set(facts["model"]) == set(order)


def probe_table():
    """3 prompts x 4 subjects of one relation, the hand-worked example of tests/uncertainty/test_consistency.py."""
    templates = ["[X] was born in [Y] .", "[X] is a native of [Y] .", "[X] is an [Y] ."]
    objects = ["Paris", "Oslo", "Rome", "Athens"]
    answers = [
        ["Paris", "Paris", "Lyon"],
        ["Oslo", "Bergen", "Oslo"],
        ["Rome", "Rome", "Rome"],
        ["Sparta", "Athens", "Athens"],
    ]
    rows = []
    for p, template in enumerate(templates):
        for f, obj in enumerate(objects):
            rows.append(
                {
                    "relation": "P19",
                    "fact_id": f"f{f}",
                    "sub_label": f"s{f}",
                    "obj_label": obj,
                    "obj_token_id": f,
                    "prompt_id": p,
                    "template": template,
                    "source": "manual",
                    "rank": p,
                    "prediction": answers[f][p],
                    "gold_rank": 0 if answers[f][p] == obj else 1,
                }
            )
    return pd.DataFrame(rows)


def test_consistency_of_a_probe_table_by_hand():
    total, per = consistency.prompt_set_consistency(probe_table(), reading="per_subject")
    assert total.consistency == pytest.approx((1 + 2 / 6 + 1 + 2 / 6) / 4)
    assert total.consistent_accuracy == pytest.approx(0.5) and total.all_agree == pytest.approx(0.5)
    assert (total.skipped, total.subjects, total.clusters) == (2, 4, 1)
    # without the article rule the "an" prompt counts for every subject
    plain, _ = consistency.prompt_set_consistency(probe_table(), article_rule=False, reading="per_subject")
    assert plain.consistency == pytest.approx((2 / 6 + 2 / 6 + 1 + 2 / 6) / 4) and plain.skipped == 0
    # ParaRel's code (the default): pairs pooled, every prompt for consistent accuracy
    pooled, _ = consistency.prompt_set_consistency(probe_table())
    assert pooled.consistency == pytest.approx(8 / 16) and pooled.consistent_accuracy == pytest.approx(1 / 4)
    assert pooled.reading == "pararel" and pooled.skipped == 2
    assert per["relation"].tolist() == ["P19"]


def test_calibration_intervals_recompute_each_measure_from_the_drawn_facts():
    """The table's values with intervals around them; ECE's from the reliability bins' definition."""
    rng = np.random.default_rng(0)
    collected = calibration.Collected()
    for r in range(6):
        scores = rng.normal(size=(30, 5)) * 2
        collected.add(scores, rng.integers(0, 5, 30), relation=f"P{r}")
    plain, _ = collected.summary(10)
    summary, _ = collected.summary(10, uncertainty.Settings(bootstrap=500), ("run",))
    for measure in calibration.MEASURES:
        assert summary[measure] == pytest.approx(plain[measure])
        assert summary[f"{measure}_low"] <= summary[measure] <= summary[f"{measure}_high"], measure
    confidence, right = np.concatenate(collected.confidence), np.concatenate(collected.right)
    found = calibration_intervals(
        np.concatenate(collected.relations), confidence, right, np.concatenate(collected.brier), 10, 50
    )
    assert found["ece"].value == pytest.approx(ece(confidence, right, 10))


def test_calibration_pieces():
    collected = calibration.Collected()
    scores = np.log(np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]]))
    collected.add(scores, np.array([0, 1]))
    summary, bins = collected.summary(10)
    assert summary["accuracy"] == 50 and summary["confidence"] == pytest.approx(75)
    assert summary["ece"] == pytest.approx(100 * (abs(1 - 0.7) + abs(0 - 0.8)) / 2)
    assert summary["brier"] == pytest.approx(brier(np.exp(scores), np.array([0, 1])))
    prompts = pd.DataFrame({"dataset": "trex", "relation": "P1", "train_rank": [2, 0, 1]})
    assert calibration.top1_prompt(prompts, "trex", "P1") == 1
