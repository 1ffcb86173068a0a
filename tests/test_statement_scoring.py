"""Statement scores (docs/scoring.md, "Statement scores") held to lm-pub-quiz 0.3.3 itself, the
library BEAR's numbers come from: on tiny masked and causal models with fast tokenizers and a
hand-made BEAR-format set whose answers run to several tokens, every statement's score within
1e-5 and the accuracies identical; the filling of templates; the next-token identity; each
distinct statement scored once."""

from __future__ import annotations

import copy
import json
import logging
import sys

import numpy as np
import pytest
import torch

from knowprobe.io import KnowprobeError
from knowprobe.scoring import CausalLM, MaskedLM
from knowprobe.statements import Statement, fill_statement

from conftest import ROOT, _tiny, byte_level_tokenizer

lm_pub_quiz = pytest.importorskip("lm_pub_quiz", reason="lm-pub-quiz (the test extra) is not installed")

TOLERANCE = 1e-5

# Two relations: the answer at the end of every template, and the answer in the middle (and at
# the start, capitalised) of others. Answers of several words and of several word pieces.
RELATIONS = {
    "P1": {
        "templates": ["[X] is located in [Y].", "The capital of [X] is [Y] .", "[X], a city of [Y]"],
        "answers": ["France", "Germany", "New York", "Salzburgen", "Asia Europe", "Vienna"],
        "facts": [
            ("Paris", "France"),
            ("Berlin", "Germany"),
            ("Mozart", "Salzburgen"),
            ("Rome", "Asia Europe"),
            ("the king", "New York"),
            ("Ulm", "Vienna"),
            ("Tokyo", "New York"),
        ],
    },
    "P2": {
        "templates": ["[Y] is the native language of [X] .", "In [Y], [X] was born.", "the city of [Y] is in [X] ."],
        "answers": ["French", "Italians", "Spanish", "German city", "Tokyo"],
        "facts": [
            ("France", "French"),
            ("Dante", "Italians"),
            ("Madrid", "Spanish"),
            ("Austria", "German city"),
            ("Japan", "Tokyo"),
            ("Vienna", "German city"),
        ],
    },
}


@pytest.fixture(scope="module")
def bear_set(tmp_path_factory):
    """A BEAR-format directory (lm-pub-quiz's ``Dataset.from_path`` layout): ``metadata_relations.json``
    with each relation's templates and answer space, one JSON-lines file of instances per relation."""
    root = tmp_path_factory.mktemp("bear")
    metadata = {}
    for code, relation in RELATIONS.items():
        ids = [f"{code}-Q{i}" for i in range(len(relation["answers"]))]
        metadata[code] = {
            "templates": relation["templates"],
            "answer_space_labels": relation["answers"],
            "answer_space_ids": ids,
        }
        with open(root / f"{code}.jsonl", "w") as out:
            for k, (subject, answer) in enumerate(relation["facts"]):
                row = {
                    "sub_id": f"{code}-S{k}",
                    "sub_label": subject,
                    "obj_id": ids[relation["answers"].index(answer)],
                    "obj_label": answer,
                }
                out.write(json.dumps(row) + "\n")
    (root / "metadata_relations.json").write_text(json.dumps(metadata))
    return root


def peer_scores(model, tokenizer, model_type: str, dataset_dir, template: int, **options):
    """lm-pub-quiz's summed scores ({relation: [instances, answers]}) and accuracies."""
    from lm_pub_quiz import Dataset, Evaluator

    dataset = Dataset.from_path(dataset_dir)
    # lm-pub-quiz sets a missing pad token on the tokenizer it is given: a copy keeps the fixture's
    evaluator = Evaluator.from_model(
        model, model_type=model_type, tokenizer=copy.deepcopy(tokenizer), device="cpu", **options
    )
    results = evaluator.evaluate_dataset(
        dataset, template_index=template, reduction="sum", batch_size=4, metric="accuracy"
    )
    scores, accuracy = {}, {}
    for result in results:
        table = result.instance_table
        scores[result.relation_code] = np.array(table["pll_scores"].tolist(), dtype=np.float64)
        accuracy[result.relation_code] = result.metric_values["accuracy"]
    return scores, accuracy


