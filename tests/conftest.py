"""Fixtures: tiny tokenizers and masked LMs built offline, and the shared development data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

WORDS = [
    "the",
    "capital",
    "of",
    "is",
    "was",
    "born",
    "in",
    "native",
    "language",
    "located",
    "a",
    "an",
    ".",
    ",",
    "(",
    ")",
    "France",
    "Paris",
    "Germany",
    "Berlin",
    "Italy",
    "Rome",
    "Spain",
    "Madrid",
    "Dante",
    "Florence",
    "Mozart",
    "Salzburg",
    "Vienna",
    "Austria",
    "French",
    "German",
    "Italian",
    "Spanish",
    "Europe",
    "Asia",
    "city",
    "river",
    "king",
    "The",
    "official",
    "died",
    "New",
    "York",
    "1756",
    "Japan",
    "Tokyo",
]
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def require_shared(*parts: str) -> Path:
    """A path under ../shared/data, or skip: that data is for development machines and CI only."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent: the shared development data (../shared/data) is not beside this checkout")
    return path


@pytest.fixture(scope="session")
def wordpiece_tokenizer():
    from transformers import BertTokenizerFast

    vocab = SPECIALS + WORDS + ["##s", "##en", "Ber", "##lin", "Ulm"]  # "Ulm": WordPiece only
    # transformers 5 takes ``vocab=``; a ``vocab_file=`` keyword would silently give a 5-token vocabulary
    tokenizer = BertTokenizerFast(vocab={token: i for i, token in enumerate(vocab)}, do_lower_case=False)
    assert len(tokenizer) == len(vocab)
    return tokenizer


@pytest.fixture(scope="session")
def bpe_tokenizer():
    """A byte-level BPE tokenizer in RoBERTa's layout (``<s>``, ``<mask>``, ``Ġ``-prefixed words)."""
    from tokenizers import AddedToken, ByteLevelBPETokenizer, Tokenizer
    from transformers import RobertaTokenizerFast

    trainer = ByteLevelBPETokenizer()
    corpus = [" ".join(WORDS)] * 20 + ["Paris is the capital of France .", "Mozart was born in Salzburg ."] * 20
    trainer.train_from_iterator(
        corpus,
        vocab_size=2000,
        min_frequency=1,
        special_tokens=[
            "<s>",
            "<pad>",
            "</s>",
            "<unk>",
            # as in roberta-base: the mask absorbs the space before it
            AddedToken("<mask>", lstrip=True),
        ],
    )
    tokenizer = RobertaTokenizerFast(
        tokenizer_object=Tokenizer.from_str(trainer.to_str()),
        bos_token="<s>",
        eos_token="</s>",
        sep_token="</s>",
        cls_token="<s>",
        unk_token="<unk>",
        pad_token="<pad>",
        mask_token="<mask>",
    )
    from tokenizers.processors import RobertaProcessing

    tokenizer.backend_tokenizer.post_processor = RobertaProcessing(("</s>", 2), ("<s>", 0))
    assert len(tokenizer) == trainer.get_vocab_size() > 100
    return tokenizer


def _tiny(config_class, model_class, vocab_size, seed=0, **extra):
    torch.manual_seed(seed)
    config = config_class(
        vocab_size=vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        **extra,
    )
    return model_class(config).eval()


@pytest.fixture(scope="session")
def tiny_bert(wordpiece_tokenizer):
    from transformers import BertConfig, BertForMaskedLM

    return _tiny(BertConfig, BertForMaskedLM, len(wordpiece_tokenizer))


@pytest.fixture(scope="session")
def tiny_models(wordpiece_tokenizer, bpe_tokenizer, tiny_bert):
    """(name, model, tokenizer) for each architecture family whose LM head the engine knows."""
    from transformers import (
        AlbertConfig,
        AlbertForMaskedLM,
        DistilBertConfig,
        DistilBertForMaskedLM,
        ElectraConfig,
        ElectraForMaskedLM,
        RobertaConfig,
        RobertaForMaskedLM,
    )

    n = len(wordpiece_tokenizer)
    torch.manual_seed(1)
    distil = DistilBertForMaskedLM(
        DistilBertConfig(vocab_size=n, dim=32, n_layers=2, n_heads=2, hidden_dim=64, max_position_embeddings=64)
    ).eval()
    albert = _tiny(AlbertConfig, AlbertForMaskedLM, n, seed=2, embedding_size=16)
    electra = _tiny(ElectraConfig, ElectraForMaskedLM, n, seed=3, embedding_size=16)
    roberta = _tiny(RobertaConfig, RobertaForMaskedLM, len(bpe_tokenizer), seed=4, pad_token_id=1)
    return [
        ("bert", tiny_bert, wordpiece_tokenizer),
        ("distilbert", distil, wordpiece_tokenizer),
        ("albert", albert, wordpiece_tokenizer),
        ("electra", electra, wordpiece_tokenizer),
        ("roberta", roberta, bpe_tokenizer),
    ]
