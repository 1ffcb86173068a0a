"""Issue 41 items 2-6 and 8: the multi-token facts asked every way (closed candidate set, open
decoding, generation) with LPAQA's prompt sets and Top-1 selection, their tables, and what a dry
run says each way costs."""

import numpy as np
import pandas as pd
import pytest

from knowprobe import contracts
from knowprobe.lpaqa import cost, multitoken_probe, multitoken_tables
from knowprobe.lpaqa.trex_train import split
from knowprobe.scoring import CausalLM, MaskedLM, ScoringSettings, causal_generate, masked_decode, mlama_scores
from knowprobe.statements import fill_statement

SETTINGS = ScoringSettings(device="cpu", batch_size=8)


def facts_table() -> pd.DataFrame:
    rows = [
        ("P36", "France", "Paris", ["Lutetia"]),
        ("P36", "Germany", "Berlin", []),
        ("P36", "Italy", "Rome", ["Roma"]),
        ("P36", "Spain", "Madrid", []),
        ("P36", "Japan", "Tokyo", []),
        ("P36", "Austria", "Vienna", []),
        ("P19", "Mozart", "Salzburg", []),
        ("P19", "Dante", "Florence", []),
        ("P19", "Berlin", "New York", ["NYC"]),  # an object of two words
        ("P19", "Rome", "Vienna", []),
    ]
    return pd.DataFrame(
        {
            "relation": [r for r, *_ in rows],
            "fact_id": [f"{r}-{s}-{o}" for r, s, o, _ in rows],
            "sub_uri": "Q1",
            "sub_label": [s for _, s, _, _ in rows],
            "obj_uri": "Q2",
            "obj_label": [o for _, _, o, _ in rows],
            "origin": "wikidata",
            "judgments_yes": 0,
            "judgments_no": 0,
            "sub_aliases": [[] for _ in rows],
            # as Parquet gives them back: NumPy arrays
            "obj_aliases": [np.array(a, dtype=object) for *_, a in rows],
        }
    )


def prompt_sets() -> dict[str, pd.DataFrame]:
    def table(rows):
        return pd.DataFrame(
            {
                "relation": [r for r, _ in rows],
                "template": [t for _, t in rows],
                "source": "manual",
                "rank": np.arange(len(rows), dtype=np.int32) % 2,
                "score": np.nan,
            }
        )

    return {
        "manual": table([("P36", "The capital of [X] is [Y] ."), ("P19", "[X] was born in [Y] .")]),
        "mine": table(
            [
                ("P36", "[Y] is the capital of [X] ."),
                ("P36", "The capital of [X] is [Y] ."),  # also in manual: asked once
                ("P19", "[X] was born in [Y] ."),
                ("P19", "[X] died in [Y] ."),
            ]
        ),
    }


def token_counts(facts: pd.DataFrame, tokenizer) -> pd.DataFrame:
    from knowprobe.lpaqa.multitoken import token_counts as counts

    return pd.DataFrame(
        {
            "relation": facts["relation"],
            "fact_id": facts["fact_id"],
            "model": "m",
            "obj_tokens": counts(tokenizer, facts["obj_label"].tolist()),
        }
    )


def test_stop_text_is_the_templates_next_literal_text():
    assert multitoken_probe.stop_text("[X] was born in [Y] .") == "."
    assert multitoken_probe.stop_text("[Y] is the capital of [X] .") == "is the capital of"
    assert multitoken_probe.stop_text("[X] (born [Y]).") == ")."
    assert multitoken_probe.stop_text("[X] speaks [Y]") == ""


def test_a_method_unfit_for_the_kind_is_refused():
    with pytest.raises(Exception, match="'generate' not a method for a masked model"):
        multitoken_probe.check_methods(["statement", "generate"], "masked")
    assert multitoken_probe.check_methods(["generate"], "causal") == ["generate"]


@pytest.fixture(scope="module")
def masked_probe(tiny_bert, wordpiece_tokenizer):
    scorer = MaskedLM(tiny_bert, wordpiece_tokenizer, SETTINGS)
    facts = facts_table()
    tokens = token_counts(facts, wordpiece_tokenizer)
    predictions, selection, _ = multitoken_probe.probe(
        facts, tokens, prompt_sets(), scorer, list(multitoken_probe.METHODS["masked"]), train_share=0.5, seed=0
    )
    return scorer, facts, tokens, predictions, selection


