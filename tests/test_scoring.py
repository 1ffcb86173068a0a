"""The shared scoring layer against plain one-example-at-a-time computations.

Each reference runs the model's own forward on one unpadded sequence and reads log-softmax
values; the scorers batch, pad (on the right and on the left), run the LM head only where a
score is read, and must agree within 1e-4 in float32.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from knowprobe.io import KnowprobeError
from knowprobe.scoring import CausalLM, MaskedLM, ScoringSettings, causal
from knowprobe.scoring.masked import mask_head
from knowprobe.scoring.runtime import make_batches
from knowprobe.scoring.start_token import resolve_start_token

TOLERANCE = 1e-4
SMALL_BATCHES = ScoringSettings(device="cpu", dtype="float32", batch_size=3, max_tokens=64, max_length=64)
SIDES = ["right", "left"]
# prefixes and continuations of different lengths, so that every batch is padded; "Germans" and
# "Berlins" are two pieces in the WordPiece vocabulary, which the within-word variant sees
PAIRS = [
    ("A dog", "can bark ."),
    ("The capital of France", "is Paris ."),
    ("Mozart", "was born in Salzburg ."),
    ("The river", "is in Europe"),
    ("New York is a city in the", "Germans of Berlins"),
    ("Paris", "is the capital of France , a city of Europe ."),
]
CANDIDATE_WORDS = ["Paris", "Berlin", "Rome", "Madrid", "Vienna", "Tokyo", "Europe", "Asia", "city", "river", "king"]


def word_ids(tokenizer, words):
    ids = [tokenizer(" " + w, add_special_tokens=False)["input_ids"] for w in words]
    return [i[0] for i in ids if len(i) == 1]


# --- references -----------------------------------------------------------------------------


@torch.no_grad()
def reference_logprobs(model, ids: list[int]) -> torch.Tensor:
    """log-softmax of the model's own logits over one unpadded sequence."""
    return torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0].float(), dim=-1)


def reference_pll(model, tokenizer, prefix: str, continuation: str, within_word_l2r: bool) -> float:
    """minicons' way: the prefix's token count (with [CLS]) marks where the scored tokens start."""
    encoding = tokenizer(prefix + " " + continuation)
    ids, words = encoding["input_ids"], encoding.word_ids()
    start = sum(t not in (tokenizer.sep_token_id, tokenizer.pad_token_id) for t in tokenizer(prefix)["input_ids"])
    # what the tokenizer added; an [UNK] is the text's own, scored as minicons scores it
    added = {tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.bos_token_id, tokenizer.eos_token_id}
    targets = [p for p in range(start, len(ids)) if ids[p] not in added]
    total = 0.0
    for p in targets:
        masked = list(ids)
        for q in [p] + ([q for q in targets if q > p and words[q] == words[p]] if within_word_l2r else []):
            masked[q] = tokenizer.mask_token_id
        total += float(reference_logprobs(model, masked)[p, ids[p]])
    return total


def start_ids(tokenizer) -> list[int]:
    """The start token the scorers put first by default (``auto``: tests/test_start_token.py)."""
    return list(resolve_start_token(tokenizer, "auto").ids)


def reference_continuation(model, tokenizer, prefix: str, continuation: str) -> float:
    start = start_ids(tokenizer)
    before = start + (tokenizer(prefix, add_special_tokens=False)["input_ids"] if prefix else [])
    text = prefix + " " + continuation if prefix else continuation
    ids = start + tokenizer(text, add_special_tokens=False)["input_ids"]
    assert ids[: len(before)] == before
    logprobs = reference_logprobs(model, ids)
    return sum(float(logprobs[p - 1, ids[p]]) for p in range(len(before), len(ids)))


def reference_slot(logprobs: torch.Tensor, candidate_ids: list[int], target: int):
    restricted = logprobs[candidate_ids]
    return float(logprobs[target]), int((restricted > logprobs[target]).sum()), restricted.sort(descending=True).values


def assert_candidates(scores, expected, top_k):
    for row, (target_logprob, rank, ordered) in enumerate(expected):
        assert abs(scores.target_logprobs[row, 0] - target_logprob) <= TOLERANCE
        assert scores.target_ranks[row, 0] == rank
        np.testing.assert_allclose(scores.topk_logprobs[row], ordered[:top_k].numpy(), atol=TOLERANCE)


# --- masked LMs -----------------------------------------------------------------------------


@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("index", range(5), ids=["bert", "distilbert", "albert", "electra", "roberta"])
def test_masked_candidates_match_a_full_forward_reference(tiny_models, index, side):
    name, model, tokenizer = tiny_models[index]
    assert mask_head(model) is not None, f"{name}: the scorer should know this head"
    scorer = MaskedLM(model, tokenizer, SMALL_BATCHES, padding_side=side)
    assert scorer.padding_side == side
    texts = [f"{prefix} {tokenizer.mask_token} ." for prefix, _ in PAIRS]
    candidates = word_ids(tokenizer, CANDIDATE_WORDS)
    targets = candidates[: len(texts)]
    scores = scorer.candidate_logprobs(texts, candidates, targets, top_k=4)
    expected = []
    for text, target in zip(texts, targets):
        ids = tokenizer(text)["input_ids"]
        logprobs = reference_logprobs(model, ids)[ids.index(tokenizer.mask_token_id)]
        expected.append(reference_slot(logprobs, candidates, target))
    assert_candidates(scores, expected, 4)
    assert set(scores.topk_ids.ravel()) <= set(candidates)


@pytest.mark.parametrize("index", range(5), ids=["bert", "distilbert", "albert", "electra", "roberta"])
def test_kept_hidden_states_give_every_candidate_log_prob_without_the_encoder(tiny_models, index):
    _, model, tokenizer = tiny_models[index]
    scorer = MaskedLM(model, tokenizer, SMALL_BATCHES)
    texts = [f"{prefix} {tokenizer.mask_token} ." for prefix, _ in PAIRS]
    candidates = word_ids(tokenizer, CANDIDATE_WORDS)
    scores = scorer.candidate_logprobs(texts, candidates, candidates[: len(texts)], top_k=3, keep_hidden=True)
    assert scores.hidden.shape == (len(texts), model.config.hidden_size) and scores.hidden.dtype == torch.float32
    matrix = scorer.candidate_logprobs_from_hidden(scores.hidden, candidates, chunk=4)
    for row, text in enumerate(texts):
        ids = tokenizer(text)["input_ids"]
        want = reference_logprobs(model, ids)[ids.index(tokenizer.mask_token_id)][candidates].numpy()
        np.testing.assert_allclose(matrix[row], want, atol=TOLERANCE)
    # the values the probe read, the target's log-prob and the top candidates, up to float32 rounding
    # (the head runs on batches of other sizes, which tiles the matrix product differently)
    diagonal = matrix[np.arange(len(texts)), np.arange(len(texts))]
    np.testing.assert_allclose(diagonal, scores.target_logprobs[:, 0], atol=1e-6, rtol=0)
    np.testing.assert_allclose(np.sort(matrix, axis=1)[:, ::-1][:, :3], scores.topk_logprobs, atol=1e-6, rtol=0)


