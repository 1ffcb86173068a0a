"""Every causal architecture transformers loads, on every path the scoring layer gives it.

Which path a model takes (its head only where a score is read, texts packed into rows with
shared prefixes, left-padded batches) is decided by trying each on the loaded model once
(``knowprobe.scoring.paths``), never by its class name. Here tiny random models of many
architectures, built from their configs, score the same texts on every path they take and on
the plain padded one, with a right- and a left-padding tokenizer, and each score equals a plain
forward of the text alone (the model's own logits, log-softmax in float32) within 1e-5. Models
that cannot take a path (Bloom refuses a 4-D mask, MPT's ALiBi ignores position ids, a soft-capped
head that bends its logits) are shown to fall back to the next path, with the same scores.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from knowprobe.scoring import CausalLM, ScoringSettings, causal_generate

from conftest import byte_level_tokenizer

EXACT = 1e-5
SETTINGS = ScoringSettings(device="cpu", dtype="float32", batch_size=3, max_tokens=64, max_length=64)
SMALL = dict(
    hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=64
)
PREFIXES = ["A dog", "The capital of France", "The capital of Italy", "Mozart was born in"]
CONTINUATIONS = ["can bark .", "is Paris .", "is Rome .", "Salzburg , a city ."]
STATEMENTS = [p + " " + c for p, c in zip(PREFIXES, CONTINUATIONS)]
WORDS = [" Paris", " Rome", " city", " dog", " is", " a"]


def configs(vocab_size: int) -> dict:
    import transformers as t

    v = vocab_size
    return {
        "GPT2LMHeadModel": lambda: t.GPT2Config(vocab_size=v, n_embd=32, n_layer=2, n_head=2, n_positions=64),
        "LlamaForCausalLM": lambda: t.LlamaConfig(vocab_size=v, num_key_value_heads=2, **SMALL),
        "MistralForCausalLM": lambda: t.MistralConfig(vocab_size=v, num_key_value_heads=2, **SMALL),
        "Qwen2ForCausalLM": lambda: t.Qwen2Config(vocab_size=v, num_key_value_heads=2, **SMALL),
        "Gemma3ForCausalLM": lambda: t.Gemma3TextConfig(vocab_size=v, num_key_value_heads=2, head_dim=8, **SMALL),
        "OPTForCausalLM": lambda: t.OPTConfig(
            vocab_size=v,
            hidden_size=32,
            ffn_dim=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            max_position_embeddings=64,
            word_embed_proj_dim=32,
        ),
        "PhiForCausalLM": lambda: t.PhiConfig(vocab_size=v, **SMALL),
        "GPTNeoXForCausalLM": lambda: t.GPTNeoXConfig(vocab_size=v, **SMALL),
        "FalconForCausalLM": lambda: t.FalconConfig(
            vocab_size=v, hidden_size=32, num_hidden_layers=2, num_attention_heads=4
        ),
        "GPTJForCausalLM": lambda: t.GPTJConfig(
            vocab_size=v, n_embd=32, n_layer=2, n_head=2, rotary_dim=8, n_positions=64
        ),
        "GPTNeoForCausalLM": lambda: t.GPTNeoConfig(
            vocab_size=v,
            hidden_size=32,
            num_layers=2,
            num_heads=2,
            attention_types=[[["global", "local"], 1]],
            max_position_embeddings=64,
        ),
        # the fallbacks: no 4-D mask (Bloom), positions from ALiBi alone (MPT), a head that bends
        # its logits (Gemma-2's soft-cap, here small enough to bend a tiny model's logits)
        "BloomForCausalLM": lambda: t.BloomConfig(vocab_size=v, hidden_size=32, n_layer=2, n_head=4),
        "MptForCausalLM": lambda: t.MptConfig(vocab_size=v, d_model=32, n_heads=4, n_layers=2, max_seq_len=64),
        "Gemma2ForCausalLM": lambda: t.Gemma2Config(
            vocab_size=v, num_key_value_heads=2, head_dim=8, final_logit_softcapping=0.1, **SMALL
        ),
    }


# what each model cannot do, found at load (every other model takes every path)
NOT_PACKED = {"BloomForCausalLM", "MptForCausalLM", "Gemma2ForCausalLM"}
NO_PLAIN_HEAD = {"Gemma2ForCausalLM"}
NO_LEFT_PADDING = {"BloomForCausalLM", "MptForCausalLM"}


@pytest.fixture(scope="module")
def tokenizers():
    def make(side):
        tokenizer = byte_level_tokenizer(
            ["<|endoftext|>"], bos_token="<|endoftext|>", eos_token="<|endoftext|>", unk_token="<|endoftext|>"
        )
        tokenizer.padding_side = side
        return tokenizer

    return {side: make(side) for side in ("right", "left")}


def build(name: str, vocab_size: int):
    import transformers as t

    torch.manual_seed(0)
    return getattr(t, name)(configs(vocab_size)[name]()).eval()


@torch.no_grad()
def plain_logprobs(model, ids: list[int]) -> torch.Tensor:
    """The model's own forward over one unpadded sequence, log-softmax in float32."""
    return torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0].float(), dim=-1)


