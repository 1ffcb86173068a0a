"""Torch threads per job: the demo model's training and a probe, with 1 and 2 threads, on a quiet
machine and beside one CPU-bound process (another job, or another user).

    python benchmarks/threads.py

Each measurement runs in a fresh process (torch's thread pool is set once per process). The
probe is the shared scorer's ``candidate_logprobs`` on a BERT-base-sized random model (12 layers,
hidden 768), 256 prompts; the training is ``demo_model.train`` of the demo's tiny BERT (hidden
128, 2 layers) for 150 steps — it always trains in one thread (for identical weights), so its
2-thread figure is measured by the same loop with torch's own setting, as before that change.
Prints seconds and the ratio of 2 threads to 1.
"""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
import time
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[1] / "workflow" / "scripts"

PROBE = """
import sys, time, numpy as np, torch
sys.path.insert(0, {scripts!r})
torch.set_num_threads({threads})
from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast
from knowprobe.scoring import MaskedLM, ScoringSettings
words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{{i}}" for i in range(28991)]
tokenizer = BertTokenizerFast(vocab={{w: i for i, w in enumerate(words)}}, do_lower_case=False)
torch.manual_seed(0)
config = BertConfig(vocab_size=len(words), hidden_size=768, num_hidden_layers=12, num_attention_heads=12)
model = BertForMaskedLM(config).eval()
scorer = MaskedLM(model, tokenizer, ScoringSettings(device="cpu", dtype="float32"))
rng = np.random.default_rng(0)
texts = [" ".join(f"w{{j}}" for j in rng.integers(0, 20000, 8)) + " [MASK] ." for _ in range(256)]
start = time.perf_counter()
scorer.candidate_logprobs(texts, np.arange(5, 21000))
print(time.perf_counter() - start)
"""

TRAIN = """
import sys, time, torch
sys.path.insert(0, {scripts!r})
from knowprobe import demo_model
torch.set_num_threads({threads})
sentences = [(f"city{{i}} lies in region{{i % 50}} .", 0, 4 + len(str(i))) for i in range(2000)]
settings = demo_model.TinyLMSettings(hidden_size=128, layers=2, heads=4, steps=150, batch_size=64)
# demo_model.train pins one thread; to measure two, run its loop with torch's setting kept
demo_model.torch.set_num_threads = lambda n: None
start = time.perf_counter()
demo_model.train(sentences, [], "/tmp/knowprobe-threads-benchmark", settings)
print(time.perf_counter() - start)
"""


def busy(stop_at: float) -> None:
    x = 0
    while time.time() < stop_at:
        x += 1


def measure(code: str, threads: int, loaded: bool) -> float:
    load = None
    if loaded:
        load = multiprocessing.Process(target=busy, args=(time.time() + 3600,))
        load.start()
    try:
        out = subprocess.run(
            [sys.executable, "-c", code.format(scripts=str(SCRIPTS), threads=threads)],
            capture_output=True,
            text=True,
            check=True,
        )
    finally:
        if load is not None:
            load.terminate()
            load.join()
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    results = {}
    for name, code in (("train (demo BERT, 150 steps)", TRAIN), ("probe (BERT-base size, 256 prompts)", PROBE)):
        for loaded in (False, True):
            times = {threads: measure(code, threads, loaded) for threads in (1, 2)}
            condition = "beside a CPU-bound process" if loaded else "quiet"
            results[f"{name}, {condition}"] = times
            print(
                f"{name}, {condition}: 1 thread {times[1]:.1f} s, 2 threads {times[2]:.1f} s "
                f"(2 threads take {times[2] / times[1]:.2f}x the time of 1)",
                flush=True,
            )
    Path("benchmarks/results").mkdir(parents=True, exist_ok=True)
    Path("benchmarks/results/threads.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