def test_each_distinct_text_runs_through_the_encoder_once(tiny_bert, wordpiece_tokenizer, monkeypatch):
    """Texts given several times (with other targets) are encoded once; every input gets its own
    target's log-prob and rank, and the same top-k and hidden state as a lone scoring of it."""
    scorer = MaskedLM(tiny_bert, wordpiece_tokenizer, SMALL_BATCHES)
    mask = wordpiece_tokenizer.mask_token
    distinct = [f"{prefix} {mask} ." for prefix, _ in PAIRS]
    order = [0, 1, 0, 2, 3, 1, 4, 5, 0, 5]
    texts = [distinct[i] for i in order]
    candidates = word_ids(wordpiece_tokenizer, CANDIDATE_WORDS)
    targets = [candidates[i % len(candidates)] for i in range(len(texts))]
    encoded_rows = []
    hidden_at = scorer.hidden_at
    monkeypatch.setattr(scorer, "hidden_at", lambda seqs, pos: encoded_rows.append(len(seqs)) or hidden_at(seqs, pos))
    scores = scorer.slot_scores(texts, candidates, targets, top_k=3, keep_hidden=True)
    assert sum(encoded_rows) == len(distinct) == scores.distinct_texts
    assert scores.index.tolist() == [0, 1, 0, 2, 3, 1, 4, 5, 0, 5]
    per_input = scores.per_input(keep_hidden=True)
    monkeypatch.undo()
    for row, (text, target) in enumerate(zip(texts, targets)):
        alone = scorer.candidate_logprobs([text], candidates, [target], top_k=3, keep_hidden=True)
        assert per_input.target_ranks[row, 0] == alone.target_ranks[0, 0]
        assert per_input.topk_ids[row].tolist() == alone.topk_ids[0].tolist()
        np.testing.assert_allclose(per_input.target_logprobs[row], alone.target_logprobs[0], atol=1e-5)
        np.testing.assert_allclose(per_input.hidden[row], alone.hidden[0], atol=1e-5)


def test_known_hidden_states_are_read_by_the_head_alone(tiny_bert, wordpiece_tokenizer, monkeypatch):
    """Texts whose hidden states another job computed skip the encoder and score as if encoded."""
    scorer = MaskedLM(tiny_bert, wordpiece_tokenizer, SMALL_BATCHES)
    texts = [f"{prefix} {wordpiece_tokenizer.mask_token} ." for prefix, _ in PAIRS]
    candidates = word_ids(wordpiece_tokenizer, CANDIDATE_WORDS)
    targets = candidates[: len(texts)]
    full = scorer.slot_scores(texts, candidates, targets, top_k=4, keep_hidden=True)
    known = ([texts[4], texts[1], "not asked for [MASK] ."], full.hidden[[4, 1, 0]])
    encoded_rows = []
    hidden_at = scorer.hidden_at
    monkeypatch.setattr(scorer, "hidden_at", lambda seqs, pos: encoded_rows.append(len(seqs)) or hidden_at(seqs, pos))
    reused = scorer.slot_scores(texts, candidates, targets, top_k=4, keep_hidden=True, known=known)
    assert sum(encoded_rows) == len(texts) - 2
    np.testing.assert_allclose(reused.target_logprobs, full.target_logprobs, atol=1e-5)
    assert (reused.target_ranks == full.target_ranks).all() and (reused.topk_ids == full.topk_ids).all()
    assert torch.equal(reused.hidden[[1, 4]], full.hidden[[1, 4]])


def test_rows_of_distinct_texts_are_every_input_of_them():
    from knowprobe.scoring.runtime import distinct_inputs, rows_by_distinct, rows_of

    index, distinct = distinct_inputs(["b", "a", "b", "c", "a", "b"])
    assert distinct == ["b", "a", "c"] and index.tolist() == [0, 1, 0, 2, 1, 0]
    order, starts = rows_by_distinct(index, len(distinct))
    rows, position = rows_of(order, starts, np.array([2, 0]))
    assert rows.tolist() == [3, 0, 2, 5] and position.tolist() == [0, 1, 1, 1]
    rows, position = rows_of(order, starts, np.array([1]))
    assert rows.tolist() == [1, 4] and position.tolist() == [0, 0]


def test_a_bfloat16_model_keeps_bfloat16_states_and_reads_them_with_a_float32_head(tiny_bert, wordpiece_tokenizer):
    import copy

    model = copy.deepcopy(tiny_bert).to(torch.bfloat16)
    scorer = MaskedLM(model, wordpiece_tokenizer, SMALL_BATCHES)
    assert all(p.dtype == torch.float32 for p in scorer.head.parameters())
    assert all(p.dtype == torch.bfloat16 for p in model.cls.parameters())  # the model itself is untouched
    candidates = word_ids(wordpiece_tokenizer, CANDIDATE_WORDS)
    scores = scorer.candidate_logprobs(["Dante was born in [MASK] ."], candidates, top_k=2, keep_hidden=True)
    assert scores.hidden.dtype == torch.bfloat16
    matrix = scorer.candidate_logprobs_from_hidden(scores.hidden, candidates)
    np.testing.assert_allclose(np.sort(matrix, axis=1)[:, ::-1][:, :2], scores.topk_logprobs, atol=1e-6, rtol=0)


def test_masked_candidates_at_the_second_of_two_masks(tiny_bert, wordpiece_tokenizer):
    texts = ["[MASK] is the capital of [MASK] .", "The capital of [MASK] is [MASK] , a city ."]
    candidates = word_ids(wordpiece_tokenizer, CANDIDATE_WORDS)
    scores = MaskedLM(tiny_bert, wordpiece_tokenizer, SMALL_BATCHES).candidate_logprobs(
        texts, candidates, [[candidates[0], candidates[1]]] * 2, top_k=3, masks=2, slot=1
    )
    for row, text in enumerate(texts):
        ids = wordpiece_tokenizer(text)["input_ids"]
        second = [p for p, t in enumerate(ids) if t == wordpiece_tokenizer.mask_token_id][1]
        logprobs = reference_logprobs(tiny_bert, ids)[second]
        np.testing.assert_allclose(scores.target_logprobs[row], logprobs[candidates[:2]].numpy(), atol=TOLERANCE)
    with pytest.raises(KnowprobeError, match="has 2 mask tokens"):
        MaskedLM(tiny_bert, wordpiece_tokenizer, SMALL_BATCHES).candidate_logprobs(texts, candidates)