def test_train_half_asks_every_template_and_test_half_the_selected(masked_probe):
    _, facts, _, predictions, selection = masked_probe
    contracts.to_table(predictions, contracts.MULTITOKEN_PREDICTIONS)
    contracts.to_table(selection, contracts.MULTITOKEN_SELECTION)
    train, test = split(facts, 0.5, 0)
    assert len(train) == 5 and len(test) == 5
    templates = {"P36": 2, "P19": 2}  # distinct templates of the two sets
    methods = multitoken_probe.METHODS["masked"]
    asked_train = predictions[predictions["split"] == "train"]
    assert len(asked_train) == len(methods) * sum(templates[r] for r in train["relation"])
    assert not predictions.duplicated(["fact_id", "template", "method"]).any()
    # each (set, method, relation) chose one template of the set, and the test half asks exactly those
    assert len(selection) == 2 * len(methods) * 2
    for (method, relation), chosen in selection.groupby(["method", "relation"]):
        asked = predictions[(predictions["split"] == "test") & (predictions["method"] == method)]
        asked = asked[asked["relation"] == relation]
        assert set(asked["template"]) == set(chosen["template"])
        assert set(asked["fact_id"]) == set(test.loc[test["relation"] == relation, "fact_id"])
    manual = selection[selection["prompt_set"] == "manual"]
    assert set(manual["prompts"]) == {1} and set(selection.loc[selection["prompt_set"] == "mine", "prompts"]) == {2}


def test_each_method_answers_as_the_scoring_layer_does_for_one_pair(masked_probe):
    scorer, facts, _, predictions, _ = masked_probe
    row = predictions[(predictions["split"] == "train") & (predictions["relation"] == "P19")].iloc[0]
    fact = facts.set_index("fact_id").loc[row["fact_id"]]
    candidates = sorted(set(facts.loc[facts["relation"] == "P19", "obj_label"]))
    prompt = row["template"].replace("[X]", fact["sub_label"])
    answers = predictions[(predictions["fact_id"] == row["fact_id"]) & (predictions["template"] == row["template"])]
    answer = dict(zip(answers["method"], answers["prediction"]))
    statements = [fill_statement(row["template"], fact["sub_label"], c).text for c in candidates]
    scores = scorer.statement_logprob(statements)
    assert answer["statement"] == candidates[int(np.argmax(scores))]
    assert answer["mlama"] == candidates[int(mlama_scores(scorer, [prompt], candidates).best[0])]
    for method in ("independent", "order", "confidence"):
        assert answer[method] == masked_decode(scorer, [prompt], 5, method).texts[0]
    # every answer judged against the label and aliases
    for _, asked in answers.iterrows():
        gold = {fact["obj_label"].lower(), *(a.lower() for a in fact["obj_aliases"])}
        assert asked["correct_exact"] == (asked["prediction"].lower() in gold)


def test_the_causal_model_ranks_statements_and_generates(tiny_causal_models):
    _, model, tokenizer = tiny_causal_models[0]
    scorer = CausalLM(model, tokenizer, SETTINGS)
    facts = facts_table()
    predictions, selection, _ = multitoken_probe.probe(
        facts, token_counts(facts, tokenizer), prompt_sets(), scorer, ["statement", "generate"], seed=1
    )
    assert set(predictions["method"]) == {"statement", "generate"}
    generated = predictions[(predictions["method"] == "generate") & (predictions["template"] == "[X] died in [Y] .")]
    row = generated.iloc[0]
    subject = facts.set_index("fact_id").loc[row["fact_id"], "sub_label"]
    expected = causal_generate(scorer, [f"{subject} died in"], ".", 16)
    assert row["prediction"] == expected.texts[0]
    assert row["prediction_tokens"] == len(expected.token_ids[0])
    assert "generate" in set(selection["method"])


def test_a_models_own_draw_asks_fewer_facts_of_the_same_halves_and_candidates(tiny_causal_models):
    """lpaqa.probe.sample: at most N facts a relation of each half (the halves every model gets),
    the rest counted as left out; each drawn fact's statement is ranked over the candidate set of
    all the facts, as in the run without the draw."""
    _, model, tokenizer = tiny_causal_models[0]
    scorer = CausalLM(model, tokenizer, SETTINGS)
    facts = facts_table()
    args = (facts, token_counts(facts, tokenizer), prompt_sets(), scorer, ["statement"])
    whole, _, _ = multitoken_probe.probe(*args, seed=1)
    drawn, _, left_out = multitoken_probe.probe(*args, seed=1, sample={"per_relation": 1, "seed": 0})
    train, test = split(facts, 0.5, 1)
    for half, rows in (("train", train), ("test", test)):
        asked = drawn[drawn["split"] == half]
        assert asked.groupby("relation")["fact_id"].nunique().max() == 1
        assert set(asked["fact_id"]) <= set(rows["fact_id"])
    asked = set(drawn["fact_id"])
    assert left_out[["what", "reason", "n"]].values.tolist() == [["fact", "not_sampled", len(facts) - len(asked)]]
    key = ["fact_id", "template"]
    same = whole[whole["split"] == "train"].merge(drawn[drawn["split"] == "train"], on=key, suffixes=("", "_drawn"))
    assert len(same) == len(drawn[drawn["split"] == "train"]) > 0
    assert same["prediction"].tolist() == same["prediction_drawn"].tolist()


