"""BEAR's slice scored end to end on tiny models against lm-pub-quiz 0.3.3 itself: the same
BEAR-format set (answers of several tokens, the answer at the end, in the middle and opening the
statement) read by both, every template scored by knowprobe's pipeline (``knowprobe.bear.probe``,
``metrics``, ``tables``) and by lm-pub-quiz's Evaluator; each relation's and template's accuracy,
the micro accuracy and the mean over templates identical."""

from __future__ import annotations

import copy
import json

import numpy as np
import pandas as pd
import pytest
import torch

from knowprobe.bear import dataset, metrics, probe, tables
from knowprobe.scoring import CausalLM, MaskedLM

lm_pub_quiz = pytest.importorskip("lm_pub_quiz", reason="lm-pub-quiz (the test extra) is not installed")

RELATIONS = {
    "P1": {
        "templates": ["[X] is located in [Y].", "The capital of [X] is [Y] .", "[Y] has the city [X]."],
        "answers": ["France", "Germany", "New York", "Salzburg", "Asia", "Europe"],
        "facts": [("Paris", "France"), ("Berlin", "Germany"), ("Mozart", "Salzburg"), ("Rome", "Europe")],
    },
    "P2": {
        "templates": ["[Y] is the native language of [X] .", "In [Y], [X] was born.", "[X] speaks [Y]."],
        "answers": ["French", "Italian", "Spanish", "German", "capital city"],
        "facts": [("France", "French"), ("Dante", "Italian"), ("Madrid", "Spanish"), ("Austria", "German")],
    },
}


@pytest.fixture(scope="module")
def bear_set(tmp_path_factory):
    root = tmp_path_factory.mktemp("bear")
    metadata = {}
    for code, relation in RELATIONS.items():
        ids = [f"Q{code}{i}" for i in range(len(relation["answers"]))]
        metadata[code] = {
            "templates": relation["templates"],
            "answer_space_labels": relation["answers"],
            "answer_space_ids": ids,
        }
        with open(root / f"{code}.jsonl", "w") as out:
            for k, (subject, answer) in enumerate(relation["facts"]):
                index = relation["answers"].index(answer)
                row = {"sub_id": f"S{k}", "sub_label": subject, "obj_id": ids[index], "obj_label": answer}
                out.write(json.dumps({**row, "answer_idx": index}) + "\n")
    (root / "metadata_relations.json").write_text(json.dumps(metadata))
    return root


def peer(model, tokenizer, model_type, directory, conditional: bool, pll: str):
    """lm-pub-quiz's accuracy per template and relation, and per template over all instances."""
    from lm_pub_quiz import Dataset, Evaluator

    options = {"pll_metric": pll} if model_type == "MLM" else {}
    evaluator = Evaluator.from_model(
        model,
        model_type=model_type,
        tokenizer=copy.deepcopy(tokenizer),
        device="cpu",
        conditional_score=conditional,
        **options,
    )
    per_relation, overall = {}, {}
    for template in range(3):
        results = evaluator.evaluate_dataset(
            Dataset.from_path(directory), template_index=template, reduction="sum", batch_size=4, metric="accuracy"
        )
        for result in results:
            per_relation[(result.relation_code, template)] = 100 * result.metric_values["accuracy"]
        overall[template] = 100 * results.get_metrics("accuracy", accumulate=True)
    return per_relation, overall


def ours(scorer, name, kind, directory, conditional: bool, pll: str):
    relations, instances, _ = dataset.read_dataset(directory)
    statements = probe.statements(relations, instances)
    scores = probe.score(scorer, name, statements, pll, conditional)
    predicted = metrics.predictions(scores, instances, "first")
    per_relation = metrics.by_relation(predicted)
    models = pd.DataFrame([{"model": name, "kind": kind, "family": kind, "parameters": 1, "hub_id": None}])
    settings = tables.model_settings(models, pll, conditional, "first")
    table = tables.accuracy(predicted, models, {"models": {}}, 1, settings)
    return per_relation, table


@pytest.mark.parametrize(
    "name, conditional, pll",
    [
        ("bert", False, "within_word_l2r"),
        ("bert", True, "original"),
        ("gpt2", False, "within_word_l2r"),
        ("llama", True, "within_word_l2r"),
    ],
)
def test_accuracies_equal_lm_pub_quiz(bear_set, tiny_models, tiny_causal_models, name, conditional, pll):
    found = {n: (m, t) for n, m, t in [*tiny_models, *tiny_causal_models]}
    model, tokenizer = found[name]
    kind = "causal" if name in ("gpt2", "llama") else "masked"
    scorer = CausalLM(model, tokenizer) if kind == "causal" else MaskedLM(model, tokenizer)
    per_relation, table = ours(scorer, name, kind, bear_set, conditional, pll)
    their_relations, their_overall = peer(
        model, tokenizer, "CLM" if kind == "causal" else "MLM", bear_set, conditional, pll
    )
    mine = {(r.relation, r.template): r.accuracy for r in per_relation.itertuples()}
    assert mine == pytest.approx(their_relations, abs=1e-9)
    row = table.iloc[0]
    for template in range(3):
        assert row[f"template_{template + 1}"] == pytest.approx(their_overall[template], abs=1e-9)
    assert row["mean"] == pytest.approx(np.mean(list(their_overall.values())), abs=1e-9)
    assert row["sem"] == pytest.approx(np.std(list(their_overall.values()), ddof=1) / np.sqrt(3), abs=1e-9)


@pytest.mark.parametrize("name", ["bert", "gpt2"])
def test_bfloat16_with_the_recheck_chooses_float32s_answers(bear_set, tiny_models, tiny_causal_models, name):
    """bear.scoring.dtype below float32: the scores in bfloat16, then the scoring layer's recheck
    (every group sampled: the set has fewer than 256), so that every (instance, template) takes
    float32's answer; the rescored rows carry float32's scores."""
    from knowprobe.scoring import ScoringSettings

    found = {n: (m, t) for n, m, t in [*tiny_models, *tiny_causal_models]}
    model, tokenizer = found[name]
    runner = CausalLM if name == "gpt2" else MaskedLM
    exact_scorer = runner(model, tokenizer)
    low_scorer = runner(copy.deepcopy(model).to(torch.bfloat16), tokenizer, ScoringSettings(dtype="bfloat16"))
    relations, instances, _ = dataset.read_dataset(bear_set)
    statements = probe.statements(relations, instances)
    exact = probe.score(exact_scorer, name, statements)
    low = probe.score(low_scorer, name, statements)
    assert not np.allclose(low["score"], exact["score"], atol=1e-4)  # bfloat16 moved them
    checked, report = probe.recheck(
        low, lambda rows: probe.score(exact_scorer, name, statements.iloc[rows])["score"].to_numpy(), 0.02, 4
    )
    assert report.groups == report.sample == 2 * 4 * 3  # relations x instances x templates
    np.testing.assert_allclose(checked["score"], exact["score"], rtol=0, atol=1e-5)
    chosen = [metrics.predictions(table, instances, "first")["predicted"].tolist() for table in (checked, exact)]
    assert chosen[0] == chosen[1]