@pytest.mark.parametrize("index", range(5), ids=["bert", "distilbert", "albert", "electra", "roberta"])
def test_the_last_layers_feed_forward_runs_at_the_read_positions_only(tiny_models, index):
    """The last layer's feed-forward sees one row per sequence, the first layer's every token
    (ALBERT's one shared layer: every token in each run but the last); the scores stay the full
    forward's (the reference tests here), and the layer is put back afterwards, also when the
    forward fails."""
    name, model, tokenizer = tiny_models[index]
    scorer = MaskedLM(model, tokenizer, SMALL_BATCHES)
    layers = scorer.final_layer.layers
    last, first = layers[-1], layers[0]
    feed_forward = {"distilbert": lambda layer: layer.ffn.lin1, "albert": lambda layer: layer.ffn}.get(
        name, lambda layer: layer.intermediate.dense
    )
    rows = {"first": [], "last": []}
    hooks = [
        feed_forward(layer).register_forward_hook(lambda m, args, out, key=key: rows[key].append(args[0].shape[:-1]))
        for layer, key in ((first, "first"), (last, "last"))
    ]
    sequences = [tokenizer(f"{p} {tokenizer.mask_token} .")["input_ids"] for p, _ in PAIRS[:3]]
    positions = np.array([s.index(tokenizer.mask_token_id) for s in sequences])
    states = scorer.hidden_at(sequences, positions)
    for hook in hooks:
        hook.remove()
    assert states.shape[0] == 3
    every_token = (3, max(map(len, sequences)))
    runs = model.config.num_hidden_layers if name == "albert" else 1  # ALBERT: one group, one layer in it
    assert scorer.final_layer.runs == runs
    assert [tuple(r) for r in rows["last"]] == [every_token] * (runs - 1) + [(3,)]
    if name != "albert":
        assert [tuple(r) for r in rows["first"]] == [every_token]
    assert layers[-1] is last
    with pytest.raises(IndexError):
        scorer.hidden_at(sequences, positions + 100)
    assert layers[-1] is last


@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("index", range(5), ids=["bert", "distilbert", "albert", "electra", "roberta"])
def test_the_last_layer_at_several_positions_of_a_row_gives_the_full_forwards_states(tiny_models, index, side):
    """Open decoding and the mLAMA score read several masks of a row, and some rows not at all:
    the states at every (row, position) pair read, a row repeated, equal the full forward's."""
    from knowprobe.scoring.final_layer import final_layer_at

    _, model, tokenizer = tiny_models[index]
    scorer = MaskedLM(model, tokenizer, SMALL_BATCHES, padding_side=side)
    mask = tokenizer.mask_token
    sequences = [
        tokenizer(f"{p} {mask} {mask} {mask} .")["input_ids"] if i != 1 else tokenizer(f"{p} {mask} .")["input_ids"]
        for i, (p, _) in enumerate(PAIRS[:3])
    ]
    batch = scorer.pad(sequences)
    pairs = [(0, 1), (0, 3), (0, 2), (2, 1), (2, 3)]  # (row, mask of the row); row 1 unread
    masks = [[p for p, t in enumerate(s) if t == tokenizer.mask_token_id] for s in sequences]
    rows = torch.tensor([r for r, _ in pairs])
    at = torch.tensor([int(batch.starts[r]) + masks[r][k - 1] for r, k in pairs])
    with torch.inference_mode(), final_layer_at(scorer.final_layer, rows, at):
        states = scorer.hidden_states(batch)[rows, at]
    for got, (r, k) in zip(states, pairs):
        with torch.inference_mode():
            full = model.base_model(input_ids=torch.tensor([sequences[r]]))[0][0, masks[r][k - 1]]
        torch.testing.assert_close(got, full, atol=1e-5, rtol=0)


@pytest.mark.parametrize("groups", [(3, 1, 1), (4, 2, 2), (6, 3, 1)], ids=["one group", "2x2", "3 groups"])
def test_albert_layer_groups_compute_their_last_run_at_the_read_positions(wordpiece_tokenizer, groups):
    """ALBERT's layers are shared within groups (and a group may hold several): whatever the
    layout, the states read are the full forward's."""
    from transformers import AlbertConfig, AlbertForMaskedLM

    layers, hidden_groups, inner = groups
    torch.manual_seed(5)
    config = AlbertConfig(
        vocab_size=len(wordpiece_tokenizer),
        embedding_size=16,
        hidden_size=32,
        num_attention_heads=4,
        intermediate_size=64,
        num_hidden_layers=layers,
        num_hidden_groups=hidden_groups,
        inner_group_num=inner,
        max_position_embeddings=64,
    )
    model = AlbertForMaskedLM(config).eval()
    scorer = MaskedLM(model, wordpiece_tokenizer, SMALL_BATCHES, padding_side="right")
    assert scorer.final_layer.runs == layers // hidden_groups
    sequences = [wordpiece_tokenizer(f"{p} {wordpiece_tokenizer.mask_token} .")["input_ids"] for p, _ in PAIRS]
    positions = np.array([s.index(wordpiece_tokenizer.mask_token_id) for s in sequences])
    states = scorer.hidden_at(sequences, positions)
    for row, (ids, position) in enumerate(zip(sequences, positions)):
        with torch.inference_mode():
            full = model.base_model(input_ids=torch.tensor([ids]))[0][0, position]
        torch.testing.assert_close(states[row], full, atol=1e-5, rtol=0)


@pytest.mark.parametrize("within_word_l2r", [False, True], ids=["original", "within_word_l2r"])
@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("index", [0, 4], ids=["bert", "roberta"])
def test_conditional_pll_matches_masking_one_token_at_a_time(tiny_models, index, side, within_word_l2r):
    _, model, tokenizer = tiny_models[index]
    scorer = MaskedLM(model, tokenizer, SMALL_BATCHES, padding_side=side)
    assert scorer.padding_side == side
    prefixes, continuations = map(list, zip(*PAIRS))
    got = scorer.conditional_logprob(prefixes, continuations, within_word_l2r=within_word_l2r)
    want = [reference_pll(model, tokenizer, p, c, within_word_l2r) for p, c in PAIRS]
    np.testing.assert_allclose(got, want, atol=TOLERANCE)


# a subject in the middle of a sentence, with the object visible on its right (LPAQA's backward
# probability); "Berlins" is two WordPiece pieces
SPANS = [("Mozart was born in Salzburg .", "Mozart"), ("The capital of Berlins is Paris .", "Berlins")]


