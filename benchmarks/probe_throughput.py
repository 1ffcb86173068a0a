"""Throughput of the probing engine against a LAMA-style reference loop, same model and hardware.

    python benchmarks/probe_throughput.py                  # CPU, BERT-base-sized random model
    python benchmarks/probe_throughput.py --device cuda    # GPU: the engine in float16 (auto)

Reference (what LAMA's code does): float32, batches of 32 in input order, padded to the
longest input of the batch, LM head and log-softmax over the full vocabulary at every
position, then the mask row restricted to the candidates. Engine: the shared scoring layer's
MaskedLM.candidate_logprobs with the config schema's scoring defaults (length-sorted batches
under the device's batch limits, ``auto``: 128 sequences / 16,384 tokens on the CPU, 2,048 /
262,144 on a GPU; LM head at the mask only; on GPU float16 as ``scoring.dtype: auto`` gives
for a float32 checkpoint such as bert-base-cased; ``--dtype`` another) and LPAQA's top_k of 50. Both
score the same (fact, prompt) pairs; the script checks that they agree on the top-1 candidate and
prints pairs/s and the ratio.

The yardstick is the hardware's arithmetic rate: the model FLOPs a pair costs, counted from the
config (2 x the parameters a token passes through x its real tokens, attention's 4 x length^2 x
hidden per layer, the LM head at the mask), times pairs/s, against the peak of a large matrix
product measured in the same run in the engine's precision (and, on a GPU, the datasheet's dense
float16/bfloat16 figure, the same for both); and the share of that peak the FLOPs the engine
runs reach (its last layer runs at the mask only, so it computes less than the model FLOPs). A sweep
over batch limits (``--sweep``) prints each setting's rate and the padding its length-sorted
batches waste; ``--compile`` times the engine with ``torch.compile`` of the encoder beside it
(the last layer's stand-in, scoring/final_layer.py, compiles into the same graph every batch).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow" / "scripts"))

from _models import SPECIALS, random_bert  # noqa: E402

from knowprobe.devices import resolve_dtype  # noqa: E402
from knowprobe.prompts import fill_template  # noqa: E402
from knowprobe.scoring import MaskedLM, ScoringSettings  # noqa: E402

TEMPLATES = [
    "[X] was born in [Y] .",
    "The capital of [X] is [Y] .",
    "[X] is a member of the [Y] political party .",
    "The native language of [X] is [Y] .",
    "[X] is developed by [Y] .",
    "[X] plays in [Y] position .",
]


def build(vocab_size: int, layers: int, hidden: int, seed: int = 0):
    """A randomly initialised BERT of the given size over the templates' words and synthetic ones."""
    template_words = sorted({w for t in TEMPLATES for w in t.split() if w not in ("[X]", "[Y]")})
    return random_bert(SPECIALS + template_words, layers, hidden, vocab_size, seed)


def workload(tokenizer, pairs: int, candidates: int, seed: int = 0):
    """LAMA-like pairs: subjects of 1-5 words (most 2), objects among the candidates."""
    rng = np.random.default_rng(seed)
    pool = [f"w{i}" for i in range(len(tokenizer) - len(SPECIALS) - 50)]
    candidate_ids = np.array(sorted(rng.choice(len(pool), size=candidates, replace=False))) + (
        len(tokenizer) - len(pool)
    )
    texts, gold = [], []
    for _ in range(pairs):
        n_words = int(np.clip(rng.poisson(2.0), 1, 5))
        subject = " ".join(rng.choice(pool, size=n_words))
        texts.append(fill_template(TEMPLATES[rng.integers(len(TEMPLATES))], subject, tokenizer.mask_token))
        gold.append(int(rng.choice(candidate_ids)))
    return texts, np.array(gold), candidate_ids


