"""Multi-token answers (knowprobe.scoring.decoding) against independent references:

* a stub masked LM whose log-probs at each mask are a fixed table given the number of masks and
  the token at the other mask, where ``independent``, ``order`` and ``confidence`` give three
  different hand-worked answers (and ``length_by`` two different lengths);
* the three methods against a plain one-prompt-at-a-time decoder written here from the
  definition (the full model's forward, one step at a time) on a tiny BERT trained for a few
  dozen steps, token ids and per-position log-probs within 1e-5;
* the mLAMA score against a direct computation;
* greedy generation against a plain per-prefix loop on tiny causal models, with stops.
"""

from __future__ import annotations

import math
import types

import numpy as np
import pytest
import torch

from knowprobe.io import KnowprobeError
from knowprobe.scoring import (
    CausalLM,
    MaskedLM,
    ScoringSettings,
    causal_generate,
    masked_decode,
    masked_decode_jointly,
    mlama_scores,
)
from knowprobe.scoring.decoding import cut_answer

from conftest import SPECIALS, _tiny

TOLERANCE = 1e-5
SETTINGS = ScoringSettings(device="cpu", batch_size=5, max_tokens=10_000)

# --- the stub: a fixed table of distributions ----------------------------------------------------

STUB_WORDS = ["q", "is", ".", "a", "b", "c", "d", "x", "y"]
STUB_VOCAB = SPECIALS + STUB_WORDS
ID = {token: i for i, token in enumerate(STUB_VOCAB)}
# (masks, slot, token at the other slot) -> the probabilities the stub gives (the rest of the mass
# spread evenly over every other token, specials included); anything else: uniform
TABLE = {
    (1, 0, None): {"[UNK]": 0.5, "x": 0.3},  # [UNK] is the most probable, and never predicted
    (2, 0, "[MASK]"): {"[MASK]": 0.45, "a": 0.3, "d": 0.2},
    (2, 1, "[MASK]"): {"b": 0.6, "c": 0.3},
    (2, 1, "a"): {"c": 0.5, "b": 0.2},
    (2, 0, "b"): {"d": 0.7, "a": 0.1},
}


def distribution(probabilities: dict[str, float]) -> torch.Tensor:
    rest = (1 - sum(probabilities.values())) / (len(STUB_VOCAB) - len(probabilities))
    out = torch.full((len(STUB_VOCAB),), rest)
    for token, p in probabilities.items():
        out[ID[token]] = p
    return out


class StubEncoder(torch.nn.Module):
    """Its "hidden states" are the log-probs of the table at the slots between "is" and ".", so
    that the LM head (an identity) gives them as logits."""

    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(1))  # a device for the scorer to find
        self.forwards = 0
        self.rows = 0  # rows run, over every forward

    def forward(self, input_ids, attention_mask=None):
        self.forwards += 1
        self.rows += input_ids.shape[0]
        out = torch.zeros((*input_ids.shape, len(STUB_VOCAB)))
        for row, ids in enumerate(input_ids.tolist()):
            if ID["is"] not in ids or ID["."] not in ids:
                continue  # no slots (the scorer's probe input at load): uniform, as anywhere else
            begin, end = ids.index(ID["is"]) + 1, ids.index(ID["."])
            slots = list(range(begin, end))
            for j, position in enumerate(slots):
                other = STUB_VOCAB[ids[slots[1 - j]]] if len(slots) == 2 else None
                probabilities = TABLE.get((len(slots), j, other))
                dist = distribution(probabilities) if probabilities else torch.full((len(STUB_VOCAB),), 1.0)
                out[row, position] = torch.log(dist / dist.sum())
        return (out,)