@pytest.mark.parametrize("index", [0, 4], ids=["bert", "roberta"])
def test_span_pll_masks_the_span_with_both_sides_visible(tiny_models, index):
    _, model, tokenizer = tiny_models[index]
    scorer = MaskedLM(model, tokenizer, SMALL_BATCHES)
    spans = [(text.index(word), text.index(word) + len(word)) for text, word in SPANS]
    got = scorer.span_logprob([text for text, _ in SPANS], spans)
    want = []
    for (text, _), (begin, end) in zip(SPANS, spans):
        encoding = tokenizer(text, return_offsets_mapping=True)
        ids, offsets = encoding["input_ids"], encoding["offset_mapping"]
        inside = [p for p, (a, b) in enumerate(offsets) if b > a and begin <= a + (text[a] == " ") < end]
        assert inside, text
        total = 0.0
        for p in inside:
            masked = list(ids)
            masked[p] = tokenizer.mask_token_id
            total += float(reference_logprobs(model, masked)[p, ids[p]])
        want.append(total)
    np.testing.assert_allclose(got, want, atol=TOLERANCE)
    if index == 0:
        assert len(tokenizer.tokenize("Berlins")) == 2  # the second span's two pieces are both scored


def test_within_word_l2r_differs_only_for_words_of_several_pieces(tiny_bert, wordpiece_tokenizer):
    scorer = MaskedLM(tiny_bert, wordpiece_tokenizer, SMALL_BATCHES)
    one_piece = scorer.conditional_logprob(["A dog"], ["can bark ."])
    assert scorer.conditional_logprob(["A dog"], ["can bark ."], within_word_l2r=True) == pytest.approx(one_piece)
    assert wordpiece_tokenizer.tokenize("Germans") == ["German", "##s"]
    several = (
        scorer.conditional_logprob(["The"], ["Germans"]),
        scorer.conditional_logprob(["The"], ["Germans"], within_word_l2r=True),
    )
    # a random model's distributions are nearly flat: the difference is small, but far above rounding
    assert abs(several[0][0] - several[1][0]) > 1e-5


# --- causal LMs -----------------------------------------------------------------------------


@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("index", range(3), ids=["gpt2", "llama", "qwen2"])
def test_continuation_logprob_matches_a_full_forward_reference(tiny_causal_models, index, side):
    _, model, tokenizer = tiny_causal_models[index]
    scorer = CausalLM(model, tokenizer, SMALL_BATCHES, padding_side=side)
    assert scorer.padding_side == side
    pairs = PAIRS + ([("", "Paris is the capital of France .")] if start_ids(tokenizer) else [])
    prefixes, continuations = map(list, zip(*pairs))
    got = scorer.conditional_logprob(prefixes, continuations)
    want = [reference_continuation(model, tokenizer, p, c) for p, c in pairs]
    np.testing.assert_allclose(got, want, atol=TOLERANCE)


# prefixes that several texts share (COMPS's "a robin" with each property), and one alone
SHARED_PAIRS = [
    ("The capital of France", "is Paris ."),
    ("The capital of France", "is a city of Europe ."),
    ("The capital of France", "was Rome"),
    ("Mozart was born in", "Salzburg ."),
    ("Mozart was born in", "Vienna , a city of Austria ."),
    ("The river", "is in Europe"),
]


def reference_continuation_without_start(model, tokenizer, prefix: str, continuation: str) -> float:
    before = tokenizer(prefix, add_special_tokens=False)["input_ids"]
    ids = tokenizer(prefix + " " + continuation, add_special_tokens=False)["input_ids"]
    assert ids[: len(before)] == before
    logprobs = reference_logprobs(model, ids)
    return sum(float(logprobs[p - 1, ids[p]]) for p in range(len(before), len(ids)))


@pytest.mark.parametrize("start_token", [True, False], ids=["start-token", "no-start-token"])
@pytest.mark.parametrize(
    "index", range(5), ids=["gpt2", "llama", "qwen2", "gpt-neo-window-64", "gpt-neo-window-3-not-packed"]
)
def test_shared_prefixes_are_placed_once_and_give_the_full_forward_scores(
    tiny_causal_models, index, start_token, monkeypatch
):
    """Texts packed into rows, a token prefix several texts share placed once (every later token
    attending to it), give each text's own full forward scores; a model whose local attention
    window is narrower than a row (GPT-Neo, window 3) is not packed and gives them too."""
    _, model, tokenizer = tiny_causal_models[index if index < 3 else 0]
    if index >= 3:  # with GPT-2's tokenizer
        model = tiny_causal("GPTNeoForCausalLM", len(tokenizer), window_size={3: 64, 4: 3}[index])
    layouts = []
    real_layout = causal.prefix_tree_rows
    monkeypatch.setattr(causal, "prefix_tree_rows", lambda *a: layouts.append(real_layout(*a)) or layouts[-1])
    prefixes, continuations = map(list, zip(*SHARED_PAIRS))
    for settings in (SMALL_BATCHES, ScoringSettings(device="cpu", dtype="float32")):
        scorer = CausalLM(model, tokenizer, settings, start_token=start_token)
        layouts.clear()
        shared = scorer.conditional_logprob(prefixes, continuations)
        full = scorer.conditional_logprob(prefixes, continuations, share_prefixes=False)
        np.testing.assert_allclose(shared, full, atol=TOLERANCE)
    if index == 4:
        assert scorer.packing_width(10) is None and not layouts
    else:
        ids, _ = scorer.encode([p + " " + c for p, c in SHARED_PAIRS])
        # a text's last token predicts nothing and is not placed
        distinct_prefixes = {tuple(sequence[: k + 1]) for sequence in ids for k in range(len(sequence) - 1)}
        assert layouts[0].used.sum() == len(distinct_prefixes) < sum(len(sequence) - 1 for sequence in ids)
        assert layouts[1].used.sum() == sum(len(sequence) - 1 for sequence in ids)
    if start_token and start_ids(tokenizer):
        want = [reference_continuation(model, tokenizer, p, c) for p, c in SHARED_PAIRS]
    else:
        want = [reference_continuation_without_start(model, tokenizer, p, c) for p, c in SHARED_PAIRS]
    np.testing.assert_allclose(shared, want, atol=TOLERANCE)