def our_scores(scorer, template: int, conditional: bool, **options):
    """knowprobe's scores in the same layout, and the accuracy with ties going to the first answer."""
    scores, accuracy = {}, {}
    for code, relation in RELATIONS.items():
        statements = [
            fill_statement(relation["templates"][template], subject, answer)
            for subject, _ in relation["facts"]
            for answer in relation["answers"]
        ]
        spans = [(s.answer_start, s.answer_end) for s in statements] if conditional else None
        values = scorer.statement_logprob([s.text for s in statements], spans, **options)
        scores[code] = values.reshape(len(relation["facts"]), len(relation["answers"]))
        gold = [relation["answers"].index(answer) for _, answer in relation["facts"]]
        accuracy[code] = float(np.mean(scores[code].argmax(axis=1) == gold))
    return scores, accuracy


def compare(ours, peer) -> float:
    assert ours[1] == peer[1]  # accuracies, per relation
    return max(float(np.abs(ours[0][code] - peer[0][code]).max()) for code in RELATIONS)


# Weights drawn wider than the 0.02 of a fresh model: its near-uniform predictions would put the
# PLL variants 1e-4 apart and rank the answers almost by length; at 0.1 they differ by about 0.01.
SPREAD = 0.1


@pytest.fixture(scope="module")
def masked_models(wordpiece_tokenizer, bpe_tokenizer):
    """A BERT (WordPiece) and a RoBERTa (byte-level BPE), both with fast tokenizers."""
    from transformers import BertConfig, BertForMaskedLM, RobertaConfig, RobertaForMaskedLM

    bert = _tiny(BertConfig, BertForMaskedLM, len(wordpiece_tokenizer), seed=11, initializer_range=SPREAD)
    roberta = _tiny(
        RobertaConfig, RobertaForMaskedLM, len(bpe_tokenizer), seed=12, pad_token_id=1, initializer_range=SPREAD
    )
    return [("bert", bert, wordpiece_tokenizer), ("roberta", roberta, bpe_tokenizer)]


@pytest.fixture(scope="module")
def causal_models():
    """A GPT-2 (its tokenizer adds no BOS) and a Llama. lm-pub-quiz cannot score a model without a
    BOS token (it prepends ``bos_token``, None there), so no Qwen2 here."""
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

    gpt2_tokenizer = byte_level_tokenizer(
        ["<|endoftext|>"], bos_token="<|endoftext|>", eos_token="<|endoftext|>", unk_token="<|endoftext|>"
    )
    llama_tokenizer = byte_level_tokenizer(
        ["<s>", "</s>", "<unk>"], bos_token="<s>", eos_token="</s>", unk_token="<unk>"
    )
    torch.manual_seed(13)
    gpt2 = GPT2LMHeadModel(
        GPT2Config(
            vocab_size=len(gpt2_tokenizer),
            n_embd=32,
            n_layer=2,
            n_head=2,
            n_positions=64,
            initializer_range=SPREAD,
            bos_token_id=gpt2_tokenizer.bos_token_id,
            eos_token_id=gpt2_tokenizer.eos_token_id,
        )
    )
    torch.manual_seed(14)
    llama = LlamaForCausalLM(
        LlamaConfig(
            vocab_size=len(llama_tokenizer),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=64,
            initializer_range=SPREAD,
        )
    )
    return [("gpt2", gpt2.eval(), gpt2_tokenizer), ("llama", llama.eval(), llama_tokenizer)]


