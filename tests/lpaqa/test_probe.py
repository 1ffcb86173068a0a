"""LPAQA's probe on the shared scoring layer: (fact, prompt) pairs, the probe contract, and the
values against a LAMA-style full-forward reference."""

import numpy as np
import pandas as pd
import pytest
import torch

from knowprobe import contracts, vocab
from knowprobe.io import KnowprobeError, record_digest
from knowprobe.lpaqa import probe
from knowprobe.lpaqa.tables import right_context_counts
from knowprobe.prompts import fill_template, object_at_end
from knowprobe.scoring import CausalLM, MaskedLM, ScoringSettings

SUBJECTS = ["France", "Germany", "Italy", "Spain", "Dante", "Mozart", "Japan", "New York", "the capital of Austria"]
OBJECTS = ["Paris", "Berlin", "Rome", "Madrid", "Florence", "Salzburg", "Tokyo", "Vienna", "Europe"]
CANDIDATE_WORDS = OBJECTS + ["Asia", "French", "German", "city", "river", "king", "1756"]


def benchmark(tokenizer):
    facts = pd.DataFrame(
        {
            "relation": ["P1"] * 5 + ["P2"] * 4,
            "fact_id": [f"f{i}" for i in range(9)],
            "sub_label": SUBJECTS,
            "obj_label": OBJECTS,
        }
    )
    candidates = vocab.candidate_table(tokenizer, CANDIDATE_WORDS)
    assert len(candidates) == len(CANDIDATE_WORDS)  # every candidate is one token of the tiny tokenizers
    facts["obj_token_id"] = vocab.word_token_ids(tokenizer, list(facts["obj_label"]))
    prompts = pd.DataFrame(
        {
            "relation": ["P1", "P1", "P2"],
            "template": ["The capital of [X] is [Y] .", "[X] , a city in [Y] .", "[X] was born in [Y] ."],
            "source": "manual",
            "rank": [0, 1, 0],
            "score": np.nan,
        }
    )
    return facts, prompts, candidates


def reference(model, tokenizer, texts, gold_ids, candidate_ids):
    """A LAMA-style computation: full forward, log-softmax over the vocabulary, restrict, argmax."""
    rows = []
    with torch.no_grad():
        for text, gold in zip(texts, gold_ids):
            encoded = tokenizer(text, return_tensors="pt")
            logits = model(**encoded).logits[0]
            position = int((encoded["input_ids"][0] == tokenizer.mask_token_id).nonzero()[0, 0])
            logprobs = torch.log_softmax(logits[position].float(), dim=-1)
            restricted = logprobs[candidate_ids]
            rows.append(
                {
                    "gold_logprob": float(logprobs[gold]),
                    "gold_rank": int((restricted > logprobs[gold]).sum()),
                    "prediction_id": int(candidate_ids[int(restricted.argmax())]),
                    "sorted_logprobs": restricted.sort(descending=True).values.numpy(),
                }
            )
    return rows


def run_and_compare(model, tokenizer, settings, top_k):
    facts, prompts, candidates = benchmark(tokenizer)
    table, hidden = probe.probe(facts, prompts, MaskedLM(model, tokenizer, settings), candidates, top_k)
    assert table.schema.equals(contracts.PROBE.arrow_schema()) and hidden.shape[0] == table.num_rows
    table = table.to_pandas()
    assert len(table) == 5 * 2 + 4
    texts = [fill_template(t, s, tokenizer.mask_token) for t, s in zip(table["template"], table["sub_label"])]
    expected = reference(
        model, tokenizer, texts, table["obj_token_id"], torch.tensor(candidates["token_id"].to_numpy(copy=True))
    )
    for row, want in zip(table.itertuples(), expected):
        assert row.gold_logprob == pytest.approx(want["gold_logprob"], abs=1e-4)
        assert row.gold_rank == want["gold_rank"]
        assert row.topk_ids[0] == want["prediction_id"]
        np.testing.assert_allclose(row.topk_logprobs, want["sorted_logprobs"][:top_k], atol=1e-4)
    return table