def test_prefix_tree_rows_place_each_shared_prefix_once_and_read_every_scored_token():
    ids = [[1, 2, 3, 4], [1, 2, 3, 5, 6], [1, 2, 7], [8, 9], [1, 2, 3, 4, 6]]
    scored = [2, 3, 2, 1, 4]
    # placed without their last tokens, sorted: [1,2,3] [1,2,3,4] [1,2,3,5] [1,2] | [8]: a sixth token
    # for [8] would not fit in a row of 5
    tree = causal.prefix_tree_rows(ids, scored, 5, 0, share=True)
    assert tree.used.tolist() == [5, 1] and tree.tokens.tolist() == [[1, 2, 3, 4, 5], [8, 0, 0, 0, 0]]
    assert tree.parents[0].tolist() == [-1, 0, 1, 2, 2] and tree.positions[0].tolist() == [0, 1, 2, 3, 3]
    for text, sequence in enumerate(ids):  # each read is the token's own, predicted from the one before it
        reads = tree.reads[tree.reads[:, 3] == text]
        assert reads[:, 2].tolist() == sequence[scored[text] :]
        for row, column, _, _ in reads:
            path = [column]
            while tree.parents[row, path[-1]] >= 0:
                path.append(tree.parents[row, path[-1]])
            assert tree.tokens[row, path[::-1]].tolist() == sequence[: tree.positions[row, column] + 1]
    visible = causal.ancestor_visibility(tree.parents, tree.positions)
    assert np.flatnonzero(visible[0, 4]).tolist() == [0, 1, 2, 4]  # 5 sees 1 2 3, not the 4 before it
    assert np.flatnonzero(visible[1, 3]).tolist() == [3]  # padding sees itself only


@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("index", range(3), ids=["gpt2", "llama", "qwen2"])
def test_next_token_candidates_match_a_full_forward_reference(tiny_causal_models, index, side):
    _, model, tokenizer = tiny_causal_models[index]
    scorer = CausalLM(model, tokenizer, SMALL_BATCHES, padding_side=side)
    assert scorer.padding_side == side
    prefixes = [prefix + " " + continuation.split()[0] for prefix, continuation in PAIRS]
    candidates = word_ids(tokenizer, CANDIDATE_WORDS)
    assert len(candidates) == len(CANDIDATE_WORDS)  # each word one token with its leading space
    targets = candidates[: len(prefixes)]
    scores = scorer.candidate_logprobs(prefixes, candidates, targets, top_k=5)
    start = start_ids(tokenizer)
    expected = [
        reference_slot(
            reference_logprobs(model, start + tokenizer(p, add_special_tokens=False)["input_ids"])[-1], candidates, t
        )
        for p, t in zip(prefixes, targets)
    ]
    assert_candidates(scores, expected, 5)


@pytest.mark.parametrize(
    "index", range(5), ids=["gpt2", "llama", "qwen2", "gpt-neo-window-64", "gpt-neo-window-3-not-packed"]
)
def test_next_token_and_continuations_in_one_pass_equal_the_two_scores_apart(tiny_causal_models, index, monkeypatch):
    """S-TEST's causal reading of a query: both objects' next token and two continuations after
    the same prefix, in one pass where each prefix is placed once; equal to candidate_logprobs and
    conditional_logprob run apart, packed or (GPT-Neo, window 3) in padded batches."""
    _, model, tokenizer = tiny_causal_models[index if index < 3 else 0]
    if index >= 3:
        model = tiny_causal("GPTNeoForCausalLM", len(tokenizer), window_size={3: 64, 4: 3}[index])
    layouts = []
    real_layout = causal.prefix_tree_rows
    monkeypatch.setattr(causal, "prefix_tree_rows", lambda *a: layouts.append(real_layout(*a)) or layouts[-1])
    prefixes = [prefix for prefix, _ in PAIRS]
    continuations = [(rest, rest.split()[0] + " not " + " ".join(rest.split()[1:])) for _, rest in PAIRS]
    candidates = word_ids(tokenizer, CANDIDATE_WORDS)
    assert len(candidates) == len(CANDIDATE_WORDS)
    targets = np.stack([candidates[: len(prefixes)], candidates[-len(prefixes) :]], axis=1)
    scorer = CausalLM(model, tokenizer, SMALL_BATCHES)
    layouts.clear()  # the packing tried at load
    next_token, rests = scorer.next_token_and_continuations(prefixes, targets, continuations)
    apart = scorer.candidate_logprobs(prefixes, candidates, targets).target_logprobs
    np.testing.assert_allclose(next_token, apart, atol=TOLERANCE)
    for column in (0, 1):
        want = scorer.conditional_logprob(prefixes, [row[column] for row in continuations])
        np.testing.assert_allclose(rests[:, column], want, atol=TOLERANCE)
    if index == 4:
        assert scorer.packing_width(10) is None
    else:  # every distinct token prefix placed once (three queries, one row): a prefix for its
        # two targets and two continuations
        layouts.clear()
        scorer.next_token_and_continuations(prefixes[:3], targets[:3], continuations[:3])
        texts = [p + " " + c for p, pair in zip(prefixes[:3], continuations[:3]) for c in pair]
        placed = [ids[:-1] for ids in scorer.encode(texts)[0]] + scorer.encode(prefixes[:3])[0]  # prefix + target
        distinct = {tuple(ids[: k + 1]) for ids in placed for k in range(len(ids))}
        assert len(layouts[0].used) == 1
        assert layouts[0].used.sum() == len(distinct) < sum(len(ids) for ids in placed)


@pytest.mark.parametrize(
    "index, start_token, setting", [(2, True, "none"), (0, False, "auto")], ids=["start-token-none", "start-token-off"]
)
def test_without_a_start_token_a_text_needs_a_prefix(tiny_causal_models, index, start_token, setting):
    _, model, tokenizer = tiny_causal_models[index]
    settings = ScoringSettings(**{**SMALL_BATCHES.__dict__, "start_token": setting})
    scorer = CausalLM(model, tokenizer, settings, start_token=start_token)
    assert scorer.start == []
    with pytest.raises(KnowprobeError, match="without a start token .* give a prefix"):
        scorer.conditional_logprob([""], ["Paris is a city ."])
    with pytest.raises(KnowprobeError, match="no start token"):
        scorer.candidate_logprobs([""], [1, 2])


def test_an_input_longer_than_the_models_positions_is_a_clear_error(tiny_causal_models, tiny_bert, wordpiece_tokenizer):
    """The smaller of scoring.max_length and the model's position table (64 in these models)."""
    _, model, tokenizer = tiny_causal_models[0]
    long_text = " ".join(["Paris"] * 80)
    settings = ScoringSettings(device="cpu", dtype="float32")
    assert settings.max_length > 64
    with pytest.raises(KnowprobeError, match="longer than this model takes .64 positions"):
        CausalLM(model, tokenizer, settings).conditional_logprob(["Rome"], [long_text])
    with pytest.raises(KnowprobeError, match="longer than this model takes .64 positions"):
        MaskedLM(tiny_bert, wordpiece_tokenizer, settings).phrase_embeddings([long_text])


