"""Prompt selection and ensembles on small arrays computed by hand."""

import math

import numpy as np
import pandas as pd
import pytest
import torch

from knowprobe.lpaqa import selection
from knowprobe.lpaqa.selection import OptiSettings

# logprobs[prompt, fact, candidate]: prompt 0 gets fact 0 right, prompt 1 fact 1
LOGPROBS = np.array(
    [
        [[-1.0, -2.0, -3.0], [-2.0, -1.0, -3.0]],
        [[-2.0, -1.0, -3.0], [-3.0, -2.0, -1.0]],
    ]
)
GOLD = np.array([0, 2])


def test_correctness_allows_ties_as_lamas_gold_rank_does():
    assert selection.correct(LOGPROBS, GOLD).tolist() == [[True, False], [False, True]]
    assert selection.correct(np.array([[-1.0, -1.0]]), np.array([1])).tolist() == [True]


def test_top_k_sums_log_probs_of_the_best_prompts_in_train_order():
    order = selection.prompt_order(selection.correct(LOGPROBS, GOLD), set_rank=np.array([1, 0]))
    assert order.tolist() == [1, 0]  # equal train accuracy: the set's own rank decides
    assert selection.top_k_scores(LOGPROBS, order, 1).tolist() == LOGPROBS[1].tolist()
    summed = selection.top_k_scores(LOGPROBS, order, 2)
    assert summed.tolist() == [[-3.0, -3.0, -6.0], [-5.0, -3.0, -4.0]]
    assert selection.correct(summed, GOLD).tolist() == [True, False]  # fact 0: a tie with candidate 1
    better_first = selection.prompt_order(np.array([[True, True], [True, False]]), set_rank=np.array([1, 0]))
    assert better_first.tolist() == [0, 1]  # train accuracy before the set's rank


def test_linear_combination_forgives_what_log_linear_penalises():
    # candidate 1 is middling under both prompts; 0 and 2 are each very unlikely under one of them
    logprobs = np.array([[[-0.1, -5.0, -20.0]], [[-20.0, -5.0, -0.1]]])
    order = np.array([0, 1])
    log_linear = selection.top_k_scores(logprobs, order, 2)
    linear = selection.top_k_scores(logprobs, order, 2, linear=True)
    assert log_linear[0].tolist() == [-20.1, -10.0, -20.1]
    np.testing.assert_allclose(
        linear[0], np.log([math.exp(-0.1) + math.exp(-20), 2 * math.exp(-5), math.exp(-0.1) + math.exp(-20)])
    )
    assert selection.correct(log_linear, np.array([1])).tolist() == [True]
    assert selection.correct(linear, np.array([1])).tolist() == [False]


def test_oracle_is_right_when_any_prompt_is():
    assert selection.oracle(np.array([[True, False, False], [False, False, True]])).tolist() == [True, False, True]


def hand_loss(weights):
    scores = np.einsum("p,pfc->fc", weights, LOGPROBS)
    return np.mean([-scores[f, GOLD[f]] + math.log(np.exp(scores[f]).sum()) for f in range(2)])


def test_opti_loss_is_the_mean_negative_log_probability_of_the_gold_objects():
    theta = torch.tensor([0.3, -0.2])
    weights = np.exp([0.3, -0.2]) / np.exp([0.3, -0.2]).sum()
    loss = selection.opti_loss(theta, torch.tensor(LOGPROBS, dtype=torch.float32), torch.tensor(GOLD))
    assert loss.item() == pytest.approx(hand_loss(weights), abs=1e-6)


def test_one_opti_step_moves_the_weights_as_adam_does():
    # at theta = 0 (w = 1/2, 1/2): d loss / d theta_0 = (a_0 - a_1) / 4, with a_p = d loss / d w_p =
    # mean over facts of (expected log-prob under the ensemble's distribution - gold log-prob);
    # Adam's first step moves each parameter by the learning rate against its gradient's sign
    scores = 0.5 * LOGPROBS.sum(axis=0)
    q = np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True)
    a = [np.mean([(q[f] * LOGPROBS[p, f]).sum() - LOGPROBS[p, f, GOLD[f]] for f in range(2)]) for p in range(2)]
    step = 0.1 * np.sign(a[0] - a[1])
    want = np.exp([-step, step]) / np.exp([-step, step]).sum()
    fit = selection.fit_opti(LOGPROBS, GOLD, OptiSettings(max_epochs=1, batch_size=128))
    np.testing.assert_allclose(fit.weights, want, atol=1e-6)
    assert fit.epochs == 1 and fit.first_loss == pytest.approx(hand_loss(np.array([0.5, 0.5])), abs=1e-6)


