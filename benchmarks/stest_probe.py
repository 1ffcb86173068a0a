"""Throughput of S-TEST's probe against a one-triple-at-a-time loop, same model and hardware.

    python benchmarks/stest_probe.py                   # CPU, a 6-layer BERT-sized random model
    python benchmarks/stest_probe.py --device cuda --layers 12 --hidden 768 --triples 5000

Both sides score the same triples' six queries (VP, FP with ten demonstrations, CP; each also
with the subject masked) at the scored mask. The baseline runs each query alone through the
model's own forward (logits at every position, float32), as a loop over the released files
would; the engine is knowprobe's (``knowprobe.stest.probe.object_scores``: the shared scorer's
length-sorted batches, LM head at the mask only). The script checks that both agree and prints
triples per second and the ratio.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow" / "scripts"))

from _models import SPECIALS, random_bert  # noqa: E402

from knowprobe.config import schema_defaults  # noqa: E402
from knowprobe.scoring import MaskedLM, ScoringSettings  # noqa: E402
from knowprobe.stest import probe, prompts  # noqa: E402

RELATIONS = schema_defaults("stest")["relations"]


def build(layers: int, hidden: int):
    """A randomly initialised BERT of the given size over the templates' words and synthetic ones."""
    words = {
        w
        for r in RELATIONS.values()
        for t in (r["template"], r["cascade"])
        for w in t.replace(".", " . ").replace(",", " , ").split()
        if "[" not in w
    }
    return random_bert(SPECIALS + sorted(words), layers, hidden)


def workload(n: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    relations = list(RELATIONS)
    triples = pd.DataFrame(
        {
            "relation": [relations[i % len(relations)] for i in range(n)],
            "sub_uri": [f"Q{i}" for i in range(n)],
            "sub_label": [" ".join(f"w{j}" for j in rng.integers(0, 20000, size=rng.integers(1, 4))) for _ in range(n)],
            "fine_label": [f"w{j}" for j in rng.integers(20000, 21000, size=n)],
            "coarse_label": [f"w{j}" for j in rng.integers(21000, 22000, size=n)],
        }
    )
    words = sorted(set(triples["fine_label"]) | set(triples["coarse_label"]))
    return triples, pd.DataFrame({"word": words})


@torch.inference_mode()
def one_at_a_time(model, tokenizer, queries, triples, ids) -> np.ndarray:
    out = np.empty((len(queries), 2))
    for i, (row, query) in enumerate(zip(queries["row"], queries["query"])):
        text, _, slot = prompts.masked_form(query, tokenizer.mask_token)
        encoded = tokenizer(text, return_tensors="pt").to(model.device)
        where = (encoded["input_ids"][0] == tokenizer.mask_token_id).nonzero()[slot, 0]
        logprobs = torch.log_softmax(model(**encoded).logits[0, where].float(), -1)
        out[i] = logprobs[[ids[triples.at[row, "fine_label"]], ids[triples.at[row, "coarse_label"]]]].cpu().numpy()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--triples", type=int, default=200)
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--hidden", type=int, default=512)
    args = parser.parse_args()
    device = torch.device(args.device)
    model, tokenizer = build(args.layers, args.hidden)
    model = model.to(device)
    triples, words = workload(args.triples)
    ids = {w: tokenizer.convert_tokens_to_ids(w) for w in words["word"]}
    candidates = pd.DataFrame({"word": list(ids), "token_id": list(ids.values())})
    queries = prompts.queries(triples, RELATIONS, k=10, seed=0)
    print(
        f"BERT {args.layers} layers, hidden {args.hidden}; {len(triples)} triples, {len(queries)} queries; "
        f"{device}, {torch.get_num_threads()} threads"
    )

    start = time.perf_counter()
    baseline = one_at_a_time(model, tokenizer, queries, triples, ids)
    base_time = time.perf_counter() - start
    scorer = MaskedLM(model, tokenizer, ScoringSettings(device=args.device, dtype="float32"))
    fine_ids, coarse_ids = (
        probe.token_ids(triples["fine_label"], candidates),
        probe.token_ids(triples["coarse_label"], candidates),
    )
    start = time.perf_counter()
    (engine,) = probe.object_scores(scorer, queries, triples, fine_ids, coarse_ids)
    engine_time = time.perf_counter() - start
    difference = np.abs(engine[["fine_score", "coarse_score"]].to_numpy(float) - baseline).max()
    print(f"one at a time: {len(triples) / base_time:.1f} triples/s ({base_time:.1f} s)")
    print(
        f"knowprobe:     {len(triples) / engine_time:.1f} triples/s ({engine_time:.1f} s); "
        f"max |difference| {difference:.1e}"
    )
    print(f"ratio: {base_time / engine_time:.2f}x")


if __name__ == "__main__":
    main()