def tiny_causal(name, vocab_size, **config_values):
    """A 2-layer model of the architecture ``name``; ``config_values`` set on its config."""
    import transformers as t

    small = dict(
        hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=64
    )
    configs = {
        "GPT2LMHeadModel": lambda: t.GPT2Config(vocab_size=vocab_size, n_embd=32, n_layer=2, n_head=2, n_positions=64),
        "GPTNeoForCausalLM": lambda: t.GPTNeoConfig(
            vocab_size=vocab_size,
            hidden_size=32,
            num_layers=2,
            num_heads=2,
            attention_types=[[["global", "local"], 1]],
            max_position_embeddings=64,
        ),
        "GPTJForCausalLM": lambda: t.GPTJConfig(
            vocab_size=vocab_size, n_embd=32, n_layer=2, n_head=2, rotary_dim=8, n_positions=64
        ),
        "GPTNeoXForCausalLM": lambda: t.GPTNeoXConfig(vocab_size=vocab_size, **small),
        "LlamaForCausalLM": lambda: t.LlamaConfig(vocab_size=vocab_size, num_key_value_heads=2, **small),
        "MistralForCausalLM": lambda: t.MistralConfig(vocab_size=vocab_size, num_key_value_heads=2, **small),
        "Qwen2ForCausalLM": lambda: t.Qwen2Config(vocab_size=vocab_size, num_key_value_heads=2, **small),
    }
    torch.manual_seed(0)
    config = configs[name]()
    for key, value in config_values.items():
        setattr(config, key, value)
    return getattr(t, name)(config).eval()


# --- the shared runtime ---------------------------------------------------------------------


def test_batches_cover_every_input_once_within_limits():
    rng = np.random.default_rng(0)
    lengths = rng.integers(5, 40, size=500)
    batches = make_batches(lengths, batch_size=16, max_tokens=300)
    flat = np.concatenate(batches)
    assert sorted(flat.tolist()) == list(range(500))
    for batch in batches:
        assert len(batch) <= 16
        assert len(batch) * lengths[batch].max() <= 300
    assert all(np.diff(lengths[flat]) >= 0)  # sorted by length: little padding


def test_batches_pad_at_most_max_padding_of_their_real_tokens():
    """Few inputs of many lengths fit one batch under the token budget, padded to the longest; the
    padding limit cuts them into batches of similar length instead."""
    rng = np.random.default_rng(1)
    lengths = rng.integers(8, 23, size=127)
    [whole] = make_batches(lengths, batch_size=128, max_tokens=16384)
    assert len(whole) * lengths.max() > 1.3 * lengths.sum()
    batches = make_batches(lengths, batch_size=128, max_tokens=16384, max_padding=0.1)
    assert sorted(np.concatenate(batches).tolist()) == list(range(127))
    for batch in batches:
        assert len(batch) * lengths[batch].max() <= 1.1 * lengths[batch].sum()
    assert len(batches) < 20  # batches of one or two lengths, not one input each


@pytest.mark.parametrize("scores", ["mask", "pll", "packed", "padded"])
def test_results_are_read_back_once_however_many_batches(
    tiny_bert, wordpiece_tokenizer, tiny_causal_models, scores, monkeypatch
):
    """The scoring loop never waits for the device: the tensors read back (``cpu``, ``item``,
    ``tolist``) are as many with one input a batch as with all in one batch."""
    reads = []
    for name in ("cpu", "item", "tolist"):
        original = getattr(torch.Tensor, name)
        monkeypatch.setattr(
            torch.Tensor, name, lambda self, *a, _o=original, _n=name, **k: reads.append(_n) or _o(self, *a, **k)
        )

    def read_backs(batch_size: int) -> int:
        settings = ScoringSettings(device="cpu", dtype="float32", batch_size=batch_size, max_length=64)
        prefixes, continuations = map(list, zip(*PAIRS))
        if scores in ("mask", "pll"):
            scorer = MaskedLM(tiny_bert, wordpiece_tokenizer, settings)
        else:
            _, model, tokenizer = tiny_causal_models[0]
            scorer = CausalLM(model, tokenizer, settings)
            if scores == "packed":
                monkeypatch.setattr(causal, "PACK_WIDTH", 16)  # several rows
            else:
                monkeypatch.setattr(scorer, "packing_width", lambda longest: None)
        reads.clear()
        if scores == "mask":
            texts = [f"{p} {wordpiece_tokenizer.mask_token} ." for p in prefixes]
            scorer.candidate_logprobs(texts, word_ids(wordpiece_tokenizer, CANDIDATE_WORDS), top_k=3)
        else:
            scorer.conditional_logprob(prefixes, continuations)
        return len(reads)

    assert read_backs(1) == read_backs(64) <= 4


@pytest.mark.parametrize("kind, packed", [("masked", False), ("causal", True), ("causal", False)])
def test_out_of_memory_halves_the_batch_and_goes_on(
    tiny_bert, wordpiece_tokenizer, tiny_causal_models, kind, packed, monkeypatch, caplog
):
    # batches of up to 8 whatever the padding, so that the first ones fail
    settings = ScoringSettings(device="cpu", batch_size=8, max_padding=float("inf"))
    if kind == "masked":
        scorer = MaskedLM(tiny_bert, wordpiece_tokenizer, settings)
    else:
        _, model, tokenizer = tiny_causal_models[0]
        scorer = CausalLM(model, tokenizer, settings)
    expected = scorer.conditional_logprob(*map(list, zip(*PAIRS)))
    if packed:  # rows of 16 tokens, so that there are several
        monkeypatch.setattr(causal, "PACK_WIDTH", 16)
        name = "packed_hidden_states"
    else:
        if kind == "causal":
            monkeypatch.setattr(scorer, "packing_width", lambda longest: None)
        name = "logits_at"
    original, seen = getattr(scorer, name), []

    def fragile(sequences, *args):
        seen.append(len(sequences))
        if len(sequences) > 2:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return original(sequences, *args)

    monkeypatch.setattr(scorer, name, fragile)
    with caplog.at_level("WARNING"):
        got = scorer.conditional_logprob(*map(list, zip(*PAIRS)))
    assert "batch_size=4" in caplog.text and "batch_size=2" in caplog.text
    after = seen[max(i for i, n in enumerate(seen) if n > 2) + 1 :]  # the calls after the last failure
    assert after and max(after) <= 2, seen
    np.testing.assert_allclose(got, expected, atol=TOLERANCE)


def test_other_runtime_errors_are_not_swallowed(tiny_bert, wordpiece_tokenizer, monkeypatch):
    scorer = MaskedLM(tiny_bert, wordpiece_tokenizer, SMALL_BATCHES)

    def broken(*args):
        raise RuntimeError("shape mismatch")

    monkeypatch.setattr(scorer, "logits_at", broken)
    with pytest.raises(RuntimeError, match="shape mismatch"):
        scorer.conditional_logprob(["A dog"], ["can bark ."])


