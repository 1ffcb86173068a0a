"""Throughput of S-TEST's probe against a one-triple-at-a-time loop, same model and hardware.

    python benchmarks/stest_probe.py                   # CPU, a 6-layer BERT-sized random model
    python benchmarks/stest_probe.py --device cuda --layers 12 --hidden 768 --triples 5000
    python benchmarks/stest_probe.py --gguf SmolLM2-135M-Instruct.Q4_1.gguf --triples 100  # a causal model

Both sides score the same triples' six queries (VP, FP with ten demonstrations, CP; each also
with the subject masked) at the scored mask. The baseline runs each query alone through the
model's own forward (logits at every position, float32), as a loop over the released files
would; the engine is knowprobe's (``knowprobe.stest.probe.object_scores``: the shared scorer's
length-sorted batches, LM head at the mask only). The script checks that both agree and prints
triples per second and the ratio.

With ``--gguf FILE`` (a real causal model, or a ``save_pretrained`` folder) both sides are
knowprobe's scorer and the comparison is of the causal reading: the baseline scores each query
as the probe did until 2026-11-28, the next token of both objects after the prefix
(``candidate_logprobs``) and then each object's continuation (``conditional_logprob``, twice),
three passes over every prefix; the engine is ``object_scores`` now, one pass
(``next_token_and_continuations``) in which a prefix is placed once. The objects are words that
are one token of the model; CPU time (this process's) is printed beside the wall time.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow" / "scripts"))

from _models import SPECIALS, random_bert  # noqa: E402

from knowprobe.config import schema_defaults  # noqa: E402
from knowprobe.models import load_model, load_tokenizer  # noqa: E402
from knowprobe.scoring import CausalLM, MaskedLM, ScoringSettings  # noqa: E402
from knowprobe.stest import probe, prompts  # noqa: E402
from knowprobe.stest.prompts import causal_continuation, causal_prefix  # noqa: E402
from knowprobe.vocab import candidate_table  # noqa: E402

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


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def real_words(tokenizer, n: int) -> list[str]:
    """Capitalised alphabetic words that are one token of the model with a leading space."""
    words = sorted({tokenizer.decode([i]).strip() for i in range(len(tokenizer))})
    words = [w for w in words if w.isalpha() and w[:1].isupper() and len(w) > 3]
    table = candidate_table(tokenizer, words)
    return table["word"].tolist()[:n]


def three_passes(scorer, queries, triples, fine, coarse, subject: str) -> np.ndarray:
    """The causal reading as the probe made it before 2026-11-28: [n, 4] next token (fine,
    coarse) then each object's continuation, each prefix run three times."""
    unknown = probe.subject_token(scorer, subject)
    rows = queries["row"].to_numpy()
    prefixes = [causal_prefix(q, unknown, "authors") for q in queries["query"]]
    labels = triples[["fine_label", "coarse_label"]].to_numpy()[rows]
    rests = [
        [causal_continuation(q, a, b, unknown, "authors") for q, (a, b) in zip(queries["query"], labels)],
        [causal_continuation(q, b, a, unknown, "authors") for q, (a, b) in zip(queries["query"], labels)],
    ]
    targets = np.stack([fine[rows], coarse[rows]], axis=1)
    next_token = scorer.candidate_logprobs(prefixes, np.union1d(fine, coarse), targets=targets).target_logprobs
    sentence = np.stack([scorer.conditional_logprob(prefixes, rest) for rest in rests], axis=1)
    return np.concatenate([next_token, sentence], axis=1)


def causal(args) -> None:
    torch.set_num_threads(args.threads)
    model = load_model(args.gguf, "causal", torch.float32)
    tokenizer = load_tokenizer(args.gguf, "causal", start_token=True)
    triples, _ = workload(args.triples)
    words = real_words(tokenizer, 2 * len(triples))
    triples["fine_label"], triples["coarse_label"] = words[0::2][: len(triples)], words[1::2][: len(triples)]
    candidates = candidate_table(tokenizer, words)
    fine, coarse = (probe.token_ids(triples[c], candidates) for c in ("fine_label", "coarse_label"))
    scorer = CausalLM(model, tokenizer, ScoringSettings(device=args.device, dtype="float32"))
    queries = prompts.queries(triples, RELATIONS, k=10, seed=0)
    print(f"{args.gguf}; {len(triples)} triples, {len(queries)} queries; {args.device}, {args.threads} threads")
    timings = {}
    for side in ("three passes", "one pass"):
        wall, cpu = time.perf_counter(), cpu_seconds()
        if side == "three passes":
            baseline = three_passes(scorer, queries, triples, fine, coarse, "eos")
        else:
            frames = probe.object_scores(scorer, queries, triples, fine, coarse)
            engine = np.concatenate([f[["fine_score", "coarse_score"]].to_numpy(float) for f in frames], axis=1)
        timings[side] = (time.perf_counter() - wall, cpu_seconds() - cpu)
        print(
            f"{side:13s} {len(triples) / timings[side][0]:.1f} triples/s ({timings[side][0]:.1f} s wall, "
            f"{timings[side][1]:.1f} s CPU)"
        )
    difference = np.abs(engine - baseline)
    decisions = [(engine[:, k] > engine[:, k + 1]) == (baseline[:, k] > baseline[:, k + 1]) for k in (0, 2)]
    print(
        f"max |difference| next token {difference[:, :2].max():.1e}, sentence {difference[:, 2:].max():.1e}; "
        f"decisions equal {int(sum(d.sum() for d in decisions))}/{2 * len(queries)}"
    )
    print(f"ratio (CPU): {timings['three passes'][1] / timings['one pass'][1]:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--triples", type=int, default=200)
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--gguf", type=Path, default=None, help="a real causal model (GGUF file or folder)")
    parser.add_argument("--threads", type=int, default=1, help="with --gguf: torch's threads")
    args = parser.parse_args()
    if args.gguf:
        causal(args)
        return
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