def test_top1_takes_the_best_train_accuracy_and_ties_go_to_the_sets_rank():
    prompts = pd.DataFrame(
        {
            "relation": "P1",
            "template": ["a [X] [Y]", "b [X] [Y]", "c [X] [Y]"],
            "source": "mine",
            "rank": np.array([2, 0, 1], dtype=np.int32),
            "score": np.nan,
        }
    )
    correct = {"a [X] [Y]": [1, 1, 0], "b [X] [Y]": [1, 0, 1], "c [X] [Y]": [0, 0, 1]}
    train = pd.DataFrame(
        [
            {"relation": "P1", "fact_id": f"f{i}", "template": t, "method": "order", "correct_exact": bool(v)}
            for t, values in correct.items()
            for i, v in enumerate(values)
        ]
    )
    chosen = multitoken_probe.select(train, {"mine": prompts})
    # a and b both 2/3: b has the better rank in the set
    assert chosen[["template", "prompts", "train_facts"]].values.tolist() == [["b [X] [Y]", 3, 3]]
    assert chosen["train_accuracy"].iat[0] == pytest.approx(2 / 3)


def test_accuracy_is_macro_over_relations_and_micro_over_facts_per_token_count():
    rows = [
        # relation, fact, tokens, exact, substring
        ("P1", "a", 1, True, True),
        ("P1", "b", 1, False, True),
        ("P1", "c", 2, False, False),
        ("P2", "d", 1, True, True),
        ("P2", "e", 5, True, True),
    ]
    predictions = pd.DataFrame(
        {
            "relation": [r[0] for r in rows],
            "fact_id": [r[1] for r in rows],
            "split": "test",
            "template": "t",
            "method": "order",
            "definition": "d",
            "obj_tokens": [r[2] for r in rows],
            "correct_exact": [r[3] for r in rows],
            "correct_substring": [r[4] for r in rows],
        }
    )
    # a train row and a test row of a template not selected: neither counted
    predictions = pd.concat(
        [
            predictions,
            predictions.iloc[:1].assign(split="train", correct_exact=False),
            predictions.iloc[:1].assign(template="u"),
        ]
    )
    selection = pd.DataFrame({"prompt_set": "s", "method": "order", "relation": ["P1", "P2"], "template": "t"})
    table = multitoken_tables.accuracy(predictions, selection, "m", "masked").set_index("tokens")
    assert table.loc["all", "facts"] == 5 and table.loc["all", "relations"] == 2
    assert table.loc["all", "micro_exact"] == pytest.approx(100 * 3 / 5)
    assert table.loc["all", "macro_exact"] == pytest.approx(100 * (1 / 3 + 2 / 2) / 2)
    assert table.loc["all", "macro_substring"] == pytest.approx(100 * (2 / 3 + 1) / 2)
    assert table.loc["1", "facts"] == 3 and table.loc["1", "macro_exact"] == pytest.approx(100 * (0.5 + 1) / 2)
    assert table.loc["2", "micro_exact"] == 0 and table.loc["≥4", "facts"] == 1
    assert table.loc["3", "facts"] == 0 and np.isnan(table.loc["3", "micro_exact"])
    layout = multitoken_tables.accuracy_layout(table.reset_index())
    assert layout.columns.tolist() == ["model", "method", "prompt_set", "all", "1", "2", "3", "≥4"]
    assert layout.loc[0, "3"] == "–" and layout.loc[0, "all"] == "66.7 / 60.0 (5)"