def test_opti_learns_to_trust_the_better_prompt_and_is_deterministic_under_a_seed():
    rng = np.random.default_rng(0)
    facts, candidates = 300, 8
    gold = rng.integers(0, candidates, size=facts)
    good = rng.normal(size=(facts, candidates)) + 3 * np.eye(candidates)[gold]  # the gold object boosted
    noise = rng.normal(size=(facts, candidates))
    logprobs = np.stack([noise, good, noise[::-1]])
    logprobs = logprobs - np.log(np.exp(logprobs).sum(axis=2, keepdims=True))
    settings = OptiSettings(batch_size=32, max_epochs=200, seed=3)
    first = selection.fit_opti(logprobs, gold, settings, seed_key=19)
    again = selection.fit_opti(logprobs, gold, settings, seed_key=19)
    assert np.array_equal(first.weights, again.weights) and first.epochs == again.epochs
    assert first.weights.argmax() == 1 and first.weights[1] > 0.9 and first.final_loss < first.first_loss
    assert first.epochs < settings.max_epochs  # stopped: no improvement of 1e-3 for 30 epochs
    other = selection.fit_opti(logprobs, gold, OptiSettings(batch_size=32, max_epochs=200, seed=4), seed_key=19)
    assert not np.array_equal(first.weights, other.weights)  # another seed, another batch order


def test_a_relation_without_train_facts_keeps_the_set_order_and_uniform_weights():
    empty = np.zeros((3, 0, 5))
    fit = selection.fit_opti(empty, np.zeros(0, dtype=int), OptiSettings())
    assert fit.weights.tolist() == [1 / 3] * 3 and fit.epochs == 0
    assert selection.prompt_order(np.zeros((3, 0), dtype=bool), np.array([2, 0, 1])).tolist() == [1, 2, 0]


def test_select_relation_reports_every_method_on_every_split():
    facts = pd.DataFrame({"fact_id": ["a", "b"], "obj_label": ["x", "z"]})
    data = selection.RelationData(LOGPROBS, GOLD, facts)
    settings = selection.SelectionSettings(max_k=3, opti=OptiSettings(max_epochs=5))
    table, stats = selection.select_relation(
        "P1",
        data,
        {("trex", "dev"): data, ("trex", "test"): data.subset(np.array([True, False]))},
        np.array([0, 1]),
        settings,
    )
    assert set(table["method"]) == {
        "Top1",
        "Top2",
        "Top3",
        "Top1-linear",
        "Top2-linear",
        "Top3-linear",
        "Opti",
        "Oracle",
    }
    assert len(table[(table["split"] == "test")]) == 8 and len(table[table["split"] == "dev"]) == 16
    top1 = table[(table["method"] == "Top1") & (table["split"] == "dev")]
    assert top1["correct"].tolist() == [True, False]  # prompt 0: tied train accuracy, first in the set
    assert stats["train_rank"].tolist() == [0, 1] and stats["weight"].sum() == pytest.approx(1.0)


# --- exactness: the stage on stored hidden states against full forward passes ------------------

BRUTE_WORDS = ["Paris", "Berlin", "Rome", "Madrid", "Florence", "Salzburg", "Vienna", "Tokyo", "Europe", "Asia"]
BRUTE_SUBJECTS = ["France", "Germany", "Italy", "Spain", "Dante", "Mozart", "Japan", "Austria", "king", "city"]
BRUTE_TEMPLATES = [
    "The capital of [X] is [Y] .",
    "[X] , a city in [Y] .",
    "[X] was born in [Y] .",
    "[Y] is the capital of [X] .",
    "[X] is located in [Y] .",
]


