"""The selection stage (Top-1, Top-K log-linear and linear for K = 1..10, Opti, Oracle) at LPAQA's
full scale on CPU, against a straightforward per-relation NumPy loop, in the same run.

    python benchmarks/selection.py                      # all 41 relations (long on CPU: see docs)
    python benchmarks/selection.py --relations 2        # per-relation figures, projected to 41

Inputs of the real shapes, per relation: 40 prompts; 1,000 T-REx-train facts (800 train, 200 dev);
34,000 / 41 ≈ 829 test facts; log-probs over LAMA's 21,018 common-vocabulary candidates, random
(the gold boosted under some prompts so that ranking and weights have something to find). That is
what ``relation_splits`` hands ``select_relation`` after applying the LM head to the stored
hidden states; the LM head itself (a GPU matrix product) is not timed here.

Engine: ``select_relation`` as the rule runs it. Baseline: the same methods written the
straightforward way, each K's ensemble summed anew from its K prompts (K(K+1)/2 prompt slices
for K = 1..10 instead of 10), the linear one through ``np.exp``/``np.log`` of float32 slices;
Opti is fitted once, by knowprobe's run (its cost is printed on its own), and its weights
are handed to the baseline. Both must agree on every
fact (checked). Each variant runs in its own process: wall time and peak resident memory (the
inputs included, the same in both).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import platform
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow" / "scripts"))

from knowprobe.lpaqa import selection  # noqa: E402


def relation_inputs(seed: int, prompts: int, train: int, dev: int, test: int, candidates: int):
    """One relation's ``RelationData`` of train, dev and test, float32 log-probs."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    skill = rng.uniform(0.0, 4.0, size=prompts).astype(np.float32)  # how much each prompt knows

    def part(facts: int, name: str) -> selection.RelationData:
        gold = rng.integers(0, candidates, size=facts)
        logits = rng.standard_normal((prompts, facts, candidates), dtype=np.float32)
        logits[:, np.arange(facts), gold] += skill[:, None]
        for prompt in logits:  # log-softmax in place, a prompt at a time (no copy of the whole array)
            prompt -= np.log(np.exp(prompt).sum(axis=1, keepdims=True))
        ids = [f"{name}{i}" for i in range(facts)]
        return selection.RelationData(logits, gold, pd.DataFrame({"fact_id": ids, "obj_label": ids}))

    return part(train, "train"), part(dev, "dev"), part(test, "test")


def straightforward(train, evaluated, set_rank, settings, weights):
    """Each method as a straightforward script computes it, one relation at a time, with Opti's
    weights as knowprobe's run fitted them (the same code would fit them here)."""
    train_correct = selection.correct(train.logprobs, train.gold)
    order = selection.prompt_order(train_correct, set_rank)
    out = {}
    for key, data in evaluated.items():
        methods = {}
        for k in range(1, settings.max_k + 1):
            chosen = data.logprobs[order[:k]]
            methods[f"Top{k}"] = selection.correct(chosen.sum(axis=0, dtype=np.float64), data.gold)
            methods[f"Top{k}-linear"] = selection.correct(np.log(np.exp(chosen).sum(axis=0)), data.gold)
        methods["Opti"] = selection.correct(selection.weighted_scores(data.logprobs, weights), data.gold)
        methods["Oracle"] = selection.oracle(selection.correct(data.logprobs, data.gold))
        out[key] = methods
    return out


