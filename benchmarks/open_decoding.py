"""Open decoding at masks (``knowprobe.scoring.decoding.masked_decode``, X-FACTR's three ways)
against the plain per-fact loop, in the same run on the same model.

    python benchmarks/open_decoding.py                       # 64 prompts, M = 5, every method
    python benchmarks/open_decoding.py --prompts 256 --methods order

The plain loop is the tests' reference (tests/test_decoding.py, ``reference_decode``): one prompt
and one number of masks at a time, the model's own forward (head at every position) once per
step. The batched decoder puts every (prompt, m) row in length-sorted batches and runs one
forward per batch and step, the LM head only at the masks it reads. The model is randomly
initialised at BERT-base size (12 layers, hidden 768, BERT-base-cased's vocabulary of 28,996;
benchmarks/_models.py); the prompts are LAMA-style templates with made-up subjects. Printed per
method: seconds of each, the ratio, and whether the answers (every length's token ids) are
identical and the log-probs' largest difference. With several methods, last: all of them in one
run (``masked_decode_jointly``, as the workflow's multi-token probe asks its train half: a forward
that rows of several methods share runs once) against the sum of their per-fact loops.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow" / "scripts"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _models import SPECIALS, random_bert  # noqa: E402

from knowprobe.scoring import MaskedLM, ScoringSettings, masked_decode, masked_decode_jointly  # noqa: E402

TEMPLATES = [
    "[X] was born in [Y] .",
    "The capital of [X] is [Y] .",
    "[Y] is the official language of [X] .",
    "[X] is a member of [Y] .",
]
WORDS = sorted({w for t in TEMPLATES for w in t.split() if w not in ("[X]", "[Y]")})


@torch.inference_mode()
def plain_decode(model, tokenizer, prompt: str, max_masks: int, method: str):
    """One prompt, one m at a time, one full forward per step (the tests' reference)."""
    allowed = torch.ones(len(tokenizer), dtype=torch.bool)
    allowed[tokenizer.all_special_ids] = False
    out = []
    for m in range(1, max_masks + 1):
        ids = tokenizer(prompt.replace("[Y]", " ".join([tokenizer.mask_token] * m)), return_tensors="pt")
        ids = ids["input_ids"][0]
        slots = torch.nonzero(ids == tokenizer.mask_token_id)[:, 0].tolist()
        tokens, logprobs, remaining = {}, {}, list(slots)
        while remaining:
            logp = torch.log_softmax(model(input_ids=ids[None]).logits[0].float(), dim=-1)
            best = {p: int(logp[p].masked_fill(~allowed, -float("inf")).argmax()) for p in remaining}
            if method == "independent":
                chosen = remaining
            elif method == "order":
                chosen = [remaining[0]]
            else:
                chosen = [max(remaining, key=lambda p: (float(logp[p, best[p]]), -p))]
            for p in chosen:
                ids[p] = best[p]
                tokens[p], logprobs[p] = best[p], float(logp[p, best[p]])
            remaining = [p for p in remaining if p not in chosen]
        out.append(([tokens[p] for p in slots], [logprobs[p] for p in slots]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument("--max-masks", type=int, default=5)
    parser.add_argument("--methods", nargs="+", default=["independent", "order", "confidence"])
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--hidden", type=int, default=768)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    if args.threads:
        torch.set_num_threads(args.threads)
    subjects = [f"w{i}" for i in range(args.prompts)]
    model, tokenizer = random_bert(SPECIALS + WORDS, args.layers, args.hidden)
    prompts = [TEMPLATES[i % len(TEMPLATES)].replace("[X]", s) for i, s in enumerate(subjects)]
    scorer = MaskedLM(model, tokenizer, ScoringSettings(device="cpu"))
    print(
        f"{len(prompts)} prompts, M={args.max_masks}, BERT {args.layers}x{args.hidden}, vocabulary "
        f"{len(tokenizer):,}, torch threads {torch.get_num_threads()}"
    )
    masked_decode(scorer, prompts[:4], args.max_masks, "order")  # warm-up
    loops, alone = {}, {}
    for method in args.methods:
        start = time.perf_counter()
        ours = masked_decode(scorer, prompts, args.max_masks, method)
        batched = time.perf_counter() - start
        start = time.perf_counter()
        plain = [plain_decode(model, tokenizer, p, args.max_masks, method) for p in prompts]
        loop = time.perf_counter() - start
        identical, worst = True, 0.0
        for i, candidates in enumerate(plain):
            for m, (tokens, logprobs) in enumerate(candidates, start=1):
                identical &= ours.candidate_ids[i, m - 1, :m].tolist() == tokens
                worst = max(worst, float(np.abs(ours.candidate_logprobs[i, m - 1, :m] - logprobs).max()))
        print(
            f"{method:12s} batched {batched:7.2f} s   per-fact loop {loop:7.2f} s   ratio {loop / batched:5.1f}x   "
            f"answers identical: {identical}   largest log-prob difference {worst:.1e}"
        )
        loops[method], alone[method] = loop, ours
    if len(args.methods) > 1:  # the workflow's way: every method in one run (masked_decode_jointly)
        start = time.perf_counter()
        together = masked_decode_jointly(scorer, prompts, args.methods, args.max_masks)
        batched = time.perf_counter() - start
        loop = sum(loops.values())
        identical = all((together[m].candidate_ids == alone[m].candidate_ids).all() for m in args.methods)
        worst = max(
            float(np.nanmax(np.abs(together[m].candidate_logprobs - alone[m].candidate_logprobs))) for m in args.methods
        )
        print(
            f"{'together':12s} batched {batched:7.2f} s   per-fact loops {loop:7.2f} s   "
            f"ratio {loop / batched:5.1f}x   "
            f"answers identical to each alone: {identical}   largest log-prob difference {worst:.1e}"
        )


if __name__ == "__main__":
    main()