@torch.inference_mode()
def reference(model, tokenizer, texts, gold, candidate_ids, device, batch_size=32):
    """LAMA's way: fp32, input order, full-vocabulary log-softmax at every position."""
    candidates = torch.as_tensor(candidate_ids, device=device)
    predictions, ranks = [], []
    for start in range(0, len(texts), batch_size):
        batch = tokenizer(texts[start : start + batch_size], padding=True, return_tensors="pt").to(device)
        logprobs = torch.log_softmax(model(**batch).logits.float(), dim=-1)  # [batch, length, vocab]
        rows, cols = (batch["input_ids"] == tokenizer.mask_token_id).nonzero(as_tuple=True)
        at_mask = logprobs[rows, cols][:, candidates]
        gold_lp = logprobs[rows, cols].gather(
            1, torch.as_tensor(gold[start : start + batch_size], device=device)[:, None]
        )
        predictions.append(candidates[at_mask.argmax(dim=1)].cpu())
        ranks.append((at_mask > gold_lp).sum(dim=1).cpu())
    return torch.cat(predictions).numpy(), torch.cat(ranks).numpy()


# Dense float16/bfloat16 tensor-core peaks from the vendors' datasheets (without sparsity), TFLOP/s
DATASHEET_BF16_TFLOPS = {"H100 SXM": 989.4, "H100 PCIe": 756.0, "H200": 989.4, "A100": 312.0}


def flops_per_pair(config, lengths: np.ndarray, final_layer_at_mask: bool = False) -> np.ndarray:
    """Model FLOPs of each pair: 2 x the weights each real token passes through (attention's four
    hidden x hidden projections and the feed-forward's two hidden x intermediate ones, in every
    layer), attention's scores and weighted sum (4 x length x hidden per token and layer), and the
    LM head at the mask (its hidden x hidden transform and hidden x vocabulary decoder).

    ``final_layer_at_mask``: the FLOPs the engine runs, whose last layer computes keys and values
    at every token and the rest at the mask only (scoring/final_layer.py)."""
    hidden, layers = config.hidden_size, config.num_hidden_layers
    lengths = lengths.astype(np.float64)
    layer = 2 * (4 * hidden * hidden + 2 * hidden * config.intermediate_size)
    attention = 4 * layers * hidden * lengths**2
    head = 2 * (hidden * hidden + hidden * config.vocab_size)
    flops = layers * layer * lengths + attention + head
    if final_layer_at_mask:
        others = lengths - 1  # positions where the last layer runs only its key and value projections
        flops -= others * (layer - 2 * 2 * hidden * hidden) + 4 * hidden * (lengths**2 - lengths)
    return flops


def measured_peak(device, dtype, size: int = 4096, repeats: int = 5) -> float:
    """FLOP/s of a size x size matrix product, best of ``repeats``: the hardware's peak as this
    run reaches it."""
    a = torch.randn(size, size, device=device, dtype=dtype)
    b = torch.randn(size, size, device=device, dtype=dtype)
    best = float("inf")
    for _ in range(repeats + 1):
        if device.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        torch.matmul(a, b)
        if device.type == "cuda":
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - start)
    return 2 * size**3 / best


def padding_waste(lengths: np.ndarray, batch_size: int, max_tokens: int, max_padding: float) -> float:
    """Padded tokens per real token, less one, of the engine's length-sorted batches."""
    from knowprobe.scoring.runtime import make_batches

    batches = make_batches(lengths, batch_size, max_tokens, max_padding)
    padded = sum(len(batch) * lengths[batch].max() for batch in batches)
    return padded / lengths.sum() - 1


