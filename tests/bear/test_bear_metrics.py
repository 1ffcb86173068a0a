"""BEAR's measures against lm-pub-quiz 0.3.3's own code on the same scores: each relation's
accuracy (ties to the first answer), the micro accuracy, the domains' accumulation; the mean and
standard error over templates; the random baseline."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from knowprobe.bear import metrics

DOMAINS = {"P1": ["Arts"], "P2": ["Arts", "Geographic"], "P3": ["Geographic", "Political", "Arts"]}
SIZES = {"P1": 4, "P2": 7, "P3": 3}  # answers per relation
COUNTS = {"P1": 9, "P2": 25, "P3": 14}  # instances


def synthetic(seed: int = 0, templates: int = 3):
    """Scores on a coarse grid (many ties) for three relations, and their instances."""
    rng = np.random.default_rng(seed)
    rows, facts = [], []
    for relation, n in COUNTS.items():
        for instance in range(n):
            facts.append({"relation": relation, "instance": instance, "answer_idx": int(rng.integers(SIZES[relation]))})
            for template in range(templates):
                for candidate in range(SIZES[relation]):
                    score = float(rng.integers(-3, 0))
                    rows.append(("m", relation, template, instance, candidate, score))
    scores = pd.DataFrame(rows, columns=["model", "relation", "template", "instance", "candidate", "score"])
    return scores, pd.DataFrame(facts)


def lm_pub_quiz_results(scores, instances, template):
    """lm-pub-quiz's DatasetResults of one template's scores (reduction sum, as lm-pub-quiz keeps them)."""
    results = pytest.importorskip("lm_pub_quiz.data.results")
    relations = []
    for relation, part in scores[scores["template"] == template].groupby("relation", sort=False):
        table = (
            part.sort_values(["instance", "candidate"]).groupby("instance")["score"].apply(list).to_frame("pll_scores")
        )
        table["answer_idx"] = instances[instances["relation"] == relation].set_index("instance")["answer_idx"]
        relations.append(
            results.RelationResult(
                relation,
                metadata={"reduction": "sum", "template_index": template},
                instance_table=table.reset_index(drop=True),
                relation_info={"domains": DOMAINS[relation]},
            )
        )
    return results.DatasetResults(relations)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_accuracies_equal_lm_pub_quiz(seed):
    scores, instances = synthetic(seed)
    predicted = metrics.predictions(scores, instances, "first")
    per_relation = metrics.by_relation(predicted)
    relations = pd.DataFrame({"relation": list(DOMAINS), "domains": list(DOMAINS.values())})
    domains = metrics.by_domain(per_relation, relations, divide_support=True)
    micro = metrics.micro(per_relation, ["model", "template"])
    ties = (predicted["ties_at_best"] > 1).sum()
    assert ties > 20  # the grid makes ties common: the rule matters
    for template in range(3):
        theirs = lm_pub_quiz_results(scores, instances, template)
        by_relation = theirs.get_metrics("accuracy", accumulate=False)
        ours = per_relation[per_relation["template"] == template].set_index("relation")["accuracy"]
        assert np.allclose(ours.sort_index().to_numpy(), 100 * by_relation.sort_index().astype(float).to_numpy())
        overall = theirs.get_metrics("accuracy", accumulate=True)
        assert micro.loc[micro["template"] == template, "accuracy"].item() == pytest.approx(100 * overall, abs=1e-12)
        by_domain = theirs.get_metrics("accuracy", accumulate="domains")
        ours_domain = domains[domains["template"] == template].set_index("domain")["accuracy"].sort_index()
        assert np.allclose(ours_domain.to_numpy(), 100 * by_domain.sort_index().astype(float).to_numpy())


def test_ties_first_and_wrong():
    scores = pd.DataFrame(
        {
            "model": "m",
            "relation": "P1",
            "template": 0,
            "instance": [0, 0, 0, 1, 1, 1],
            "candidate": [0, 1, 2, 0, 1, 2],
            "score": [-1.0, -1.0, -5.0, -2.0, -1.0, -1.0],
        }
    )
    instances = pd.DataFrame({"relation": "P1", "instance": [0, 1], "answer_idx": [0, 2]})
    first = metrics.predictions(scores, instances, "first")
    # instance 0: candidates 0 and 1 tie, the first is the gold: right; instance 1: 1 and 2 tie, gold 2: wrong
    assert list(first["predicted"]) == [0, 1] and list(first["correct"]) == [True, False]
    assert list(metrics.predictions(scores, instances, "wrong")["correct"]) == [False, False]


def test_mean_and_standard_error_over_templates():
    per_template = pd.DataFrame({"model": "m", "template": [0, 1, 2], "accuracy": [10.0, 20.0, 60.0]})
    out = metrics.over_templates(per_template, ["model"], ddof=1).iloc[0]
    assert out["mean"] == 30.0 and out["sem"] == pytest.approx(np.std([10, 20, 60], ddof=1) / np.sqrt(3))
    assert metrics.over_templates(per_template, ["model"], ddof=0).iloc[0]["sem"] == pytest.approx(
        np.std([10, 20, 60]) / np.sqrt(3)
    )


def test_random_baseline_is_the_mean_chance_over_instances():
    relations = pd.DataFrame({"relation": ["P1", "P2"], "answer_space_labels": [["a", "b"], ["a", "b", "c", "d"]]})
    instances = pd.DataFrame({"relation": ["P1", "P2", "P2", "P2"]})
    assert metrics.random_baseline(instances, relations) == pytest.approx(100 * (1 / 2 + 3 / 4) / 4)