def run(variant: str, args, weights, queue) -> None:
    settings = selection.SelectionSettings(max_k=10, opti=selection.OptiSettings(max_epochs=args.max_epochs))
    seconds = {"inputs": 0.0, "total": 0.0, "opti": 0.0}
    epochs, fitted = [], []
    fit_opti = selection.fit_opti

    def timed_fit(*a, **k):  # Opti's share of knowprobe's time
        start = time.perf_counter()
        fit = fit_opti(*a, **k)
        seconds["opti"] += time.perf_counter() - start
        epochs.append(fit.epochs)
        fitted.append(fit.weights)
        return fit

    selection.fit_opti = timed_fit
    answers = []
    for relation in range(args.relations):
        start = time.perf_counter()
        train, dev, test = relation_inputs(relation, args.prompts, args.train, args.dev, args.test, args.candidates)
        seconds["inputs"] += time.perf_counter() - start
        evaluated = {("trex", "dev"): dev, ("trex", "test"): test}
        rank = np.arange(args.prompts)
        start = time.perf_counter()
        if variant == "knowprobe":
            table, _ = selection.select_relation(f"P{relation}", train, evaluated, rank, settings, relation)
            right = {
                (d, s, m): g["correct"].to_numpy() for (d, s, m), g in table.groupby(["dataset", "split", "method"])
            }
        else:
            methods = straightforward(train, evaluated, rank, settings, weights[relation])
            right = {(*key, method): values for key, methods_ in methods.items() for method, values in methods_.items()}
        seconds["total"] += time.perf_counter() - start
        answers.append({key: np.packbits(value).tobytes() for key, value in right.items()})
        del train, dev, test, evaluated
    seconds["methods"] = seconds["total"] - seconds["opti"]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # MiB on Linux
    queue.put({"seconds": seconds, "peak_mib": peak, "answers": answers, "epochs": epochs, "weights": fitted})


def measure(variant: str, args, weights=None) -> dict:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=run, args=(variant, args, weights, queue))
    process.start()
    result = queue.get()
    process.join()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--relations", type=int, default=41)
    parser.add_argument("--prompts", type=int, default=40)
    parser.add_argument("--train", type=int, default=800)
    parser.add_argument("--dev", type=int, default=200)
    parser.add_argument("--test", type=int, default=829)
    parser.add_argument("--candidates", type=int, default=21018)
    parser.add_argument("--max-epochs", type=int, default=500)
    args = parser.parse_args()
    import torch

    print(
        f"{platform.processor() or platform.machine()}, {torch.get_num_threads()} torch threads; "
        f"{args.relations} relations x {args.prompts} prompts x ({args.train} train + {args.dev} dev + "
        f"{args.test} test facts) x {args.candidates} candidates",
        flush=True,
    )
    results = {"knowprobe": measure("knowprobe", args)}
    results["straightforward"] = measure("straightforward", args, results["knowprobe"]["weights"])
    ours, base = results["knowprobe"], results["straightforward"]
    disagreements = sum(
        a[key] != b[key] for a, b in zip(ours["answers"], base["answers"]) for key in a
    )  # per-fact answers, bit-packed
    assert ours["answers"][0].keys() == base["answers"][0].keys()
    for name, result in results.items():
        s = result["seconds"]
        print(
            f"{name:16s} methods {s['methods']:8.1f} s  Opti {s['opti']:8.1f} s  (inputs {s['inputs']:.1f} s)  "
            f"peak {result['peak_mib'] / 1024:.1f} GiB"
        )
    ratio = base["seconds"]["methods"] / ours["seconds"]["methods"]
    per_relation = ours["seconds"]["total"] / args.relations
    print(f"methods other than Opti: {ratio:.2f}x the straightforward loop; answers that differ: {disagreements}")
    epochs = sum(ours["epochs"])
    print(f"Opti: epochs per relation {ours['epochs']}, {ours['seconds']['opti'] / max(epochs, 1):.2f} s an epoch")
    print(
        f"selection per relation (methods + Opti): {per_relation:.1f} s; 41 relations: {41 * per_relation / 60:.1f} min"
    )
    summary = {
        "args": vars(args),
        "ratio": ratio,
        "disagreements": int(disagreements),
        **{f"{n}_{k}": v for n, r in results.items() for k, v in r.items() if k not in ("answers", "weights")},
    }
    print(json.dumps(summary, default=float))


if __name__ == "__main__":
    main()