def test_the_dry_run_cost_of_each_method_by_hand(wordpiece_tokenizer):
    facts = facts_table()
    part = facts[facts["relation"] == "P36"].iloc[:2]  # France, Germany
    templates = pd.DataFrame({"relation": ["P36"], "template": ["The capital of [X] is [Y] ."]})
    # "[CLS] The capital of France is [MASK] . [SEP]": 9 tokens with one mask
    n, m = 2, 3
    methods = ["statement", "mlama", "independent", "order"]
    counted = cost.multitoken_costs(part, templates, facts, methods, "masked", wordpiece_tokenizer, max_masks=m)
    independent, order = counted["independent"], counted["order"]
    assert (independent.pairs, independent.rows, independent.tokens) == (n, n * m, n * (9 + 10 + 11))
    assert (order.rows, order.tokens) == (n * (1 + 2 + 3), n * (9 + 2 * 10 + 3 * 11))
    # P36's objects are all one WordPiece token: one row a pair, 9 tokens
    assert (counted["mlama"].rows, counted["mlama"].tokens) == (n, n * 9)
    assert counted["statement"].rows == n * facts.loc[facts["relation"] == "P36", "obj_label"].nunique()
    # run together (the train half), independent's one pass is order's first: only order's passes are left
    together = cost.multitoken_costs(
        part, templates, facts, methods, "masked", wordpiece_tokenizer, max_masks=m, together=True
    )[cost.TOGETHER]
    assert (together.rows, together.tokens) == (order.rows, order.tokens)
    assert cost.TOGETHER not in counted  # not asked for
    unknown = cost.multitoken_costs(part, templates, facts, ["generate"], "causal", None, max_new_tokens=16)["generate"]
    assert (unknown.rows, unknown.tokens) == (n * 16, None) and "no tokenizer yet" in unknown.line("generate")


def test_statements_are_scored_a_chunk_of_whole_pairs_at_a_time(masked_probe, monkeypatch):
    assert multitoken_probe.chunks(np.cumsum([3, 3, 3, 5, 1]), 6) == [(0, 2), (2, 3), (3, 5)]
    assert multitoken_probe.chunks(np.cumsum([9]), 6) == [(0, 1)]  # a pair over the limit alone
    assert multitoken_probe.chunks(np.zeros(0, dtype=int), 6) == []
    scorer, facts, _, predictions, _ = masked_probe
    asked = predictions[(predictions["method"] == "statement") & (predictions["split"] == "train")]
    pairs = asked[["fact_id", "template"]].merge(facts, on="fact_id")
    sets = multitoken_probe.candidate_sets(facts)
    monkeypatch.setattr(multitoken_probe, "STATEMENTS_AT_ONCE", 5)  # a pair or two a call
    chunked = multitoken_probe.ask(scorer, "statement", pairs, sets, multitoken_probe.AskSettings())
    assert chunked["prediction"].tolist() == asked["prediction"].tolist()
    np.testing.assert_allclose(chunked["prediction_score"], asked["prediction_score"], rtol=0, atol=1e-9)


@pytest.mark.parametrize("kind", ["masked", "causal"])
def test_a_fact_or_candidate_the_model_cannot_take_is_left_out_and_counted(
    kind, tiny_bert, wordpiece_tokenizer, tiny_causal_models
):
    """Issue 54: one object or subject of 300 tokens stopped the job and the 10 good facts got no
    answer (the candidate sits in every fact's statement set); a [MASK] in a subject or a ParaRel
    pattern is left out for the masked model."""
    if kind == "masked":
        scorer, tokenizer = MaskedLM(tiny_bert, wordpiece_tokenizer, SETTINGS), wordpiece_tokenizer
    else:
        _, model, tokenizer = tiny_causal_models[0]
        scorer = CausalLM(model, tokenizer, SETTINGS)
    long_object, long_subject = " ".join(["Paris"] * 300), " ".join(["Spain"] * 300)
    good = facts_table()
    extra = good.iloc[[0, 0, 0]].copy()
    extra["sub_label"] = ["Atlantis", long_subject, "[MASK] land"]
    extra["obj_label"] = [long_object, "Madrid", "Rome"]
    extra["fact_id"] = ["P36-long-object", "P36-long-subject", "P36-mask"]
    facts = pd.concat([good, extra], ignore_index=True)
    sets = prompt_sets()
    sets["mine"] = pd.concat([sets["mine"], sets["mine"].iloc[[0]].assign(template="[X] is a [MASK] of [Y] .")])
    methods = list(multitoken_probe.METHODS[kind])
    predictions, _, left_out = multitoken_probe.probe(
        facts, token_counts(facts, tokenizer), sets, scorer, methods, train_share=0.5, seed=0
    )
    counts = {(row.what, row.reason): row.n for row in left_out.itertuples()}
    expected = {("fact", "too_long"): 2, ("candidate", "too_long"): 1}
    if kind == "masked":
        expected[("template", "mask_token")] = 1
        expected[("fact", "mask_token")] = 1
    assert counts == expected
    assert all(len(example) < 300 for example in left_out["example"])
    asked = set(predictions["fact_id"])
    assert set(good["fact_id"]) <= asked and "P36-long-object" not in asked and "P36-long-subject" not in asked
    assert ("P36-mask" in asked) == (kind == "causal")
    assert long_object not in set(predictions["prediction"])
    assert "[MASK] of" not in " ".join(predictions["template"]) or kind == "causal"
    line = multitoken_probe.left_out_line(left_out)
    assert "candidates (C_r)" in line and "\n" not in line
