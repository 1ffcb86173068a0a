import pandas as pd
import pytest

from knowprobe.lpaqa import lama, metrics


@pytest.fixture
def judged():
    # R1: object A three times (right, right, wrong), object B once (wrong); R2: object C once (right)
    return pd.DataFrame(
        {
            "relation": ["R1", "R1", "R1", "R1", "R2"],
            "obj_label": ["A", "A", "A", "B", "C"],
            "correct": [True, True, False, False, True],
        }
    )


def test_micro_and_macro_per_relation(judged):
    result = metrics.p_at_1(judged).set_index("relation")
    assert result.loc["R1", "micro"] == pytest.approx(2 / 4)
    assert result.loc["R1", "macro"] == pytest.approx((2 / 3 + 0) / 2)
    assert result.loc["R2", ["micro", "macro"]].tolist() == [1.0, 1.0]
    assert result.loc["R1", ["n_facts", "n_objects"]].tolist() == [4, 2]


def test_averages_weigh_relations_equally(judged):
    overall = metrics.average_over_relations(metrics.p_at_1(judged)).iloc[0]
    assert overall["micro"] == pytest.approx((0.5 + 1.0) / 2)  # not 3/5, the share over all facts
    assert overall["macro"] == pytest.approx((1 / 3 + 1.0) / 2)
    assert (overall["n_relations"], overall["n_facts"]) == (2, 5)


def test_majority_baseline(judged):
    facts = judged.drop(columns="correct")
    result = metrics.majority(facts, lama.majority_objects(facts)).set_index("relation")
    assert result.loc["R1", "micro"] == pytest.approx(3 / 4)
    assert result.loc["R1", "macro"] == pytest.approx(1 / 2)  # A always right, B never
    assert result.loc["R2", "micro"] == 1.0


def test_majority_ties_break_by_label():
    facts = pd.DataFrame({"relation": ["R"] * 4, "obj_label": ["B", "A", "B", "A"]})
    assert lama.majority_objects(facts) == {"R": "A"}
    assert metrics.majority(facts, lama.majority_objects(facts))["micro"].iloc[0] == 0.5


def test_a_drawn_runs_majority_predicts_the_object_chosen_before_the_draw():
    """lpaqa.probe.sample: the Majority baseline of a run asked a draw of a relation's facts
    predicts the relation's most frequent object among all the facts the run could be asked (its
    filter's majority.json), scored on the drawn ones; chosen on a draw of one fact a relation, it
    was that fact's object, 100% (the demo's SmolLM2 statement run showed "Majority 100.0")."""
    every = pd.DataFrame({"relation": ["R"] * 5 + ["S"] * 2, "obj_label": ["A", "A", "A", "B", "C", "D", "E"]})
    objects = lama.majority_objects(every)
    assert objects == {"R": "A", "S": "D"}  # S: a tie, first by label
    drawn = every.iloc[[3, 6]]  # one fact a relation: B of R, E of S
    assert metrics.majority(drawn, lama.majority_objects(drawn))["micro"].tolist() == [1.0, 1.0]  # chosen on the draw
    assert metrics.majority(drawn, objects)["micro"].tolist() == [0.0, 0.0]
    # the filter writes the objects before the draw (lama.sample_run's), the Majority rule reads them
    kept = every.assign(fact_id=[f"f{i}" for i in range(7)])
    before = lama.majority_objects(kept)
    drawn, _ = lama.sample_run(kept, pd.DataFrame(columns=["relation", "reason", "description", "n"]), 1)
    assert before == objects and len(drawn) == 2


def test_probe_correctness_is_rank_zero():
    probe = pd.DataFrame(
        {
            "relation": ["R", "R", "R"],
            "obj_label": ["A", "B", "A"],
            "gold_rank": [0, 3, 1],
            "prompt_id": [0, 0, 0],
            "template": ["[X] [Y]"] * 3,
        }
    )
    result = metrics.per_prompt_p_at_1(probe)
    assert result[["micro", "macro"]].values.tolist() == [[pytest.approx(1 / 3), pytest.approx(0.25)]]