def timed(function, repeats: int):
    best, result = float("inf"), None
    for _ in range(repeats):
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        start = time.perf_counter()
        result = function()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu")
    parser.add_argument(
        "--pairs", type=int, default=None, help="(fact, prompt) pairs; default 1024 on CPU, 20000 on GPU"
    )
    parser.add_argument("--vocab-size", type=int, default=28996, help="bert-base-cased's vocabulary size")
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--hidden", type=int, default=768)
    parser.add_argument("--candidates", type=int, default=21018, help="LAMA's common vocabulary size")
    parser.add_argument("--repeats", type=int, default=2, help="best of N timings of each side")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--out", default="benchmarks/results/probe_throughput.json")
    parser.add_argument(
        "--sweep", action="store_true", help="time the engine at several batch limits (batch_size/max_tokens)"
    )
    parser.add_argument("--compile", action="store_true", help="also time the engine with torch.compile")
    parser.add_argument(
        "--dtype", default="auto", choices=["auto", "float32", "float16", "bfloat16"], help="the engine's"
    )
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    pairs = args.pairs or (20000 if device.type == "cuda" else 1024)

    model, tokenizer = build(args.vocab_size, args.layers, args.hidden)
    texts, gold, candidate_ids = workload(tokenizer, pairs, args.candidates)
    lengths = [len(ids) for ids in tokenizer(texts)["input_ids"]]
    print(
        f"model: BERT {args.layers} layers, hidden {args.hidden}, vocabulary {args.vocab_size}; "
        f"{pairs} pairs, {args.candidates} candidates, prompt length {min(lengths)}-{max(lengths)} "
        f"(mean {np.mean(lengths):.1f}); device {device}, {torch.get_num_threads()} CPU threads"
    )

    model_fp32 = model.to(device)
    ref_time, (ref_pred, ref_rank) = timed(
        lambda: reference(model_fp32, tokenizer, texts, gold, candidate_ids, device), args.repeats
    )
    settings = ScoringSettings(device=str(device), dtype=args.dtype)
    dtype = resolve_dtype(settings.dtype, device, torch.float32)  # the random model is a float32 checkpoint
    engine_model = model_fp32 if dtype == torch.float32 else model_fp32.to(dtype)
    scorer = MaskedLM(engine_model, tokenizer, settings)
    engine_time, out = timed(lambda: scorer.candidate_logprobs(texts, candidate_ids, gold, top_k=50), args.repeats)

    lengths = np.asarray(lengths, dtype=np.int64)
    flops = flops_per_pair(model.config, lengths)
    flops_run = flops_per_pair(model.config, lengths, final_layer_at_mask=scorer.final_layer is not None)
    peak_dtype = dtype
    peak = measured_peak(device, peak_dtype, size=2048 if device.type == "cpu" else 8192)
    sweep = []
    if args.sweep:
        for batch_size, max_tokens in [(32, 4096), (128, 16384), (512, 65536), (2048, 262144)]:
            swept = MaskedLM(
                engine_model, tokenizer, ScoringSettings(str(device), settings.dtype, batch_size, max_tokens)
            )
            seconds, _ = timed(
                lambda scorer=swept: scorer.candidate_logprobs(texts, candidate_ids, gold, top_k=50), args.repeats
            )
            sweep.append(
                {
                    "batch_size": batch_size,
                    "max_tokens": max_tokens,
                    "pairs_per_s": pairs / seconds,
                    "padding_waste": padding_waste(lengths, batch_size, max_tokens, settings.max_padding),
                    "tflops": flops.sum() / seconds / 1e12,
                }
            )
            print(
                f"  batches of at most {batch_size} sequences / {max_tokens} tokens: {pairs / seconds:.1f} pairs/s, "
                f"padding {sweep[-1]['padding_waste']:.1%} of the real tokens"
            )
    compiled_rate = None
    if args.compile:
        compiled = MaskedLM(engine_model, tokenizer, settings)
        compiled.model.base_model.forward = torch.compile(compiled.model.base_model.forward, dynamic=True)
        compiled.candidate_logprobs(texts, candidate_ids, gold, top_k=50)  # compile once, not timed
        seconds, compiled_out = timed(
            lambda: compiled.candidate_logprobs(texts, candidate_ids, gold, top_k=50), args.repeats
        )
        compiled_rate = pairs / seconds
        moved = float(np.abs(compiled_out.target_logprobs - out.target_logprobs).max())
        print(
            f"engine with torch.compile (dynamic shapes): {compiled_rate:.1f} pairs/s; gold log-probs within "
            f"{moved:.1e} of the engine's"
        )
    agree = float(np.mean(out.topk_ids[:, 0] == ref_pred))
    rank_agree = float(np.mean(out.target_ranks[:, 0] == ref_rank))
    result = {
        "device": str(device),
        "gpu": torch.cuda.get_device_name(device) if device.type == "cuda" else None,
        "cpu": platform.processor() or platform.machine(),
        "threads": torch.get_num_threads(),
        "engine_dtype": str(dtype).replace("torch.", ""),
        "engine_batch_size": scorer.settings.batch_size,  # the device's, where auto
        "engine_max_tokens": scorer.settings.max_tokens,
        "engine_max_padding": settings.max_padding,
        "pairs": pairs,
        "layers": args.layers,
        "hidden": args.hidden,
        "vocab_size": args.vocab_size,
        "candidates": args.candidates,
        "reference_pairs_per_s": pairs / ref_time,
        "engine_pairs_per_s": pairs / engine_time,
        "speedup": ref_time / engine_time,
        "top1_agreement": agree,
        "flops_per_pair": float(flops.mean()),
        "engine_tflops": flops.sum() / engine_time / 1e12,
        "reference_tflops": flops.sum() / ref_time / 1e12,
        "measured_peak_tflops": peak / 1e12,
        "peak_dtype": str(peak_dtype).replace("torch.", ""),
        "engine_fraction_of_peak": flops.sum() / engine_time / peak,
        # what the engine computes (the last layer at the mask): the hardware's share in use
        "engine_flops_run_per_pair": float(flops_run.mean()),
        "engine_run_fraction_of_peak": flops_run.sum() / engine_time / peak,
        "datasheet_bf16_tflops": DATASHEET_BF16_TFLOPS,
        "padding_waste": padding_waste(
            lengths, scorer.settings.batch_size, scorer.settings.max_tokens, settings.max_padding
        ),
        "sweep": sweep,
        "compiled_pairs_per_s": compiled_rate,
        "gold_rank_agreement": rank_agree,
        "torch": torch.__version__,
    }
    print(
        f"reference (LAMA-style, fp32, batch 32, full-vocabulary log-softmax everywhere): "
        f"{result['reference_pairs_per_s']:.1f} pairs/s"
    )
    print(
        f"engine    (knowprobe, {result['engine_dtype']}, sorted batches of at most {result['engine_batch_size']} "
        f"sequences / {result['engine_max_tokens']} tokens, head at the mask only): "
        f"{result['engine_pairs_per_s']:.1f} pairs/s"
    )
    print(
        f"ratio engine/reference: {result['speedup']:.2f}x; top-1 agreement {agree:.4f}, "
        f"gold-rank agreement {rank_agree:.4f}"
    )
    print(
        f"arithmetic: {result['flops_per_pair'] / 1e9:.2f} GFLOP a pair; engine {result['engine_tflops']:.3f} TFLOP/s, "
        f"reference {result['reference_tflops']:.3f}; the measured peak ({result['peak_dtype']} matrix product) "
        f"{result['measured_peak_tflops']:.3f} TFLOP/s: the engine at {result['engine_fraction_of_peak']:.1%} of it"
        + ("" if device.type == "cpu" else f" (datasheet, dense float16/bfloat16: {DATASHEET_BF16_TFLOPS})")
        + f"; padding {result['padding_waste']:.1%} of the real tokens"
    )
    print(
        f"computed by the engine (the last layer at the mask only): {result['engine_flops_run_per_pair'] / 1e9:.2f} "
        f"GFLOP a pair, {result['engine_run_fraction_of_peak']:.1%} of the measured peak"
    )
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
