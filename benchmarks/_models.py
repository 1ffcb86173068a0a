"""Randomly initialised models of a real model's size, shared by the benchmarks: what they time is
compute, which the weights do not change but the sizes do (layers, hidden size, and the
vocabulary that the LM head projects onto)."""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow" / "scripts"))

from knowprobe import demo_model  # noqa: E402

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
BERT_BASE_CASED_VOCAB = 28996


def random_bert(words: list[str], layers: int, hidden: int, vocab_size: int = BERT_BASE_CASED_VOCAB, seed: int = 0):
    """A BERT of ``layers`` x ``hidden`` and its WordPiece tokenizer over ``words`` (the workload's
    words, BERT's special tokens first), filled up with w0, w1, ... to ``vocab_size`` tokens."""
    from transformers import BertConfig, BertForMaskedLM

    tokenizer = demo_model.make_tokenizer(list(words) + [f"w{i}" for i in range(vocab_size - len(words))])
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=vocab_size,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=hidden // 64,
        intermediate_size=4 * hidden,
    )
    return BertForMaskedLM(config).eval(), tokenizer


def blank_parser():
    """spaCy's default English tagger and dependency parser, randomly initialised (one example
    sentence sets their labels): a trained pipeline's shape and speed, for where none is installed."""
    import spacy
    from spacy.tokens import Doc
    from spacy.training import Example

    nlp = spacy.blank("en")
    nlp.add_pipe("tagger")
    nlp.add_pipe("parser")
    words = ["The", "capital", "of", "France", "is", "Paris", "."]
    reference = Doc(
        nlp.vocab,
        words=words,
        heads=[1, 4, 1, 2, 4, 4, 4],
        deps=["det", "nsubj", "prep", "pobj", "ROOT", "attr", "punct"],
        tags=["DT", "NN", "IN", "NNP", "VBZ", "NNP", "."],
    )
    nlp.initialize(lambda: [Example(nlp.make_doc(" ".join(words)), reference)])
    return nlp