def brute_benchmark(tokenizer):
    """Two relations, five prompts each; 40 T-REx-train facts and 25 test facts per relation."""
    from knowprobe import vocab

    rng = np.random.default_rng(0)
    rows = []
    for relation in ["P1", "P2"]:
        for split, n in [("train_dev", 40), ("test", 25)]:
            for i in range(n):
                rows.append(
                    {
                        "split": split,
                        "relation": relation,
                        "fact_id": f"{relation}-{split}-{i:02d}",
                        "sub_label": " ".join(rng.choice(BRUTE_SUBJECTS, size=1 + i % 2)),
                        "obj_label": str(rng.choice(BRUTE_WORDS)),
                    }
                )
    facts = pd.DataFrame(rows)
    facts["obj_token_id"] = vocab.word_token_ids(tokenizer, list(facts["obj_label"]))
    prompts = pd.DataFrame(
        [
            {"relation": r, "template": t, "source": "mine", "rank": i, "score": float(-i)}
            for r in ["P1", "P2"]
            for i, t in enumerate(BRUTE_TEMPLATES if r == "P1" else BRUTE_TEMPLATES[::-1])
        ]
    )
    return facts, prompts, vocab.candidate_table(tokenizer, BRUTE_WORDS + ["French", "river"])


def full_forward_logprobs(model, tokenizer, prompts, facts, candidate_ids):
    """``[prompt, fact, candidate]`` from one unpadded forward pass per pair: LAMA's computation."""
    from knowprobe.prompts import fill_template

    out = np.empty((len(prompts), len(facts), len(candidate_ids)))
    with torch.no_grad():
        for p, template in enumerate(prompts["template"]):
            for f, subject in enumerate(facts["sub_label"]):
                encoded = tokenizer(fill_template(template, subject, tokenizer.mask_token), return_tensors="pt")
                position = int((encoded["input_ids"][0] == tokenizer.mask_token_id).nonzero()[0, 0])
                logprobs = torch.log_softmax(model(**encoded).logits[0, position].double(), dim=-1)
                out[p, f] = logprobs[torch.tensor(np.array(candidate_ids))].numpy()
    return out


def brute_methods(logprobs, gold, train_logprobs, train_gold, set_rank, weights, max_k):
    """Every method by plain loops over facts, from full distributions."""
    prompts, facts = logprobs.shape[:2]

    def right(scores, g):  # LAMA: no candidate strictly above the gold
        return all(scores[g] >= s for s in scores)

    accuracy = [
        np.mean([right(train_logprobs[p, f], train_gold[f]) for f in range(len(train_gold))]) for p in range(prompts)
    ]
    order = sorted(range(prompts), key=lambda p: (-accuracy[p], set_rank[p], p))
    out = {}
    for k in range(1, max_k + 1):
        chosen = order[:k]
        out[f"Top{k}"] = [right(sum(logprobs[p, f] for p in chosen), gold[f]) for f in range(facts)]
        out[f"Top{k}-linear"] = [
            right(np.log(sum(np.exp(logprobs[p, f]) for p in chosen)), gold[f]) for f in range(facts)
        ]
    out["Opti"] = [right(sum(weights[p] * logprobs[p, f] for p in range(prompts)), gold[f]) for f in range(facts)]
    out["Oracle"] = [any(right(logprobs[p, f], gold[f]) for p in range(prompts)) for f in range(facts)]
    return out