def test_inputs_longer_than_max_length_are_an_error_naming_them(tiny_bert, wordpiece_tokenizer):
    scorer = MaskedLM(tiny_bert, wordpiece_tokenizer, ScoringSettings(device="cpu", max_length=8))
    with pytest.raises(KnowprobeError, match="more than scoring.max_length=8"):
        scorer.conditional_logprob(["The capital of France"], ["is Paris , a city of Europe ."])


def test_load_gives_the_scorer_of_the_declared_kind(tmp_path, tiny_bert, wordpiece_tokenizer, tiny_causal_models):
    from knowprobe import scoring

    tiny_bert.save_pretrained(tmp_path / "bert")
    wordpiece_tokenizer.save_pretrained(tmp_path / "bert")
    _, gpt2, gpt2_tokenizer = tiny_causal_models[0]
    gpt2.save_pretrained(tmp_path / "gpt2")
    gpt2_tokenizer.save_pretrained(tmp_path / "gpt2")
    settings = ScoringSettings(device="cpu")
    assert isinstance(scoring.load(tmp_path / "bert", "masked", settings), MaskedLM)
    causal_scorer = scoring.load(tmp_path / "gpt2", "causal", settings)
    assert isinstance(causal_scorer, CausalLM)
    # GPT-2's written-out GELU runs as PyTorch's fused kernel (scoring.kernels)
    activations = [type(m).__name__ for m in causal_scorer.model.modules() if "GELU" in type(m).__name__]
    assert activations == ["FusedTanhGELU"] * gpt2.config.n_layer
    with pytest.raises(KnowprobeError, match="no mask token, but the config says kind: masked"):
        scoring.load(tmp_path / "gpt2", "masked", settings)


@pytest.mark.parametrize("family", ["gpt2", "gpt_neo", "gptj", "bert"])
def test_fused_activations_compute_the_same_function(family, bpe_tokenizer):
    """GPT-2's, GPT-Neo's and GPT-J's written-out tanh GELU replaced by PyTorch's fused kernel:
    the logits stay the model's own within float32 rounding, in float32 and bfloat16 (where the
    fused kernel rounds once instead of at every step); BERT's exact GELU is left alone."""
    import copy

    from transformers import (
        BertConfig,
        BertForMaskedLM,
        GPT2Config,
        GPT2LMHeadModel,
        GPTJConfig,
        GPTJForCausalLM,
        GPTNeoConfig,
        GPTNeoForCausalLM,
    )

    from knowprobe.scoring import fuse_activations

    n = len(bpe_tokenizer)
    torch.manual_seed(11)
    model = {
        "gpt2": lambda: GPT2LMHeadModel(GPT2Config(vocab_size=n, n_embd=32, n_layer=2, n_head=2, n_positions=64)),
        "gpt_neo": lambda: GPTNeoForCausalLM(
            GPTNeoConfig(vocab_size=n, hidden_size=32, num_layers=2, num_heads=2, attention_types=[[["global"], 2]])
        ),
        "gptj": lambda: GPTJForCausalLM(GPTJConfig(vocab_size=n, n_embd=32, n_layer=2, n_head=2, rotary_dim=8)),
        "bert": lambda: BertForMaskedLM(
            BertConfig(vocab_size=n, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)
        ),
    }[family]().eval()
    ids = torch.tensor([bpe_tokenizer("Paris is the capital of France .")["input_ids"]])
    for dtype, tolerance in [(torch.float32, 1e-5), (torch.bfloat16, 0.1)]:
        original = copy.deepcopy(model).to(dtype)
        fused = copy.deepcopy(original)
        assert fuse_activations(fused) == (0 if family == "bert" else 2)
        with torch.inference_mode():
            torch.testing.assert_close(
                fused(input_ids=ids).logits.float(), original(input_ids=ids).logits.float(), atol=tolerance, rtol=0
            )


def test_dtype_and_device_choice():
    from knowprobe.devices import resolve_device, resolve_dtype

    assert resolve_dtype("auto", torch.device("cpu")) == torch.float32
    assert resolve_dtype("bfloat16", torch.device("cpu")) == torch.bfloat16
    assert resolve_device("cpu").type == "cpu"


def test_auto_batch_limits_are_the_devices_measured_best(tiny_bert, wordpiece_tokenizer):
    """scoring.batch_size and max_tokens ``auto``: 128 / 16,384 on the CPU, 2,048 / 262,144 on a
    GPU (docs/benchmarks.md); a number given is kept; a scorer holds its device's."""
    from knowprobe.scoring.runtime import BATCH_LIMITS

    assert BATCH_LIMITS == {"cpu": (128, 16_384), "cuda": (2_048, 262_144)}
    auto = ScoringSettings(device="cpu", batch_size="auto", max_tokens="auto")
    assert (auto.on(torch.device("cpu")).batch_size, auto.on(torch.device("cpu")).max_tokens) == (128, 16_384)
    assert (auto.on(torch.device("cuda", 0)).batch_size, auto.on(torch.device("cuda")).max_tokens) == (2_048, 262_144)
    given = ScoringSettings(batch_size=64, max_tokens="auto").on(torch.device("cuda"))
    assert (given.batch_size, given.max_tokens) == (64, 262_144)
    scorer = MaskedLM(tiny_bert, wordpiece_tokenizer, auto)
    assert (scorer.settings.batch_size, scorer.settings.max_tokens) == (128, 16_384)


def test_a_float32_model_loaded_after_a_tf32_one_on_a_gpu_computes_in_float32(tiny_bert):
    """On CUDA, TF32 is a process-wide mode: a float32 load after a tf32 one (COMPS's recheck)
    sets it back to full float32 products. (torch keeps the mode on a CPU build too.)"""
    from knowprobe.devices import use_precision

    before = torch.get_float32_matmul_precision()
    try:
        use_precision(tiny_bert, "tf32", torch.device("cuda"))
        assert torch.get_float32_matmul_precision() == "high"
        use_precision(tiny_bert, "float32", torch.device("cuda"))
        assert torch.get_float32_matmul_precision() == "highest"
    finally:
        torch.set_float32_matmul_precision(before)