@pytest.mark.parametrize("conditional", [False, True], ids=["statement", "conditional"])
@pytest.mark.parametrize("pll", ["original", "within_word_l2r"])
def test_masked_scores_equal_lm_pub_quiz(masked_models, bear_set, pll, conditional):
    for name, model, tokenizer in masked_models:
        assert tokenizer.is_fast
        scorer = MaskedLM(model, tokenizer)
        for template in range(3):
            peer = peer_scores(
                model, tokenizer, "MLM", bear_set, template, pll_metric=pll, conditional_score=conditional
            )
            ours = our_scores(scorer, template, conditional, pll=pll)
            difference = compare(ours, peer)
            logging.getLogger(__name__).info("%s %s %s template %d: %.2e", name, pll, conditional, template, difference)
            assert difference < TOLERANCE, (name, template)
            if pll == "within_word_l2r":  # the variants differ far beyond the tolerance: the check tells them apart
                other = our_scores(scorer, template, conditional, pll="original")[0]
                assert max(np.abs(other[code] - ours[0][code]).max() for code in RELATIONS) > 100 * TOLERANCE


@pytest.mark.parametrize("conditional", [False, True], ids=["statement", "conditional"])
def test_causal_scores_equal_lm_pub_quiz(causal_models, bear_set, conditional):
    for name, model, tokenizer in causal_models:
        assert tokenizer.is_fast
        # the scorer's own start token does not matter: statements always start with BOS
        scorer = CausalLM(model, tokenizer, start_token=False)
        for template in range(3):
            peer = peer_scores(
                model, tokenizer, "CLM", bear_set, template, ensure_bos_token_added=True, conditional_score=conditional
            )
            ours = our_scores(scorer, template, conditional)
            difference = compare(ours, peer)
            logging.getLogger(__name__).info("%s causal %s template %d: %.2e", name, conditional, template, difference)
            assert difference < TOLERANCE, (name, template)


@pytest.mark.parametrize(
    "template, subject, answer, capitalize",
    [
        ("[X] is located in [Y].", "paris", "France", True),
        ("[Y] is the native language of [X] .", "France", "french", True),
        ("[Y] is the native language of [X] .", "France", "french", False),
        ("[X] and [X] are in [Y] now", "rome", "New York", True),
        ("the city of [Y] is in [X] .", "Austria", "Vienna", True),
        ("[Y]", "x", "ßa", True),
    ],
)
def test_fill_statement_as_lm_pub_quiz(template, subject, answer, capitalize):
    from lm_pub_quiz.evaluators.templating_util import Templater

    text, roles = Templater(capitalize=capitalize).replace_placeholders(
        template=template, subject=subject, answer=answer
    )
    statement = fill_statement(template, subject, answer, capitalize=capitalize)
    assert statement.text == text
    assert isinstance(statement, Statement)
    if answer[0] != "ß":  # lm-pub-quiz's span does not follow an upper case of another length
        assert [(statement.answer_start, statement.answer_end)] == roles["answer"]
    assert statement.text[statement.answer_start : statement.answer_end].lower() == answer.lower().replace("ß", "ss")


def test_fill_statement_needs_one_answer_slot():
    with pytest.raises(KnowprobeError, match="exactly one"):
        fill_statement("[X] is [Y] or [Y]", "a", "b")
    with pytest.raises(KnowprobeError, match="0"):
        fill_statement("[X] is", "a", "b")


def test_next_token_score_is_the_single_token_statement_score(tiny_causal_models):
    """log P(candidate | BOS + prefix) by ``next_token_logprobs`` equals the answer-only
    statement score of the prefix followed by that one token, for every model (Qwen2, without a
    BOS, after its EOS) whatever the scorer's ``start_token``."""
    for name, model, tokenizer in tiny_causal_models:
        for start_token in (True, False):
            scorer = CausalLM(model, tokenizer, start_token=start_token)
            prefixes = ["Paris is the capital of", "Mozart was born in", "The"]
            words = [" France", " Salzburg", " city", " Rome"]
            ids = [tokenizer(word, add_special_tokens=False)["input_ids"] for word in words]
            assert all(len(i) == 1 for i in ids), ids
            candidates = [i[0] for i in ids]
            targets = np.tile(candidates, (len(prefixes), 1))
            next_token = scorer.next_token_logprobs(prefixes, candidates, targets).target_logprobs
            statements = [prefix + word for prefix in prefixes for word in words]
            spans = [(len(prefix), len(prefix) + len(word)) for prefix in prefixes for word in words]
            whole = scorer.statement_logprob(statements, spans).reshape(len(prefixes), len(words))
            np.testing.assert_allclose(next_token, whole, atol=TOLERANCE, err_msg=f"{name} start_token={start_token}")