@pytest.mark.parametrize("index", range(5), ids=["bert", "distilbert", "albert", "electra", "roberta"])
def test_probe_matches_full_forward_reference(tiny_models, index):
    _, model, tokenizer = tiny_models[index]
    table = run_and_compare(model, tokenizer, ScoringSettings(device="cpu", batch_size=3, max_tokens=64), top_k=5)
    assert table["topk_ids"].map(len).eq(5).all()
    assert set(table["prediction"]) <= set(CANDIDATE_WORDS)


def test_facts_without_prompts_are_reported(wordpiece_tokenizer, caplog):
    facts, prompts, _ = benchmark(wordpiece_tokenizer)
    with caplog.at_level("WARNING"):
        pairs = probe.pair_facts_with_prompts(facts, prompts[prompts["relation"] == "P1"])
    assert len(pairs) == 10
    assert "4 facts of 1 relations have no prompt" in caplog.text


def test_subject_holding_the_mask_token_is_an_error(tiny_bert, wordpiece_tokenizer):
    facts, prompts, candidates = benchmark(wordpiece_tokenizer)
    facts.loc[0, "sub_label"] = "[MASK]"
    with pytest.raises(KnowprobeError, match="2 mask tokens"):
        probe.probe(facts, prompts, MaskedLM(tiny_bert, wordpiece_tokenizer), candidates, 3)


def test_a_score_of_the_other_kind_is_refused(tiny_causal_models, tiny_bert, wordpiece_tokenizer):
    _, model, tokenizer = tiny_causal_models[0]
    facts, prompts, candidates = benchmark(wordpiece_tokenizer)
    with pytest.raises(
        KnowprobeError, match="mask score ranks candidates at a mask token: it needs a model of kind masked"
    ):
        probe.probe(facts, prompts, CausalLM(model, tokenizer), candidates, 3, score="mask")
    with pytest.raises(KnowprobeError, match="next_token score .* needs a model of kind causal"):
        probe.probe(facts, prompts, MaskedLM(tiny_bert, wordpiece_tokenizer), candidates, 3, score="next_token")


def test_next_token_prefix_drops_the_right_context():
    assert probe.next_token_prefix("[X] was born in [Y] .", " Mozart ") == "Mozart was born in"
    assert probe.next_token_prefix("[X] (born [Y]).", "Mozart") == "Mozart (born"
    assert probe.next_token_prefix("[Y] is the capital of [X] .", "France") == ""
    assert object_at_end("[X] was born in [Y] .") and object_at_end("[X] plays [Y]")
    assert not object_at_end("[X] (born [Y]).") and not object_at_end("[Y] is the capital of [X] .")
    prompts = pd.DataFrame(
        {"relation": ["P1", "P1", "P2"], "template": ["[X] is in [Y] .", "[Y] holds [X] .", "[X] (born [Y])."]}
    )
    counts = right_context_counts(prompts)
    assert counts.to_dict("list") == {"relation": ["P1", "P2"], "prompts": [2, 1], "not_at_end": [1, 1]}