def test_tf32_reads_ten_mantissa_bits_of_each_product_operand_and_nothing_else():
    """TF32 on the CPU: the operands of a matrix product lose their last 13 mantissa bits, the
    bias and what lies outside the model's modules do not; an error inside leaves no mode on."""
    from knowprobe.devices import emulate_tf32, tf32

    values = torch.tensor([1.0, 1.0 + 2**-10, 1.0 + 2**-11, -(1.0 + 2**-10 + 2**-12)])
    assert tf32(values).tolist() == [1.0, 1.0 + 2**-10, 1.0, -(1.0 + 2**-10)]
    assert tf32(values.double()).dtype == torch.float64 and tf32(values.double()).equal(values.double())
    torch.manual_seed(0)
    linear, inputs = torch.nn.Linear(16, 8), torch.randn(5, 16)
    with torch.no_grad():
        exact = inputs @ linear.weight.T + linear.bias
        emulate_tf32(linear)
        emulated = linear(inputs)
        outside = inputs @ linear.weight.T + linear.bias
    assert torch.equal(emulated, tf32(inputs) @ tf32(linear.weight).T + linear.bias)
    assert not torch.equal(emulated, exact) and torch.equal(outside, exact)
    with pytest.raises(RuntimeError):
        linear(torch.randn(2, 3))  # wrong width: the forward fails inside the mode
    assert torch._C._len_torch_function_stack() == 0


def test_tf32_scores_move_by_tf32_rounding(tmp_path, tiny_bert, wordpiece_tokenizer):
    """scoring.dtype tf32 on the CPU keeps float32 weights and rounds the products' operands:
    the scores move, by about TF32's rounding and no more."""
    from knowprobe import scoring

    tiny_bert.save_pretrained(tmp_path / "bert")
    wordpiece_tokenizer.save_pretrained(tmp_path / "bert")
    prefixes, continuations = zip(*PAIRS)
    scores = {}
    for dtype in ("float32", "tf32"):
        scorer = scoring.load(tmp_path / "bert", "masked", ScoringSettings(device="cpu", dtype=dtype))
        assert next(scorer.model.parameters()).dtype == torch.float32
        scores[dtype] = scorer.conditional_logprob(list(prefixes), list(continuations))
    moved = np.abs(scores["tf32"] - scores["float32"])
    assert moved.max() > 0 and moved.max() < 1e-2 * np.abs(scores["float32"]).max()


def test_auto_precision_on_a_gpu_follows_the_checkpoint(tmp_path, monkeypatch, tiny_bert):
    """float16 for checkpoints saved in float32 or float16 (its mantissa keeps more answers),
    bfloat16 for those saved in bfloat16 or of unknown precision, float16 without bfloat16."""
    import json

    from safetensors.torch import save_file

    from knowprobe.devices import resolve_dtype, saved_dtype

    cuda = torch.device("cuda")
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    assert resolve_dtype("auto", cuda, torch.float32) == torch.float16
    assert resolve_dtype("auto", cuda, torch.float16) == torch.float16
    assert resolve_dtype("auto", cuda, torch.bfloat16) == torch.bfloat16
    assert resolve_dtype("auto", cuda, None) == torch.bfloat16
    assert resolve_dtype("float32", cuda, torch.float16) == torch.float32
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: False)
    assert resolve_dtype("auto", cuda, torch.bfloat16) == torch.float16

    saved = tmp_path / "saved"
    tiny_bert.save_pretrained(saved)
    assert saved_dtype(saved) == torch.float32  # save_pretrained declares it
    old = tmp_path / "old"  # an older hub checkpoint: no dtype in its config, the weights say it
    old.mkdir()
    (old / "config.json").write_text(json.dumps({"model_type": "bert"}))
    save_file(
        {"w": torch.zeros(2, dtype=torch.bfloat16), "ids": torch.zeros(2, dtype=torch.int64)}, old / "m.safetensors"
    )
    assert saved_dtype(old) == torch.bfloat16
    (old / "m.safetensors").unlink()
    assert saved_dtype(old) is None


def test_scores_that_are_not_finite_are_an_error_naming_the_precision(tiny_bert, wordpiece_tokenizer):
    import copy

    model = copy.deepcopy(tiny_bert).to(torch.float16)
    with torch.no_grad():  # activations past float16's 65,504, as in a model trained in bfloat16
        model.bert.encoder.layer[0].output.dense.weight.mul_(1e6)
    scorer = MaskedLM(model, wordpiece_tokenizer, SMALL_BATCHES)
    texts = [f"{prefix} {wordpiece_tokenizer.mask_token} ." for prefix, _ in PAIRS]
    candidates = word_ids(wordpiece_tokenizer, CANDIDATE_WORDS)
    with pytest.raises(
        KnowprobeError,
        match=r"BertForMaskedLM in float16: \d+ of its log-probs at the mask are not finite: .*"
        r"set scoring.dtype: bfloat16",
    ):
        scorer.candidate_logprobs(texts, candidates, candidates[: len(texts)])
    with pytest.raises(KnowprobeError, match="pseudo-log-likelihoods are not finite"):
        scorer.conditional_logprob(["A dog"], ["can bark ."])


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks a machine without a usable GPU")
def test_cuda_asked_for_where_there_is_none_is_one_line_naming_the_key():
    """Issue 29: on a node without a working GPU, scoring.device: cuda failed with torch's
    traceback at the first tensor moved."""
    from knowprobe.devices import resolve_device

    with pytest.raises(
        KnowprobeError, match=r"config scoring.device: cuda:1, but this machine \(.+\) has no usable CUDA"
    ):
        resolve_device("cuda:1")


def test_ranks_of_many_inputs_of_one_text_are_computed_in_pieces_with_the_same_result(tiny_causal_models, monkeypatch):
    """A text may stand for any number of inputs (every fact of an LPAQA prompt that begins with
    [Y] has the empty prefix): their ranks among the candidates are compared piece by piece
    (runtime.RANK_PIECE_ELEMENTS), so that memory stays bounded, and equal those made at once."""
    from knowprobe.scoring import runtime

    _, model, tokenizer = tiny_causal_models[0]
    scorer = CausalLM(model, tokenizer, SMALL_BATCHES)
    candidates = word_ids(tokenizer, CANDIDATE_WORDS)
    texts = ["" if i % 3 else "The capital of France is" for i in range(40)]
    targets = np.array([candidates[i % len(candidates)] for i in range(40)])
    whole = scorer.slot_scores(texts, candidates, targets, top_k=3)
    pieces = []
    real = runtime.score_slots
    monkeypatch.setattr(runtime, "RANK_PIECE_ELEMENTS", 2 * len(candidates))  # two inputs a piece
    monkeypatch.setattr(runtime, "score_slots", lambda *a: pieces.append(len(a[2])) or real(*a))
    pieced = scorer.slot_scores(texts, candidates, targets, top_k=3)
    assert max(pieces) > 2  # a batch of more inputs than a piece holds
    np.testing.assert_array_equal(pieced.target_ranks, whole.target_ranks)
    np.testing.assert_array_equal(pieced.target_logprobs, whole.target_logprobs)
    assert len(set(whole.target_ranks[1::3, 0].tolist())) > 1  # the shared text's inputs differ by target