def test_causal_statement_starts_with_bos_whatever_the_scorer(tiny_causal_models):
    """The statement score is the same with and without the scorer's start token, and equals
    ``conditional_logprob`` of the whole text after the start token; Qwen2 scores after EOS."""
    for name, model, tokenizer in tiny_causal_models:
        texts = ["Paris is the capital of France.", "Mozart was born in Salzburg ."]
        with_start = CausalLM(model, tokenizer, start_token=True).statement_logprob(texts)
        without = CausalLM(model, tokenizer, start_token=False).statement_logprob(texts)
        np.testing.assert_array_equal(with_start, without)
        start = tokenizer.bos_token if tokenizer.bos_token_id is not None else tokenizer.eos_token
        reference = CausalLM(model, tokenizer, start_token=False).conditional_logprob([start] * 2, texts, separator="")
        np.testing.assert_allclose(with_start, reference, atol=TOLERANCE, err_msg=name)


def test_answer_boundary_leaves_a_lone_space_token_out(tiny_causal_models):
    """Where the tokenizer emits the space before the answer as a token of its own (byte-level BPE
    before a second space), that token is not scored: the answer-only score is the statement's
    less the log-probs of every token before the answer's first."""
    name, model, tokenizer = tiny_causal_models[0]
    scorer = CausalLM(model, tokenizer)
    text = "Paris is in  France."
    begin = text.index("France")
    tokens = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    assert (begin - 2, begin - 1) in tokens["offset_mapping"]  # the lone space before " France"
    prefix = text[: begin - 1]  # up to the token " France" (the space it carries included)
    conditional = scorer.statement_logprob([text], [(begin, begin + len("France"))])
    expected = scorer.statement_logprob([text]) - scorer.statement_logprob([prefix])
    np.testing.assert_allclose(conditional, expected, atol=TOLERANCE)


def test_identical_statements_scored_once(tiny_bert, wordpiece_tokenizer, tiny_causal_models, monkeypatch):
    texts = ["Paris is in France .", "Rome is in Italy .", "Paris is in France ."]
    spans = [(12, 18), (11, 16), (12, 18)]
    masked = MaskedLM(tiny_bert, wordpiece_tokenizer)
    seen = []
    original = MaskedLM.pseudo_loglikelihood

    def counting(self, texts, *args, **kwargs):
        seen.append(len(texts))
        return original(self, texts, *args, **kwargs)

    monkeypatch.setattr(MaskedLM, "pseudo_loglikelihood", counting)
    values = masked.statement_logprob(texts, spans)
    assert seen == [2] and values[0] == values[2] and values[0] != values[1]
    # the same text with another span is another score
    assert masked.statement_logprob(texts[:1] * 2, [(12, 18), (0, 5)]).std() > 0

    name, model, tokenizer = tiny_causal_models[0]
    causal = CausalLM(model, tokenizer)
    texts_seen = []
    packed = CausalLM.packed_logprobs

    def counting_rows(self, tree):
        texts_seen.append(tree.texts)
        return packed(self, tree)

    monkeypatch.setattr(CausalLM, "packed_logprobs", counting_rows)
    values = causal.statement_logprob(texts, spans)
    assert texts_seen == [2] and values[0] == values[2] and values[0] != values[1]