@pytest.mark.parametrize("index", range(3), ids=["gpt2", "llama", "qwen2"])
def test_next_token_probe_matches_a_full_forward_reference(tiny_causal_models, index, caplog):
    """A causal LM's probe: each pair's prefix (BOS, EOS where a model has none, + the prompt's text
    before [Y]) run whole, the
    candidates' log-probs as the next token; the stored hidden states give them back through the
    LM head, as the selection stage reads them."""
    _, model, tokenizer = tiny_causal_models[index]
    facts, prompts, candidates = benchmark(tokenizer)
    prompts.loc[1, "template"] = "[X] , a city in [Y] , is old ."  # [Y] before the end: right context dropped
    scorer = CausalLM(model, tokenizer, ScoringSettings(device="cpu", batch_size=3, max_tokens=64))
    with caplog.at_level("INFO"):
        table, hidden = probe.probe(facts, prompts, scorer, candidates, 5)
    assert "1 of 3 prompts have [Y] before their end" in caplog.text
    assert table.schema.equals(contracts.PROBE.arrow_schema()) and hidden.shape[0] == table.num_rows
    table = table.to_pandas()
    assert set(table["score"]) == {"next_token"}
    candidate_ids = candidates["token_id"].to_numpy(copy=True)
    start = [tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id]
    with torch.no_grad():
        for row in table.itertuples():
            prefix = probe.next_token_prefix(row.template, row.sub_label)
            ids = start + tokenizer(prefix, add_special_tokens=False)["input_ids"]
            logprobs = torch.log_softmax(model(torch.tensor([ids])).logits[0, -1].float(), dim=-1)
            restricted = logprobs[torch.from_numpy(candidate_ids)]
            assert row.gold_logprob == pytest.approx(float(logprobs[row.obj_token_id]), abs=1e-4)
            assert row.gold_rank == int((restricted > logprobs[row.obj_token_id]).sum())
            assert row.topk_ids[0] == candidate_ids[int(restricted.argmax())]
    again = scorer.candidate_logprobs_from_hidden(hidden, candidate_ids)
    column = {int(t): c for c, t in enumerate(candidate_ids)}
    gold = again[np.arange(len(table)), table["obj_token_id"].map(column).to_numpy()]
    np.testing.assert_allclose(gold, table["gold_logprob"], atol=1e-5)
    # the scoring layer's own next-token score gives the same
    prefixes = [probe.next_token_prefix(t, s) for t, s in zip(table["template"], table["sub_label"])]
    direct = scorer.next_token_logprobs(prefixes, candidate_ids, table["obj_token_id"].to_numpy())
    np.testing.assert_allclose(direct.target_logprobs[:, 0], table["gold_logprob"], atol=1e-5)


def test_hidden_states_round_trip_and_are_checked_against_their_table(tmp_path, tiny_bert, wordpiece_tokenizer):
    facts, prompts, candidates = benchmark(wordpiece_tokenizer)
    table, hidden = probe.probe(facts, prompts, MaskedLM(tiny_bert, wordpiece_tokenizer), candidates, 3)
    path = tmp_path / "test.hidden.safetensors"
    probe.write_hidden(hidden, path, table.num_rows)
    assert torch.equal(probe.read_hidden(path, table.num_rows), hidden)
    with pytest.raises(KnowprobeError, match=f"{len(hidden)} hidden states for a table of 3 rows"):
        probe.read_hidden(path, 3)
    (tmp_path / "other.safetensors").write_bytes(b"not a tensor file")
    with pytest.raises(KnowprobeError, match="no digest recorded beside it"):
        probe.read_hidden(tmp_path / "other.safetensors", 3)
    record_digest(tmp_path / "other.safetensors")
    with pytest.raises(KnowprobeError, match="not a probe's hidden states"):
        probe.read_hidden(tmp_path / "other.safetensors", 3)


def test_hidden_states_of_equal_values_are_equal_bytes(tmp_path):
    """safetensors writes its metadata in a hash map's order, which changes from one write to the
    next: a rerun's hidden states (and their recorded SHA-256) differed from the last run's though
    every value was equal. Written here 20 times, they are one file."""
    hidden = torch.arange(24, dtype=torch.float32).reshape(6, 4)
    files = set()
    for number in range(20):
        path = tmp_path / f"{number}.hidden.safetensors"
        probe.write_hidden(hidden, path, 6)
        assert torch.equal(probe.read_hidden(path, 6), hidden)
        files.add(path.read_bytes())
    assert len(files) == 1


