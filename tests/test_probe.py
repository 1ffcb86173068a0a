import numpy as np
import pandas as pd
import pytest
import torch

from knowprobe import probe, vocab
from knowprobe.io import KnowprobeError
from knowprobe.prompts import fill_template

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
            "rank": 0,
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


def run_and_compare(model, tokenizer, settings):
    facts, prompts, candidates = benchmark(tokenizer)
    table = probe.probe(facts, prompts, model, tokenizer, candidates, settings).to_pandas()
    assert len(table) == 5 * 2 + 4
    texts = [fill_template(t, s, tokenizer.mask_token) for t, s in zip(table["template"], table["sub_label"])]
    expected = reference(
        model, tokenizer, texts, table["obj_token_id"], torch.tensor(candidates["token_id"].to_numpy(copy=True))
    )
    for row, want in zip(table.itertuples(), expected):
        assert row.gold_logprob == pytest.approx(want["gold_logprob"], abs=1e-4)
        assert row.gold_rank == want["gold_rank"]
        assert row.topk_ids[0] == want["prediction_id"]
        np.testing.assert_allclose(row.topk_logprobs, want["sorted_logprobs"][: settings.top_k], atol=1e-4)
    return table


@pytest.mark.parametrize("index", range(5), ids=["bert", "distilbert", "albert", "electra", "roberta"])
def test_probe_matches_full_forward_reference(tiny_models, index):
    name, model, tokenizer = tiny_models[index]
    assert probe.mask_head(model) is not None, f"{name}: the engine should know this head"
    table = run_and_compare(model, tokenizer, probe.ProbeSettings(batch_size=3, max_tokens=64, top_k=5))
    assert table["topk_ids"].map(len).eq(5).all()
    assert set(table["prediction"]) <= set(CANDIDATE_WORDS)


def test_unknown_head_falls_back_to_full_logits(tiny_bert, wordpiece_tokenizer, monkeypatch, caplog):
    monkeypatch.setattr(probe, "mask_head", lambda model: None)
    with caplog.at_level("WARNING"):
        run_and_compare(tiny_bert, wordpiece_tokenizer, probe.ProbeSettings(batch_size=4, top_k=3))
    assert "no known LM head" in caplog.text


def test_out_of_memory_halves_the_batch_and_goes_on(tiny_bert, wordpiece_tokenizer, monkeypatch, caplog):
    original = probe.MaskedLMScorer._score_batch
    seen = []

    def fragile(self, encoded, positions, gold, index):
        seen.append(len(index))
        if len(index) > 2:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return original(self, encoded, positions, gold, index)

    monkeypatch.setattr(probe.MaskedLMScorer, "_score_batch", fragile)
    with caplog.at_level("WARNING"):
        run_and_compare(tiny_bert, wordpiece_tokenizer, probe.ProbeSettings(batch_size=8, top_k=3))
    assert "batch_size=4" in caplog.text and "batch_size=2" in caplog.text
    assert max(seen[-3:]) <= 2


def test_other_runtime_errors_are_not_swallowed(tiny_bert, wordpiece_tokenizer, monkeypatch):
    def broken(self, *args):
        raise RuntimeError("shape mismatch")

    monkeypatch.setattr(probe.MaskedLMScorer, "_score_batch", broken)
    facts, prompts, candidates = benchmark(wordpiece_tokenizer)
    with pytest.raises(RuntimeError, match="shape mismatch"):
        probe.probe(facts, prompts, tiny_bert, wordpiece_tokenizer, candidates)


def test_batches_cover_every_input_once_within_limits():
    rng = np.random.default_rng(0)
    lengths = rng.integers(5, 40, size=500)
    batches = probe.make_batches(lengths, batch_size=16, max_tokens=300)
    flat = np.concatenate(batches)
    assert sorted(flat.tolist()) == list(range(500))
    for batch in batches:
        assert len(batch) <= 16
        assert len(batch) * lengths[batch].max() <= 300
    assert all(np.diff(lengths[flat]) >= 0)  # sorted by length: little padding


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
        probe.probe(facts, prompts, tiny_bert, wordpiece_tokenizer, candidates)


def test_dtype_and_device_choice():
    assert probe.resolve_dtype("auto", torch.device("cpu")) == torch.float32
    assert probe.resolve_dtype("bfloat16", torch.device("cpu")) == torch.bfloat16
    assert probe.resolve_device("cpu").type == "cpu"