def plain_sum(model, ids: list[int], first: int) -> float:
    logprobs = plain_logprobs(model, ids)
    return sum(float(logprobs[p - 1, ids[p]]) for p in range(first, len(ids)))


def path_differences(scorer: CausalLM, model, tokenizer) -> dict[str, float]:
    """max |score - plain forward's| of every path this scorer takes, by path."""
    start = scorer.statement_start
    encode = lambda text: tokenizer(text, add_special_tokens=False)["input_ids"]  # noqa: E731
    reference = [
        plain_sum(model, start + encode(p + " " + c), len(start) + len(encode(p)))
        for p, c in zip(PREFIXES, CONTINUATIONS)
    ]
    out = {}
    paths = ["packed"] if scorer.packing_width(20) is not None else []
    for path in paths + ["padded"]:
        found = scorer.conditional_logprob(PREFIXES, CONTINUATIONS) if path == "packed" else None
        if path == "padded":
            width = scorer.packing_width
            scorer.packing_width = lambda longest: None
            found = scorer.conditional_logprob(PREFIXES, CONTINUATIONS)
            scorer.packing_width = width
        out[f"continuation, {path}"] = float(np.abs(found - reference).max())
    statements = [plain_sum(model, start + encode(s), 1) for s in STATEMENTS]  # every token with a token before it
    out["statement"] = float(np.abs(scorer.statement_logprob(STATEMENTS) - statements).max())
    candidates = [encode(w)[0] for w in WORDS if len(encode(w)) == 1]
    expected = np.array([plain_logprobs(model, start + encode(p))[-1, candidates].numpy() for p in PREFIXES])
    targets = np.array([[c] for c in candidates[: len(PREFIXES)]])
    found = scorer.next_token_logprobs(PREFIXES, candidates, targets, top_k=len(candidates))
    rows = np.arange(len(PREFIXES))
    out["next token"] = float(np.abs(found.target_logprobs[:, 0] - expected[rows, rows]).max())
    slots = scorer.slot_scores(PREFIXES, candidates, targets, top_k=2, keep_hidden=True)
    stored = scorer.candidate_logprobs_from_hidden(slots.hidden, candidates)[slots.index]
    out["stored states"] = float(np.abs(stored - expected).max())
    generated = causal_generate(scorer, PREFIXES, max_new_tokens=3)
    plain = [
        plain_sum(model, start + encode(p) + tokens, len(start) + len(encode(p))) if tokens else 0.0
        for p, tokens in zip(PREFIXES, generated.token_ids)
    ]
    out["generation"] = float(np.abs(generated.logprobs - plain).max())
    return out


@pytest.mark.parametrize("attention", ["sdpa", "eager"])
@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("name", sorted(configs(8)))
def test_every_path_an_architecture_takes_gives_its_plain_forwards_scores(tokenizers, name, side, attention):
    tokenizer = tokenizers[side]
    model = build(name, len(tokenizer))
    try:
        model.set_attn_implementation(attention)
    except ValueError as error:  # Gemma-2's soft-capped attention has no sdpa kernel
        pytest.skip(f"{name} has no {attention} attention: {str(error).splitlines()[0]}")
    scorer = CausalLM(model, tokenizer, SETTINGS)
    assert (scorer.head is None) == (name in NO_PLAIN_HEAD)
    assert scorer.packable == (name not in NOT_PACKED)
    assert scorer.padding_side == ("right" if side == "right" or name in NO_LEFT_PADDING else "left")
    differences = path_differences(scorer, model, tokenizer)
    assert ("continuation, packed" in differences) == (name not in NOT_PACKED)
    assert max(differences.values()) <= EXACT, differences


def test_each_fallback_is_one_log_line_naming_the_model_and_the_path(tokenizers, caplog):
    tokenizer = tokenizers["right"]
    with caplog.at_level("INFO", logger="knowprobe.scoring"):
        CausalLM(build("MptForCausalLM", len(tokenizer)), tokenizer, SETTINGS)
        CausalLM(build("Gemma2ForCausalLM", len(tokenizer)), tokenizer, SETTINGS)
    lines = [record.getMessage() for record in caplog.records]
    assert sum("MptForCausalLM: packed rows do not compute texts as alone" in line for line in lines) == 1
    assert sum("Gemma2ForCausalLM: its logits are not its head applied" in line for line in lines) == 1