@pytest.mark.parametrize("damage", ["flip", "truncate"])
def test_hidden_states_damaged_after_they_were_written_are_one_line_naming_the_file(
    tmp_path, tiny_bert, wordpiece_tokenizer, damage
):
    """Issue 44 item 9: 64 bytes flipped inside a probe's hidden-state file were read with rc 0
    (Table 2's Mine/Opti P@1 moved from 60.1 to 59.8); a truncated one stopped the seeded job with
    a bare traceback from known_inputs. Both readers verify the digest recorded as it was written."""
    facts, prompts, candidates = benchmark(wordpiece_tokenizer)
    table, hidden = probe.probe(facts, prompts, MaskedLM(tiny_bert, wordpiece_tokenizer), candidates, 3)
    table_path, hidden_path = tmp_path / "test.parquet", tmp_path / "test.hidden.safetensors"
    contracts.write(table, table_path, contracts.PROBE)
    probe.write_hidden(hidden, hidden_path, table.num_rows)
    data = bytearray(hidden_path.read_bytes())
    if damage == "flip":
        middle = len(data) // 2
        data[middle : middle + 64] = bytes(b ^ 0xFF for b in data[middle : middle + 64])
    else:
        data = data[: len(data) - 100]
    hidden_path.write_bytes(bytes(data))
    inputs = {
        fill_template(t, s, "[MASK]") for t, s in zip(table["template"].to_pylist(), table["sub_label"].to_pylist())
    }
    for read in (
        lambda: probe.read_hidden(hidden_path, table.num_rows),
        lambda: probe.known_inputs([(table_path, hidden_path)], inputs, lambda t, s: fill_template(t, s, "[MASK]")),
    ):
        with pytest.raises(KnowprobeError) as error:
            read()
        message = str(error.value)
        assert message.startswith(f"{hidden_path}: changed since its rule wrote it") and "\n" not in message


def test_parts_probed_together_are_the_parts_probed_alone_with_each_input_encoded_once(
    tmp_path, tiny_bert, wordpiece_tokenizer, monkeypatch
):
    """Overlapping prompt sets on two splits sharing a subject, probed at once, give each part's
    table and hidden states as a probe of that part alone; a later job reading the first job's
    files runs the encoder only on inputs they do not hold."""
    facts, prompts, candidates = benchmark(wordpiece_tokenizer)
    test, train = facts.iloc[:6], facts.iloc[5:].assign(fact_id=lambda f: "t" + f["fact_id"])  # f5 in both
    mine = prompts.iloc[[1, 2]]
    sets = {"manual": prompts.iloc[[0, 2]], "mine": mine, "mine_man": prompts}  # Mine+Man holds both
    parts = {
        f"{name}/{split}": (part, ps) for name, ps in sets.items() for split, part in [("test", test), ("train", train)]
    }
    settings = ScoringSettings(device="cpu", batch_size=3, max_tokens=64)
    scorer = MaskedLM(tiny_bert, wordpiece_tokenizer, settings)
    encoded = []
    hidden_at = scorer.hidden_at
    monkeypatch.setattr(scorer, "hidden_at", lambda seqs, pos: encoded.append(len(seqs)) or hidden_at(seqs, pos))
    together = {name: (table, hidden) for name, table, hidden in probe.probe_parts(parts, scorer, candidates, 4)}
    monkeypatch.undo()
    assert list(together) == list(parts)
    pairs = sum(table.num_rows for table, _ in together.values())
    distinct = {
        (t, s)
        for table, _ in together.values()
        for t, s in zip(*table.select(["template", "sub_label"]).to_pydict().values())
    }
    assert sum(encoded) == len(distinct) < pairs
    for name, (part_facts, part_prompts) in parts.items():
        alone, hidden = probe.probe(part_facts, part_prompts, scorer, candidates, 4)
        table = together[name][0]
        assert table.drop_columns(["gold_logprob", "topk_logprobs"]).equals(
            alone.drop_columns(["gold_logprob", "topk_logprobs"])
        )
        np.testing.assert_allclose(table["gold_logprob"].to_numpy(), alone["gold_logprob"].to_numpy(), atol=1e-5)
        torch.testing.assert_close(together[name][1], hidden, atol=1e-5, rtol=0)
    # a second job: Mine+Para-like prompts (Mine's plus a new one) reading the first job's files
    reused = []
    for name in ["manual/test", "mine/test"]:
        table, hidden = together[name]
        table_path, hidden_path = (
            tmp_path / f"{name.replace('/', '_')}.parquet",
            tmp_path / f"{name.replace('/', '_')}.st",
        )
        contracts.write(table, table_path, contracts.PROBE)
        probe.write_hidden(hidden, hidden_path, table.num_rows)
        reused.append((table_path, hidden_path))
    para = pd.concat([mine, prompts.iloc[[0]].assign(template="[X] has its capital , [Y] .")])
    encoded.clear()
    monkeypatch.setattr(scorer, "hidden_at", lambda seqs, pos: encoded.append(len(seqs)) or hidden_at(seqs, pos))
    [(_, seeded, _)] = probe.probe_parts({"mine_para/test": (test, para)}, scorer, candidates, 4, reused)
    monkeypatch.undo()
    alone, _ = probe.probe(test, para, scorer, candidates, 4)
    assert seeded.drop_columns(["gold_logprob", "topk_logprobs"]).equals(
        alone.drop_columns(["gold_logprob", "topk_logprobs"])
    )
    new_inputs = int((seeded["template"].to_numpy() == "[X] has its capital , [Y] .").sum())
    assert sum(encoded) == new_inputs == 5  # the P1 facts of test; Mine's inputs came from the files