def test_every_method_from_stored_hidden_states_equals_full_forward_computation(tiny_bert, wordpiece_tokenizer):
    from knowprobe.lpaqa import probe
    from knowprobe.scoring import MaskedLM, ScoringSettings

    model, tokenizer = tiny_bert, wordpiece_tokenizer
    facts, prompts, candidates = brute_benchmark(tokenizer)
    assert len(candidates) == 12
    scorer = MaskedLM(model, tokenizer, ScoringSettings(batch_size=7, device="cpu"))  # padding in every batch
    probes = {}
    for split in ["test", "train_dev"]:
        table, hidden = probe.probe(facts[facts["split"] == split], prompts, scorer, candidates, top_k=3)
        probes[split] = selection.ProbeSplit(table.to_pandas(), hidden)
    candidate_ids = candidates["token_id"].to_numpy()
    column_of = {int(t): c for c, t in enumerate(candidate_ids)}
    train_dev = facts[facts["split"] == "train_dev"]
    train_ids = set(train_dev.groupby("relation").head(32)["fact_id"])  # 80 %
    settings = selection.SelectionSettings(max_k=5, opti=OptiSettings(max_epochs=50))

    def candidate_logprobs(hidden):
        return scorer.candidate_logprobs_from_hidden(hidden, candidate_ids)

    disagreements, compared, gaps = 0, 0, []
    for part in selection.relation_splits("trex", probes, train_ids, candidate_logprobs, column_of):
        table, stats = selection.select_relation(
            part.relation, part.train, part.evaluated, part.prompts["rank"].to_numpy(), settings, 7
        )
        rel_prompts = prompts[prompts["relation"] == part.relation].reset_index(drop=True)
        assert rel_prompts["template"].tolist() == part.prompts["template"].tolist()
        train = train_dev[train_dev["fact_id"].isin(train_ids) & (train_dev["relation"] == part.relation)]
        train = train.sort_values("fact_id")
        train_logprobs = full_forward_logprobs(model, tokenizer, rel_prompts, train, candidate_ids)
        train_gold = train["obj_token_id"].map(column_of).to_numpy()
        gaps.append(np.abs(train_logprobs - part.train.logprobs).max())
        # Opti refitted on the full-forward log-probs lands on the stage's weights
        refit = selection.fit_opti(train_logprobs, train_gold, settings.opti, 7)
        np.testing.assert_allclose(refit.weights, stats["weight"], atol=1e-3)
        for (dataset, split), data in part.evaluated.items():
            logprobs = full_forward_logprobs(model, tokenizer, rel_prompts, data.facts, candidate_ids)
            gaps.append(np.abs(logprobs - data.logprobs).max())
            want = brute_methods(
                logprobs,
                data.facts["obj_token_id"].map(column_of).to_numpy(),
                train_logprobs,
                train_gold,
                rel_prompts["rank"].to_numpy(),
                stats["weight"],
                settings.max_k,
            )
            got = table[(table["dataset"] == dataset) & (table["split"] == split)]
            assert got["fact_id"].tolist() == data.facts["fact_id"].tolist() * len(want)
            for method, right in want.items():
                stage = got.loc[got["method"] == method, "correct"].to_numpy()
                disagreements += int((stage != np.array(right)).sum())
                compared += len(right)
    assert max(gaps) < 1e-4
    assert compared == 2 * (25 + 8) * (2 * 5 + 2) and disagreements == 0


def next_token_logprobs(model, tokenizer, prompts, facts, candidate_ids):
    """``[prompt, fact, candidate]`` of a causal LM: one forward pass per pair over BOS and the
    prompt's text before [Y] (the next-token score's definition)."""
    from knowprobe.lpaqa.probe import next_token_prefix

    out = np.empty((len(prompts), len(facts), len(candidate_ids)))
    with torch.no_grad():
        for p, template in enumerate(prompts["template"]):
            for f, subject in enumerate(facts["sub_label"]):
                prefix = next_token_prefix(template, subject)
                ids = [tokenizer.bos_token_id] + tokenizer(prefix, add_special_tokens=False)["input_ids"]
                logprobs = torch.log_softmax(model(torch.tensor([ids])).logits[0, -1].double(), dim=-1)
                out[p, f] = logprobs[torch.tensor(np.array(candidate_ids))].numpy()
    return out


def test_every_method_of_a_causal_model_from_stored_hidden_states(tiny_causal_models):
    """The next-token score: the selection stage's log-probs from the probe's stored hidden states
    are those of a full forward pass per pair, and every method decides as the brute force does."""
    from knowprobe.lpaqa import probe
    from knowprobe.scoring import CausalLM, ScoringSettings

    _, model, tokenizer = tiny_causal_models[0]
    facts, prompts, candidates = brute_benchmark(tokenizer)
    scorer = CausalLM(model, tokenizer, ScoringSettings(batch_size=7, device="cpu"))
    probes = {}
    for split in ["test", "train_dev"]:
        table, hidden = probe.probe(facts[facts["split"] == split], prompts, scorer, candidates, top_k=3)
        probes[split] = selection.ProbeSplit(table.to_pandas(), hidden)
    candidate_ids = candidates["token_id"].to_numpy()
    column_of = {int(t): c for c, t in enumerate(candidate_ids)}
    train_dev = facts[facts["split"] == "train_dev"]
    train_ids = set(train_dev.groupby("relation").head(32)["fact_id"])
    settings = selection.SelectionSettings(max_k=3, opti=OptiSettings(max_epochs=30))

    def candidate_logprobs(hidden):
        return scorer.candidate_logprobs_from_hidden(hidden, candidate_ids)

    disagreements, compared, gaps = 0, 0, []
    for part in selection.relation_splits("trex", probes, train_ids, candidate_logprobs, column_of):
        table, stats = selection.select_relation(
            part.relation, part.train, part.evaluated, part.prompts["rank"].to_numpy(), settings, 7
        )
        rel_prompts = prompts[prompts["relation"] == part.relation].reset_index(drop=True)
        train = train_dev[train_dev["fact_id"].isin(train_ids) & (train_dev["relation"] == part.relation)]
        train_logprobs = next_token_logprobs(model, tokenizer, rel_prompts, train.sort_values("fact_id"), candidate_ids)
        gaps.append(np.abs(train_logprobs - part.train.logprobs).max())
        for (dataset, split), data in part.evaluated.items():
            logprobs = next_token_logprobs(model, tokenizer, rel_prompts, data.facts, candidate_ids)
            gaps.append(np.abs(logprobs - data.logprobs).max())
            want = brute_methods(
                data.logprobs,
                data.facts["obj_token_id"].map(column_of).to_numpy(),
                part.train.logprobs,
                part.train.gold,
                rel_prompts["rank"].to_numpy(),
                stats["weight"],
                settings.max_k,
            )
            got = table[(table["dataset"] == dataset) & (table["split"] == split)]
            for method, right in want.items():
                stage = got.loc[got["method"] == method, "correct"].to_numpy()
                disagreements += int((stage != np.array(right)).sum())
                compared += len(right)
    assert max(gaps) < 1e-4
    assert compared == 2 * (25 + 8) * (2 * 3 + 2) and disagreements == 0


