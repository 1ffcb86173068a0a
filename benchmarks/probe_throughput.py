"""Throughput of the probing engine against a LAMA-style reference loop, same model and hardware.

    python benchmarks/probe_throughput.py                  # CPU, BERT-base-sized random model
    python benchmarks/probe_throughput.py --device cuda    # GPU: the engine in bfloat16

Reference (what LAMA's code does): float32, batches of 32 in input order, padded to the
longest input of the batch, LM head and log-softmax over the full vocabulary at every
position, then the mask row restricted to the candidates. Engine: the shared scoring layer's
MaskedLM.candidate_logprobs with the config schema's scoring defaults (length-sorted batches
under a token budget, LM head at the mask only, bfloat16 on GPU) and LPAQA's top_k of 50. Both
score the same (fact, prompt) pairs; the script checks that they agree on the top-1 candidate and
prints pairs/s and the ratio.
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
    settings = ScoringSettings(device=str(device))
    dtype = resolve_dtype(settings.dtype, device)
    engine_model = model_fp32 if dtype == torch.float32 else model_fp32.to(dtype)
    scorer = MaskedLM(engine_model, tokenizer, settings)
    engine_time, out = timed(lambda: scorer.candidate_logprobs(texts, candidate_ids, gold, top_k=50), args.repeats)

    agree = float(np.mean(out.topk_ids[:, 0] == ref_pred))
    rank_agree = float(np.mean(out.target_ranks[:, 0] == ref_rank))
    result = {
        "device": str(device),
        "gpu": torch.cuda.get_device_name(device) if device.type == "cuda" else None,
        "cpu": platform.processor() or platform.machine(),
        "threads": torch.get_num_threads(),
        "engine_dtype": str(dtype).replace("torch.", ""),
        "engine_batch_size": settings.batch_size,
        "engine_max_tokens": settings.max_tokens,
        "pairs": pairs,
        "layers": args.layers,
        "hidden": args.hidden,
        "vocab_size": args.vocab_size,
        "candidates": args.candidates,
        "reference_pairs_per_s": pairs / ref_time,
        "engine_pairs_per_s": pairs / engine_time,
        "speedup": ref_time / engine_time,
        "top1_agreement": agree,
        "gold_rank_agreement": rank_agree,
        "torch": torch.__version__,
    }
    print(
        f"reference (LAMA-style, fp32, batch 32, full-vocabulary log-softmax everywhere): "
        f"{result['reference_pairs_per_s']:.1f} pairs/s"
    )
    print(
        f"engine    (knowprobe, {result['engine_dtype']}, sorted batches, head at the mask only): "
        f"{result['engine_pairs_per_s']:.1f} pairs/s"
    )
    print(
        f"ratio engine/reference: {result['speedup']:.2f}x; top-1 agreement {agree:.4f}, "
        f"gold-rank agreement {rank_agree:.4f}"
    )
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