def test_google_re_relations_take_their_own_prompts_and_those_of_the_relation_they_map_to():
    prompts = pd.DataFrame(
        {
            "relation": ["P19", "P19", "place_of_birth", "P20"],
            "template": ["[X] was born in [Y] .", "[X] grew up in [Y] .", "[X] was born in [Y] .", "[X] died in [Y] ."],
            "source": ["mid", "mid", "manual", "mid"],
            "rank": [0, 1, 0, 0],
            "score": np.nan,
        }
    )
    view = probe.prompts_for(prompts, {"place_of_birth": "P19", "place_of_death": "P20", "date_of_birth": "P569"})
    by_relation = view.groupby("relation")["template"].apply(list).to_dict()
    assert by_relation["place_of_birth"] == ["[X] was born in [Y] .", "[X] grew up in [Y] ."]  # own first, no repeat
    assert by_relation["place_of_death"] == ["[X] died in [Y] ."]
    assert "date_of_birth" not in by_relation  # P569 has no prompts in this set
    assert view.loc[view["relation"] == "place_of_birth", "source"].tolist() == ["manual", "mid"]


def test_a_prompt_set_without_prompts_for_these_facts_gives_empty_outputs_and_says_so(
    tiny_bert, wordpiece_tokenizer, caplog
):
    facts, prompts, candidates = benchmark(wordpiece_tokenizer)
    with caplog.at_level("WARNING"):
        table, hidden = probe.probe(
            facts, prompts.assign(relation="P9"), MaskedLM(tiny_bert, wordpiece_tokenizer), candidates, 3
        )
    assert table.num_rows == 0 and table.schema.equals(contracts.PROBE.arrow_schema())
    assert hidden.shape == (0, tiny_bert.config.hidden_size)
    assert "no prompt for any of the 2 relations" in caplog.text


def test_a_split_without_facts_is_said_without_a_warning(tiny_bert, wordpiece_tokenizer, caplog):
    """Issue 55: a probe asked for no training split (lpaqa.trex_train.source: none) logged a
    WARNING that the prompt set had no prompt for "any of the 0 relations" of its empty split."""
    facts, prompts, candidates = benchmark(wordpiece_tokenizer)
    scorer = MaskedLM(tiny_bert, wordpiece_tokenizer)
    parts = {"manual/trex_test": (facts, prompts), "manual/trex_train_dev": (facts.iloc[:0], prompts)}
    with caplog.at_level("INFO"):
        tables = {name: table for name, table, _ in probe.probe_parts(parts, scorer, candidates, 3)}
        statements = {name: table for name, table, _ in probe.probe_statements(parts, scorer, 3)}
    assert tables["manual/trex_train_dev"].num_rows == 0 and tables["manual/trex_test"].num_rows > 0
    assert statements["manual/trex_train_dev"].num_rows == 0
    assert not [r for r in caplog.records if r.levelname == "WARNING"], caplog.text
    assert caplog.text.count("manual/trex_train_dev: no facts in this split; the outputs are empty") == 2


def statement_benchmark(tokenizer):
    """``benchmark``'s facts with objects of several words (a closed candidate set needs no single
    token)."""
    facts, prompts, candidates = benchmark(tokenizer)
    facts.loc[1, "obj_label"] = "New York"
    facts.loc[6, "obj_label"] = "the capital of Austria"
    facts.loc[7, "obj_label"] = "Salzburg"  # two P2 facts share a gold object
    facts["obj_token_id"] = -1
    return facts, prompts