def test_every_method_under_the_statement_score_ranks_the_candidate_set(tiny_causal_models):
    """The statement score: the selection stage ranks each split's C_r by ℓ = s - logsumexp over
    C_r, recomputed here from the scoring layer's statement scores, and every method decides as the
    brute force does on them (T-REx-train's train and dev parts share train_dev's C_r)."""
    from knowprobe.lpaqa import probe
    from knowprobe.scoring import CausalLM, ScoringSettings
    from knowprobe.statements import fill_statement

    _, model, tokenizer = tiny_causal_models[0]
    facts, prompts, _ = brute_benchmark(tokenizer)
    facts["obj_token_id"] = -1
    scorer = CausalLM(model, tokenizer, ScoringSettings(device="cpu"))
    probes = {}
    for split in ["test", "train_dev"]:
        parts = {split: (facts[facts["split"] == split], prompts)}
        [(_, table, scores)] = probe.probe_statements(parts, scorer, top_k=3)
        probes[split] = selection.ProbeSplit(table.to_pandas(), scores)
    train_dev = facts[facts["split"] == "train_dev"]
    train_ids = set(train_dev.groupby("relation").head(32)["fact_id"])
    settings = selection.SelectionSettings(max_k=3, opti=OptiSettings(max_epochs=30))

    def ell(rel_prompts, part_facts, labels):
        texts = [
            fill_statement(t, s, c).text
            for t in rel_prompts["template"]
            for s in part_facts["sub_label"]
            for c in labels
        ]
        values = scorer.statement_logprob(texts).reshape(len(rel_prompts), len(part_facts), len(labels))
        return values - np.log(np.exp(values).sum(axis=2, keepdims=True))

    disagreements, compared, gaps = 0, 0, []
    for part in selection.relation_splits("trex", probes, train_ids, probe.statement_logprobs, None):
        table, stats = selection.select_relation(
            part.relation, part.train, part.evaluated, part.prompts["rank"].to_numpy(), settings, 7
        )
        rel_prompts = prompts[prompts["relation"] == part.relation].reset_index(drop=True)
        for (dataset, split), data in part.evaluated.items():
            source = facts[(facts["split"] == ("test" if split == "test" else "train_dev"))]
            labels = sorted(set(source.loc[source["relation"] == part.relation, "obj_label"]))
            assert data.logprobs.shape == (5, len(data.gold), len(labels))
            assert [labels[g] for g in data.gold] == data.facts["obj_label"].tolist()
            gaps.append(np.abs(ell(rel_prompts, data.facts, labels) - data.logprobs).max())
            want = brute_methods(
                data.logprobs,
                data.gold,
                part.train.logprobs,
                part.train.gold,
                rel_prompts["rank"].to_numpy(),
                stats["weight"],
                settings.max_k,
            )
            got = table[(table["dataset"] == dataset) & (table["split"] == split)]
            for method, right in want.items():
                stage = got.loc[got["method"] == method, "correct"].to_numpy()
                disagreements += int((stage != np.array(right)).sum())
                compared += len(right)
    assert max(gaps) < 1e-5
    assert compared == 2 * (25 + 8) * (2 * 3 + 2) and disagreements == 0
