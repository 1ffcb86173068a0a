"""What each LPAQA score costs (knowprobe.lpaqa.cost), against the statements and tokens the
probe and the scoring layer actually make."""

import numpy as np
import pandas as pd

from knowprobe.lpaqa import cost, probe
from knowprobe.scoring.causal import prefix_tree_rows
from knowprobe.statements import fill_statement

FACTS = pd.DataFrame(
    {
        "relation": ["P1", "P1", "P1", "P2", "P2"],
        "fact_id": ["a", "b", "c", "d", "e"],
        "sub_label": ["France", "Germany", "Italy", "Mozart", "Dante"],
        "obj_label": ["Paris", "Berlin", "Paris", "Salzburg", "Florence"],
    }
)
PROMPTS = pd.DataFrame(
    {
        "relation": ["P1", "P1", "P2"],
        "template": ["[X] has the capital [Y] .", "[X] , a country of [Y] , is old .", "[X] was born in [Y] ."],
    }
)


def test_statement_cost_counts_the_statements_and_tokens_the_probe_makes(tiny_causal_models):
    _, _, tokenizer = tiny_causal_models[0]
    start = tokenizer.bos_token_id
    pairs = probe.pair_facts_with_prompts(FACTS.assign(obj_token_id=-1), PROMPTS.assign(source="m", rank=0))
    sets = probe.candidate_sets(FACTS)
    assert sets == {"P1": ["Berlin", "Paris"], "P2": ["Florence", "Salzburg"]}
    got = cost.cost(FACTS, PROMPTS, "statement", "causal", tokenizer)
    assert got.pairs == len(pairs) == 8 and got.inputs == 8 * 2
    whole, placed = 0, 0
    for template, subject, relation in zip(pairs["template"], pairs["sub_label"], pairs["relation"]):
        ids = [
            [start] + tokenizer(fill_statement(template, subject, c).text, add_special_tokens=False)["input_ids"]
            for c in sets[relation]
        ]
        whole += sum(map(len, ids))
        placed += int(prefix_tree_rows(ids, [1] * len(ids), 128, 0, share=True).used.sum())  # one pair's statements
    assert got.tokens == whole and got.shared_tokens == placed < whole
    assert cost.cost(FACTS, PROMPTS, "statement", "causal").tokens is None  # no tokenizer: statements only


def test_a_drawn_runs_statement_cost_counts_the_whole_candidate_set(tiny_causal_models):
    """lpaqa.probe.sample: a run asked a draw of the facts still ranks over C_r of every fact (the
    probe's ``objects``), and the dry run counts that: a pair's statements are |C_r| of all."""
    from knowprobe.lpaqa import lama

    _, _, tokenizer = tiny_causal_models[0]
    drawn = FACTS.iloc[[0, 3]]
    objects = lama.objects_by_relation(FACTS)
    alone = cost.run_cost([(drawn, PROMPTS)], "statement", "causal", tokenizer)
    whole = cost.run_cost([(drawn, PROMPTS)], "statement", "causal", tokenizer, objects=[objects])
    assert (alone.pairs, alone.inputs) == (3, 3) and (whole.pairs, whole.inputs) == (3, 3 * 2)
    assert whole.tokens > alone.tokens


def test_next_token_and_masked_statement_costs(tiny_causal_models, wordpiece_tokenizer):
    _, _, tokenizer = tiny_causal_models[0]
    got = cost.cost(FACTS, PROMPTS, "next_token", "causal", tokenizer)
    prefixes = {
        probe.next_token_prefix(t, s)
        for t, s in zip(*cost.pairs_of(FACTS, PROMPTS)[["template", "sub_label"]].T.values)
    }
    assert got.pairs == 8 and got.inputs == len(prefixes) == 8
    assert got.tokens == sum(1 + len(tokenizer(p, add_special_tokens=False)["input_ids"]) for p in prefixes)
    masked = cost.cost(FACTS, PROMPTS, "statement", "masked", wordpiece_tokenizer)
    lengths = [
        len(wordpiece_tokenizer(fill_statement(t, s, c).text)["input_ids"])
        for t, s, r in zip(*cost.pairs_of(FACTS, PROMPTS)[["template", "sub_label", "relation"]].T.values)
        for c in probe.candidate_sets(FACTS)[r]
    ]
    assert masked.tokens == sum((n - 2) * n for n in np.array(lengths))  # a copy per own token, each whole


def test_mask_cost_counts_distinct_inputs(wordpiece_tokenizer):
    doubled = pd.concat([FACTS, FACTS.assign(fact_id=FACTS["fact_id"] + "2", obj_label="Rome")])  # same subjects
    got = cost.cost(doubled, PROMPTS, "mask", "masked", wordpiece_tokenizer)
    assert got.pairs == 16 and got.inputs == 8
    filled = {
        t.replace("[X]", s).replace("[Y]", "[MASK]")
        for t, s in cost.pairs_of(FACTS, PROMPTS)[["template", "sub_label"]].values
    }
    assert got.tokens == sum(len(wordpiece_tokenizer(text)["input_ids"]) for text in filled)


def test_statement_cost_counts_an_input_several_parts_share_once(tiny_causal_models):
    """A (prompt, subject, C_r) that two parts ask for (a prompt in two prompt sets on one split)
    and a subject with two facts in a relation (an N-M relation) are scored once by the probe
    (probe.probe_statements), and so counted once; a part on other facts has another C_r."""
    _, _, tokenizer = tiny_causal_models[0]
    alone = cost.cost(FACTS, PROMPTS, "statement", "causal", tokenizer)
    other = PROMPTS.iloc[[0]].assign(template="[X] is ruled from [Y] .")
    both = pd.concat([PROMPTS, other], ignore_index=True)
    run = cost.run_cost([(FACTS, PROMPTS), (FACTS, both)], "statement", "causal", tokenizer)
    extra = cost.cost(FACTS, other, "statement", "causal", tokenizer)
    assert run.pairs == 8 + 8 + 3  # every pair asked for
    assert (run.inputs, run.tokens, run.shared_tokens) == (
        alone.inputs + extra.inputs,
        alone.tokens + extra.tokens,
        alone.shared_tokens + extra.shared_tokens,
    )
    fewer = FACTS.iloc[[0, 1, 3, 4]]  # both C_r as before (Berlin, Paris; Florence, Salzburg): nothing new
    assert cost.run_cost([(FACTS, PROMPTS), (fewer, PROMPTS)], "statement", "causal", tokenizer).inputs == 16
    smaller = FACTS.iloc[[0, 3, 4]]  # P1's C_r is {Paris} now: France's 2 prompts x 1 candidate again
    assert cost.run_cost([(FACTS, PROMPTS), (smaller, PROMPTS)], "statement", "causal", tokenizer).inputs == 16 + 2
    twice = pd.concat([FACTS, FACTS.iloc[[0]].assign(fact_id="a2", obj_label="Berlin")])  # France: 2 P1 facts
    doubled = cost.cost(twice, PROMPTS, "statement", "causal", tokenizer)
    assert doubled.pairs == 10 and doubled.inputs == alone.inputs