@pytest.mark.parametrize("kind", ["masked", "causal"])
def test_statement_probe_ranks_each_relations_candidate_set(tiny_bert, wordpiece_tokenizer, tiny_causal_models, kind):
    """The statement score: every candidate of C_r (the relation's distinct gold objects) filled
    into the whole prompt and scored by the scoring layer; the table holds the gold's column, ℓ
    and rank, and the stored scores give ℓ back for the selection stage."""
    from knowprobe.statements import fill_statement

    if kind == "masked":
        scorer = MaskedLM(tiny_bert, wordpiece_tokenizer, ScoringSettings(device="cpu", batch_size=8))
    else:
        _, model, tokenizer = tiny_causal_models[0]
        scorer = CausalLM(model, tokenizer, ScoringSettings(device="cpu", batch_size=8))
    facts, prompts = statement_benchmark(scorer.tokenizer)
    [(_, table, scores)] = probe.probe_statements({"part": (facts, prompts)}, scorer, top_k=3)
    assert table.schema.equals(contracts.PROBE.arrow_schema())
    table = table.to_pandas()
    assert len(table) == 5 * 2 + 4 and set(table["score"]) == {"statement"}
    sets = {"P1": sorted(facts["obj_label"][:5]), "P2": sorted(set(facts["obj_label"][5:]))}
    assert len(sets["P2"]) == 3 and scores.shape == (14, 5) and scores.dtype == torch.float64
    for row, stored in zip(table.itertuples(), scores.numpy()):
        labels = sets[row.relation]
        texts = [fill_statement(row.template, row.sub_label, label).text for label in labels]
        want = scorer.statement_logprob(texts)
        np.testing.assert_allclose(stored[: len(labels)], want, rtol=0, atol=1e-5)  # packed rows differ
        assert np.isnan(stored[len(labels) :]).all()
        ell = want - np.log(np.exp(want).sum())
        gold = labels.index(row.obj_label)
        assert row.obj_token_id == gold
        assert row.gold_logprob == pytest.approx(ell[gold], abs=1e-5)
        assert row.gold_rank == int((want > want[gold]).sum())
        assert row.prediction == labels[int(np.argmax(want))] and row.topk_ids[0] == int(np.argmax(want))
        np.testing.assert_allclose(row.topk_logprobs, np.sort(ell)[::-1][:3], atol=1e-5)
    p2 = table["relation"].to_numpy() == "P2"
    np.testing.assert_allclose(
        probe.statement_logprobs(scores[p2]).max(axis=1), table.loc[p2, "topk_logprobs"].map(max), atol=1e-5
    )


def counting_statements(scorer, monkeypatch) -> list[int]:
    """The number of statements of each ``statement_logprob`` call of ``scorer``, as they come."""
    asked = []
    statement_logprob = scorer.statement_logprob
    monkeypatch.setattr(
        scorer, "statement_logprob", lambda texts, **kw: asked.append(len(texts)) or statement_logprob(texts, **kw)
    )
    return asked


def assert_each_part_as_probed_alone(parts: dict, probed: dict, scorer) -> None:
    """Each part's table and statement scores in ``probed`` are those of a probe of the part alone."""
    for name, part in parts.items():
        [(_, alone, alone_scores)] = probe.probe_statements({name: part}, scorer, top_k=3)
        table, scores = probed[name]
        assert table.drop_columns(["gold_logprob", "topk_logprobs"]).equals(
            alone.drop_columns(["gold_logprob", "topk_logprobs"])
        ), name
        np.testing.assert_allclose(scores.numpy(), alone_scores.numpy(), rtol=0, atol=1e-5)