def test_statement_errors(tiny_bert, wordpiece_tokenizer, tiny_causal_models):
    name, model, tokenizer = tiny_causal_models[0]
    for scorer in (MaskedLM(tiny_bert, wordpiece_tokenizer), CausalLM(model, tokenizer)):
        with pytest.raises(KnowprobeError, match="pll="):
            scorer.statement_logprob(["Paris is in France ."], pll="sentence_l2r")
        with pytest.raises(KnowprobeError, match="not a non-empty part"):
            scorer.statement_logprob(["Paris is in France ."], [(12, 40)])
        with pytest.raises(KnowprobeError, match="1 answer spans for 2"):
            scorer.statement_logprob(["Paris .", "Rome ."], [(0, 5)])
        with pytest.raises(KnowprobeError, match="has no tokens"):
            scorer.statement_logprob([""])
        assert scorer.statement_logprob([]).shape == (0,)


@pytest.mark.parametrize("pll, saved", [("original", 1), ("within_word_l2r", 2)])
def test_alike_masked_copies_run_once(tiny_bert, wordpiece_tokenizer, monkeypatch, pll, saved):
    """Statements that differ only in an answer of as many word pieces make alike copies where
    the answer is masked whole ("Paris" and "Rome"; under ``within_word_l2r`` also the first
    pieces of "Salzburg ##en" and "Italian ##s"): each runs once, every statement reading its own
    token there, and its score is the one it has scored alone."""
    scorer = MaskedLM(tiny_bert, wordpiece_tokenizer)
    texts = [
        fill_statement("[X] was born in [Y] .", "Mozart", a).text for a in ["Salzburgen", "Italians", "Paris", "Rome"]
    ]
    alone = np.concatenate([scorer.statement_logprob([text], pll=pll) for text in texts])
    run = []
    original = MaskedLM.logits_at

    def counting(self, sequences, positions):
        run.append(len(sequences))
        return original(self, sequences, positions)

    monkeypatch.setattr(MaskedLM, "logits_at", counting)
    together = scorer.statement_logprob(texts, pll=pll)
    copies = sum(len(wordpiece_tokenizer.tokenize(text)) for text in texts)
    assert sum(run) == copies - saved
    np.testing.assert_allclose(together, alone, atol=TOLERANCE)
    assert len(set(together.round(6))) == 4


def test_benchmark_names_the_groups_where_lm_pub_quiz_reads_a_second_bos(causal_models):
    """benchmarks/statement_scoring.py compares knowprobe with lm-pub-quiz on statements of one BOS
    each; its ``second_bos`` names the (instance, template) groups where lm-pub-quiz reads two (a
    tokenizer that puts its BOS first under ``add_bos_token`` and pads on the left, as Gemma-3's:
    docs/bear.md). Held here to lm-pub-quiz's own encode of each group, padding on either side."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from statement_scoring import group_sizes, second_bos, statements

    _, llama, tokenizer = causal_models[1]
    relations = [{"code": code, **spec} for code, spec in RELATIONS.items()]
    # and P1 with its longest answer first: padded on the left, its first row then opens with the BOS
    longest_first = sorted(RELATIONS["P1"]["answers"], key=lambda answer: -len(tokenizer(" " + answer)["input_ids"]))
    relations.append({**relations[0], "code": "P3", "answers": longest_first})
    texts = [s.text for s in statements(relations)]
    for side in ("left", "right"):
        copied = copy.deepcopy(tokenizer)
        copied.padding_side = side
        evaluator = lm_pub_quiz.Evaluator.from_model(llama, model_type="CLM", tokenizer=copied, device="cpu")
        read_twice, start = [], 0
        for size in group_sizes(relations):
            batch, _ = evaluator.encode(texts[start : start + size], [None] * size)
            bos = (batch["input_ids"] == copied.bos_token_id).sum(dim=1)
            assert len(set(bos.tolist())) == 1  # one BOS or two, the same for the whole group
            read_twice.append(int(bos[0]) == 2)
            start += size
        named = second_bos(copied, relations)
        assert named.tolist() == read_twice
        assert (0 < named.sum() < len(named)) if side == "left" else not named.any()