class StubMaskedLM(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.config = types.SimpleNamespace(max_position_embeddings=64)
        self.base_model = StubEncoder()
        self.cls = torch.nn.Identity()  # the head MaskedLM finds (BERT's attribute name)
        self.embeddings = torch.nn.Embedding(len(STUB_VOCAB), 1)

    def get_input_embeddings(self):
        return self.embeddings

    def forward(self, input_ids, attention_mask=None):
        """The model's own logits: its head on its encoder's states (what the scorer checks its head by)."""
        return types.SimpleNamespace(logits=self.cls(self.base_model(input_ids, attention_mask)[0]))


@pytest.fixture(scope="module")
def stub():
    from transformers import BertTokenizerFast

    tokenizer = BertTokenizerFast(vocab=dict(ID), do_lower_case=False)
    assert len(tokenizer) == len(STUB_VOCAB)
    # one batch whatever the padding, to count its forwards
    return MaskedLM(StubMaskedLM(), tokenizer, ScoringSettings(device="cpu", max_padding=float("inf")))


L = math.log
# the hand-worked answers with two masks, their log-probs, and the step that filled each mask:
# independent: both masks from the all-masked forward: a (0.3; [MASK] 0.45 is excluded), b (0.6);
# order: a first (0.3), then the second mask sees a: c (0.5);
# confidence: the second mask's best (b, 0.6) beats the first's (a, 0.3), so b first; then the
# first mask sees b: d (0.7).
HAND_WORKED = {
    "independent": ("a b", [L(0.3), L(0.6)], [0, 0]),
    "order": ("a c", [L(0.3), L(0.5)], [0, 1]),
    "confidence": ("d b", [L(0.7), L(0.6)], [1, 0]),
}


@pytest.mark.parametrize("method", list(HAND_WORKED))
def test_stub_gives_the_hand_worked_answers(stub, method):
    text, logprobs, steps = HAND_WORKED[method]
    stub.model.base_model.forwards = 0
    # two prompts of different lengths (padding), two lengths each: four rows in one batch
    out = masked_decode(stub, ["q is [Y] .", "q q is [Y] ."], max_masks=2, method=method, length_by="mean")
    # one forward per step for the whole batch: one for independent, one per mask otherwise
    assert stub.model.base_model.forwards == (1 if method == "independent" else 2)
    for i in range(2):
        assert out.candidate_texts[i] == ["x", text]
        assert out.candidate_ids[i, 0, 0] == ID["x"]  # not [UNK], though more probable
        # the log-prob over the whole vocabulary ([UNK] included): log 0.3, not log(0.3 / 0.5)
        assert out.candidate_logprobs[i, 0, 0] == pytest.approx(L(0.3), abs=1e-6)
        np.testing.assert_allclose(out.candidate_logprobs[i, 1], logprobs, atol=1e-6)
        np.testing.assert_array_equal(out.fill_steps[i, 1], steps)
        assert out.lengths[i] == 2 and out.texts[i] == text  # mean: the two masks beat log 0.3
        assert out.score[i] == pytest.approx(np.mean(logprobs), abs=1e-6)
    assert len({answer for answer, _, _ in HAND_WORKED.values()}) == 3


def test_stub_methods_together_share_their_identical_forwards(stub):
    """The three methods in one run give each its hand-worked answer, and a row whose input
    another method's row also has runs once: step 0's four inputs (2 prompts x 1..2 masks) are the
    same for all three methods; at step 1 order's "a [MASK]" and confidence's "[MASK] b" differ.
    So 8 rows run in 2 forwards, where the methods one by one run 4 + 6 + 6 = 16 in 5."""
    prompts = ["q is [Y] .", "q q is [Y] ."]
    stub.model.base_model.forwards = stub.model.base_model.rows = 0
    together = masked_decode_jointly(stub, prompts, list(HAND_WORKED), max_masks=2, length_by="mean")
    assert (stub.model.base_model.forwards, stub.model.base_model.rows) == (2, 8)
    stub.model.base_model.forwards = stub.model.base_model.rows = 0
    alone = {method: masked_decode(stub, prompts, 2, method, "mean") for method in HAND_WORKED}
    assert (stub.model.base_model.forwards, stub.model.base_model.rows) == (5, 16)
    for method, (text, logprobs, steps) in HAND_WORKED.items():
        out = together[method]
        assert out.texts == [text, text]
        for field in ("candidate_ids", "fill_steps", "lengths"):
            np.testing.assert_array_equal(getattr(out, field), getattr(alone[method], field))
        np.testing.assert_allclose(out.candidate_logprobs, alone[method].candidate_logprobs, atol=1e-6)
        np.testing.assert_allclose(out.candidate_logprobs[:, 1], [logprobs, logprobs], atol=1e-6)
        np.testing.assert_array_equal(out.fill_steps[:, 1], [steps, steps])
    # a prompt asked twice runs once
    stub.model.base_model.rows = 0
    masked_decode(stub, ["q is [Y] ."] * 3, max_masks=2, method="independent")
    assert stub.model.base_model.rows == 2


def test_stub_length_by_sum_prefers_one_mask(stub):
    out = masked_decode(stub, ["q is [Y] ."], max_masks=2, method="independent", length_by="sum")
    assert out.texts == ["x"] and out.lengths.tolist() == [1]
    assert out.scores[0, 1] == pytest.approx(L(0.3) + L(0.6), abs=1e-6)


def test_decode_errors(stub):
    with pytest.raises(KnowprobeError, match="method"):
        masked_decode(stub, ["q is [Y] ."], method="beam")
    with pytest.raises(KnowprobeError, match="exactly one"):
        masked_decode(stub, ["q is ."])
    with pytest.raises(KnowprobeError, match="method='beam'"):
        masked_decode_jointly(stub, ["q is [Y] ."], ["order", "beam"])


# --- a tiny trained BERT against a plain one-prompt-at-a-time decoder --------------------------

SENTENCES = [
    "Dante was born in Florence .",
    "Mozart was born in Salzburg .",
    "The capital of France is Paris .",
    "The capital of Italy is Rome .",
    "The capital of Germany is Berlin .",
    "The official language of Spain is Spanish .",
    "Tokyo is the capital of Japan .",
    "New York is a city .",
]
PROMPTS = [
    "Dante was born in [Y] .",
    "The capital of France is [Y] .",
    "[Y] is the capital of Japan .",
    "Mozart was born in [Y]",
    "The official language of Spain is [Y] .",
    "The capital of Austria is [Y] , a city .",
]


@pytest.fixture(scope="module")
def trained_bert(wordpiece_tokenizer):
    """A 2-layer BERT trained for 40 steps of masked-token prediction on a handful of sentences,
    so that its predictions are far from uniform."""
    from transformers import BertConfig, BertForMaskedLM

    model = _tiny(BertConfig, BertForMaskedLM, len(wordpiece_tokenizer), seed=21)
    batch = wordpiece_tokenizer(SENTENCES, padding=True, return_tensors="pt")
    special = torch.as_tensor(
        [[t in wordpiece_tokenizer.all_special_ids for t in row] for row in batch["input_ids"].tolist()]
    )
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    generator = torch.Generator().manual_seed(0)
    model.train()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # so small a model trains several times faster on one thread
    for _ in range(40):
        masked = (torch.rand(batch["input_ids"].shape, generator=generator) < 0.3) & ~special
        inputs = batch["input_ids"].masked_fill(masked, wordpiece_tokenizer.mask_token_id)
        labels = batch["input_ids"].masked_fill(~masked, -100)
        loss = model(input_ids=inputs, attention_mask=batch["attention_mask"], labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    torch.set_num_threads(threads)
    return model.eval()


@torch.inference_mode()
def reference_decode(model, tokenizer, prompt: str, max_masks: int, method: str, length_by: str):
    """X-FACTR's decoding of one prompt, from the definition: the prompt's [Y] written as m mask
    tokens, the full model run once per step, specials never chosen."""
    allowed = torch.ones(len(tokenizer), dtype=torch.bool)
    allowed[tokenizer.all_special_ids] = False
    candidates = []
    for m in range(1, max_masks + 1):
        ids = tokenizer(prompt.replace("[Y]", " ".join([tokenizer.mask_token] * m)), return_tensors="pt")["input_ids"][
            0
        ]
        slots = torch.nonzero(ids == tokenizer.mask_token_id)[:, 0].tolist()
        assert len(slots) == m
        tokens, logprobs, remaining = {}, {}, list(slots)
        while remaining:
            logp = torch.log_softmax(model(input_ids=ids[None]).logits[0].float(), dim=-1)
            best = {p: int(logp[p].masked_fill(~allowed, -math.inf).argmax()) for p in remaining}
            if method == "independent":
                chosen = remaining
            elif method == "order":
                chosen = [remaining[0]]
            else:  # the highest top-1 log-prob; among equals the left-most
                chosen = [max(remaining, key=lambda p: (float(logp[p, best[p]]), -p))]
            for p in chosen:
                ids[p] = best[p]
                tokens[p], logprobs[p] = best[p], float(logp[p, best[p]])
            remaining = [p for p in remaining if p not in chosen]
        candidates.append(([tokens[p] for p in slots], [logprobs[p] for p in slots]))
    scores = [(np.mean if length_by == "mean" else np.sum)(lp) for _, lp in candidates]
    return candidates, int(np.argmax(scores)) + 1


@pytest.mark.parametrize("length_by", ["mean", "sum"])
@pytest.mark.parametrize("method", ["independent", "order", "confidence"])
def test_methods_equal_the_per_prompt_reference(trained_bert, wordpiece_tokenizer, method, length_by):
    scorer = MaskedLM(trained_bert, wordpiece_tokenizer, SETTINGS)  # five rows a batch: lengths mixed
    out = masked_decode(scorer, PROMPTS, max_masks=4, method=method, length_by=length_by)
    for i, prompt in enumerate(PROMPTS):
        candidates, length = reference_decode(trained_bert, wordpiece_tokenizer, prompt, 4, method, length_by)
        for m, (tokens, logprobs) in enumerate(candidates, start=1):
            assert out.candidate_ids[i, m - 1, :m].tolist() == tokens, (prompt, m)
            np.testing.assert_allclose(out.candidate_logprobs[i, m - 1, :m], logprobs, atol=TOLERANCE, rtol=0)
            assert out.candidate_texts[i][m - 1] == wordpiece_tokenizer.decode(tokens).strip()
        assert out.lengths[i] == length
        assert out.token_ids[i] == candidates[length - 1][0]


def test_methods_together_equal_each_alone(trained_bert, wordpiece_tokenizer):
    """On a real model, in batches the batch limit cuts between a (prompt, m)'s rows: every
    method's tokens, steps and lengths as when it runs alone, log-probs within 1e-5."""
    scorer = MaskedLM(trained_bert, wordpiece_tokenizer, SETTINGS)  # five rows a batch: groups of 3 cut
    together = masked_decode_jointly(scorer, PROMPTS + PROMPTS[:2], ["confidence", "independent", "order"], 4)
    assert list(together) == ["confidence", "independent", "order"]
    for method, out in together.items():
        alone = masked_decode(scorer, PROMPTS + PROMPTS[:2], max_masks=4, method=method)
        for field in ("candidate_ids", "fill_steps", "lengths"):
            np.testing.assert_array_equal(getattr(out, field), getattr(alone, field))
        np.testing.assert_allclose(out.candidate_logprobs, alone.candidate_logprobs, atol=TOLERANCE, rtol=0)
        assert out.candidate_texts == alone.candidate_texts


def test_trained_model_tells_the_methods_apart(trained_bert, wordpiece_tokenizer):
    """The comparison above has teeth: the model's predictions are not uniform, and the three
    methods do not give one answer everywhere."""
    scorer = MaskedLM(trained_bert, wordpiece_tokenizer, SETTINGS)
    outs = {method: masked_decode(scorer, PROMPTS, max_masks=4, method=method) for method in HAND_WORKED}
    assert (outs["independent"].candidate_logprobs[:, 0, 0] > math.log(10 / len(wordpiece_tokenizer))).all()
    assert (outs["independent"].candidate_ids != outs["order"].candidate_ids).any()
    assert (outs["order"].candidate_ids != outs["confidence"].candidate_ids).any()


# --- the mLAMA score --------------------------------------------------------------------------

CANDIDATES = ["Florence", "Paris", "New York", "Italians", "Salzburg", "Ulm", "Asia Europe"]


@torch.inference_mode()
def direct_mlama(model, tokenizer, prompt: str, candidate: str) -> float:
    tokens = tokenizer(candidate, add_special_tokens=False)["input_ids"]
    text = prompt.replace("[Y]", " ".join([tokenizer.mask_token] * len(tokens)))
    ids = tokenizer(text, return_tensors="pt")["input_ids"]
    logp = torch.log_softmax(model(input_ids=ids).logits[0].float(), dim=-1)
    slots = torch.nonzero(ids[0] == tokenizer.mask_token_id)[:, 0].tolist()
    return float(np.mean([float(logp[p, t]) for p, t in zip(slots, tokens)]))


def test_mlama_scores_equal_a_direct_computation(trained_bert, wordpiece_tokenizer):
    scorer = MaskedLM(trained_bert, wordpiece_tokenizer, SETTINGS)
    out = mlama_scores(scorer, PROMPTS, CANDIDATES)
    counts = [len(wordpiece_tokenizer(c, add_special_tokens=False)["input_ids"]) for c in CANDIDATES]
    assert sorted(set(counts)) == [1, 2]  # single and multi-token candidates
    direct = np.array([[direct_mlama(trained_bert, wordpiece_tokenizer, p, c) for c in CANDIDATES] for p in PROMPTS])
    np.testing.assert_allclose(out.scores, direct, atol=TOLERANCE, rtol=0)
    assert (out.token_counts == counts).all()
    assert (out.ranks == (direct[:, None, :] > direct[:, :, None]).sum(axis=2)).all()
    assert (out.best == direct.argmax(axis=1)).all()
    # one list per prompt gives the same scores
    per_prompt = mlama_scores(scorer, PROMPTS[:2], [CANDIDATES[:3], CANDIDATES[2:]])
    np.testing.assert_allclose(per_prompt.scores[0, :3], direct[0, :3], atol=TOLERANCE, rtol=0)
    np.testing.assert_allclose(per_prompt.scores[1, :5], direct[1, 2:], atol=TOLERANCE, rtol=0)
    assert np.isnan(per_prompt.scores[0, 3:]).all()


# --- greedy generation ----------------------------------------------------------------------------

PREFIXES = ["Dante was born in", "The capital of France is ", "Mozart", "New York is a city of the king of"]


@torch.inference_mode()
def reference_generate(model, tokenizer, start: list[int], prefix: str, stop: str, max_new: int = 16):
    ids = start + tokenizer(prefix.rstrip(), add_special_tokens=False)["input_ids"]
    generated, logprobs = [], []
    for _ in range(max_new):
        logp = torch.log_softmax(model(input_ids=torch.tensor([ids + generated])).logits[0, -1].float(), dim=-1)
        token = int(logp.argmax())
        if token == tokenizer.eos_token_id:
            break
        generated.append(token)
        logprobs.append(float(logp[token]))
        text = tokenizer.decode(generated)
        if "\n" in text or (stop and stop in text):
            break
    text = tokenizer.decode(generated)
    cut = min([i for i in (text.find("\n"), text.find(stop) if stop else -1) if i >= 0], default=len(text))
    answer = text[:cut].strip()
    used = 0
    while answer and cut_answer(tokenizer.decode(generated[:used]), stop)[0] != answer:
        used += 1
    return answer, generated, generated[:used], sum(logprobs[:used])


@pytest.mark.parametrize("cache", [True, False], ids=["key-value cache", "whole sequences"])
def test_generation_equals_the_per_prefix_reference(tiny_causal_models, monkeypatch, cache):
    """Greedy generation, batched, equals a one-prefix-at-a-time loop over the plain forward: with
    the key/value cache (where left-padded batches compute texts as alone: these models, whose
    tokenizers pad on the right) and by running the whole sequences again (the cache turned off)."""
    from knowprobe.scoring import decoding

    uses_cache = decoding.uses_cache
    if not cache:
        monkeypatch.setattr(decoding, "uses_cache", lambda scorer: False)
    for name, model, tokenizer in tiny_causal_models:
        scorer = CausalLM(model, tokenizer, ScoringSettings(device="cpu", batch_size=3, max_tokens=10_000))
        assert tokenizer.padding_side == "right" and uses_cache(scorer), name
        free = causal_generate(scorer, PREFIXES, None, max_new_tokens=8)
        assert all(len(g) == 8 or why != "length" for g, why in zip(free.generated_ids, free.stopped_by)), name
        # a stop text taken from inside the free generation of each prefix, so that it cuts there
        stops = []
        for tokens in free.generated_ids:
            piece = tokenizer.decode(tokens[2:3]).strip() if len(tokens) > 2 else ""
            stops.append(piece)
        out = causal_generate(scorer, PREFIXES, stops, max_new_tokens=8)
        cut_somewhere = False
        for i, prefix in enumerate(PREFIXES):
            answer, generated, used, logprob = reference_generate(
                model, tokenizer, scorer.statement_start, prefix, stops[i], 8
            )
            assert out.generated_ids[i] == generated, (name, prefix)
            assert out.texts[i] == answer and out.token_ids[i] == used
            assert out.logprobs[i] == pytest.approx(logprob, abs=TOLERANCE)
            if stops[i] and out.stopped_by[i] == "stop_text":
                cut_somewhere = True
                assert stops[i] not in out.texts[i] or out.texts[i].find(stops[i]) > 0
        assert cut_somewhere, name


def test_cut_answer():
    assert cut_answer(" Florence. It is", ".") == ("Florence", "stop_text")
    assert cut_answer(" Paris\nThe", ".") == ("Paris", "newline")
    assert cut_answer(" New York", "") == ("New York", None)
    assert cut_answer(" St. Louis", ".") == ("St", "stop_text")  # the rule's known cost