def test_statements_that_several_parts_ask_for_are_scored_once(tiny_causal_models, monkeypatch):
    """A (template, subject, C_r) in two parts (the same prompt in two prompt sets on one split) is
    scored for the first part only; a part on other facts (another C_r) scores its own; every
    part's table and scores are the ones it gives probed alone."""
    _, model, tokenizer = tiny_causal_models[0]
    scorer = CausalLM(model, tokenizer, ScoringSettings(device="cpu", batch_size=8))
    facts, prompts = statement_benchmark(tokenizer)
    other = prompts.assign(template=prompts["template"].str.replace(" .", " , they say .", regex=False))
    parts = {
        "first": (facts, prompts),
        "both": (facts, pd.concat([prompts, other], ignore_index=True)),
        "fewer_facts": (facts.iloc[[0, 1, 2, 5, 6]], prompts),
    }
    asked = counting_statements(scorer, monkeypatch)
    together = {name: (table, scores) for name, table, scores in probe.probe_statements(parts, scorer, top_k=3)}
    monkeypatch.undo()
    # first: P1's 5 subjects x 2 prompts x |C_r| 5, P2's 4 subjects x 1 prompt x 3; both: only the new
    # templates' as many again (not twice as many); fewer_facts: its own C_r (3 P1 objects, 2 P2 ones)
    assert asked == [5 * 2 * 5 + 4 * 3] * 2 + [3 * 2 * 3 + 2 * 2]
    assert_each_part_as_probed_alone(parts, together, scorer)


def test_a_declared_answer_space_is_the_candidate_set(tmp_path, tiny_causal_models, caplog):
    _, model, tokenizer = tiny_causal_models[0]
    scorer = CausalLM(model, tokenizer, ScoringSettings(device="cpu"))
    facts, prompts = statement_benchmark(tokenizer)
    path = tmp_path / "space.json"
    path.write_text('{"P2": ["Salzburg", "Europe", "Vienna", "Rome"]}')
    spaces = probe.read_answer_space(path)
    with caplog.at_level("WARNING"):
        [(_, table, scores)] = probe.probe_statements({"part": (facts, prompts)}, scorer, 3, answer_spaces=spaces)
    assert "1 facts left out, their gold object not in the declared answer space: P2 1" in caplog.text
    table = table.to_pandas()
    p2 = table[table["relation"] == "P2"]
    assert len(p2) == 3 and p2["obj_token_id"].tolist() == [0, 0, 1]  # Salzburg, Salzburg, Europe in its order
    assert (~np.isnan(scores[(table["relation"] == "P2").to_numpy()].numpy())).sum(axis=1).tolist() == [4, 4, 4]
    path.write_text('{"P2": ["Rome", "Rome"]}')
    with pytest.raises(KnowprobeError, match="lists an object twice"):
        probe.read_answer_space(path)


def test_a_drawn_runs_statements_rank_the_whole_splits_candidate_set(tiny_causal_models):
    """lpaqa.probe.sample: a run probed on a draw of the facts ranks each over its relation's C_r of
    every fact the filter kept (``objects``), not of the draw: its rows are those of the probe of
    all the facts, for the facts drawn."""
    from knowprobe.lpaqa import lama

    _, model, tokenizer = tiny_causal_models[0]
    scorer = CausalLM(model, tokenizer, ScoringSettings(device="cpu", batch_size=8))
    facts, prompts = statement_benchmark(tokenizer)
    [(_, whole, whole_scores)] = probe.probe_statements({"part": (facts, prompts)}, scorer, top_k=3)
    drawn = facts.iloc[[0, 3, 6]]
    objects = {"part": lama.objects_by_relation(facts)}
    [(_, table, scores)] = probe.probe_statements({"part": (drawn, prompts)}, scorer, 3, objects=objects)
    whole, table = whole.to_pandas(), table.to_pandas()
    rows = whole["fact_id"].isin(drawn["fact_id"]).to_numpy()
    assert len(table) == 2 * 2 + 1 and table["fact_id"].tolist() == whole.loc[rows, "fact_id"].tolist()
    for column in ["obj_token_id", "gold_rank", "topk_ids"]:
        assert table[column].astype(str).tolist() == whole.loc[rows, column].astype(str).tolist(), column
    np.testing.assert_allclose(scores.numpy(), whole_scores.numpy()[rows], atol=1e-9)
    # without them, C_r shrinks to the draw's own objects
    [(_, alone, _)] = probe.probe_statements({"part": (drawn, prompts)}, scorer, top_k=3)
    assert alone.to_pandas()["topk_ids"].map(len).max() < table["topk_ids"].map(len).max()


def test_a_statement_probe_reads_an_earlier_probes_statement_scores(tmp_path, tiny_causal_models, monkeypatch):
    """The seeded job under the statement score: (template, subject, relation) inputs the first
    job's files hold with the same |C_r| are read from its stored scores s, the rest scored; the
    table and scores are the ones a probe of the set alone gives, and a stored row over another C_r
    (a part on other facts) is scored again."""
    _, model, tokenizer = tiny_causal_models[0]
    scorer = CausalLM(model, tokenizer, ScoringSettings(device="cpu", batch_size=8))
    facts, prompts = statement_benchmark(tokenizer)
    [(_, first, first_scores)] = probe.probe_statements({"first": (facts, prompts.iloc[[0]])}, scorer, top_k=3)
    paths = (tmp_path / "first.parquet", tmp_path / "first.st")
    contracts.write(first, paths[0], contracts.PROBE)
    probe.write_hidden(first_scores, paths[1], first.num_rows)
    other = prompts.iloc[[0]].assign(template=prompts["template"].iat[0].replace(" .", " , they say ."))
    para = pd.concat([prompts.iloc[[0]], other], ignore_index=True)
    asked = counting_statements(scorer, monkeypatch)
    parts = {"para": (facts, para), "fewer_facts": (facts.iloc[[0, 1, 2]], prompts.iloc[[0]])}
    seeded = {
        name: (table, scores)
        for name, table, scores in probe.probe_statements(
            parts, scorer, top_k=3, reused={"para": [paths], "fewer_facts": [paths]}
        )
    }
    monkeypatch.undo()
    relation = prompts["relation"].iat[0]
    subjects = facts.loc[facts["relation"] == relation, "sub_label"].nunique()
    width = facts.loc[facts["relation"] == relation, "obj_label"].nunique()
    fewer = facts.iloc[[0, 1, 2]]
    # para: only the new template's statements; fewer_facts: its C_r is smaller, scored again
    assert asked == [subjects * width, fewer["sub_label"].nunique() * fewer["obj_label"].nunique()]
    assert_each_part_as_probed_alone(parts, seeded, scorer)


def test_a_next_token_probe_reads_an_earlier_probes_hidden_states(tmp_path, tiny_causal_models, monkeypatch):
    """The seeded job under the next-token score: prefixes an earlier probe holds are read from its
    files (only the LM head runs on them), the rest run through the model; the table is the one a
    probe of the set alone gives."""
    _, model, tokenizer = tiny_causal_models[1]
    facts, prompts, candidates = benchmark(tokenizer)
    scorer = CausalLM(model, tokenizer, ScoringSettings(device="cpu", batch_size=4))
    first, hidden = probe.probe(facts, prompts.iloc[[0, 2]], scorer, candidates, 4)
    paths = (tmp_path / "first.parquet", tmp_path / "first.st")
    contracts.write(first, paths[0], contracts.PROBE)
    probe.write_hidden(hidden, paths[1], first.num_rows)
    para = pd.concat([prompts.iloc[[0]], prompts.iloc[[0]].assign(template="[X] has its capital , [Y] .")])
    run = []
    hidden_states = scorer.hidden_states
    monkeypatch.setattr(scorer, "hidden_states", lambda batch: run.append(len(batch.starts)) or hidden_states(batch))
    [(_, seeded, _)] = probe.probe_parts({"para": (facts, para)}, scorer, candidates, 4, [paths])
    monkeypatch.undo()
    alone, _ = probe.probe(facts, para, scorer, candidates, 4)
    assert seeded.drop_columns(["gold_logprob", "topk_logprobs"]).equals(
        alone.drop_columns(["gold_logprob", "topk_logprobs"])
    )
    np.testing.assert_allclose(seeded["gold_logprob"].to_numpy(), alone["gold_logprob"].to_numpy(), atol=1e-5)
    assert sum(run) == 5  # the new prompt's P1 prefixes; the first prompt's came from the files
