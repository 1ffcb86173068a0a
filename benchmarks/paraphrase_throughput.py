"""Seed prompts per second of the paraphrase stage (B=7 round trips) against a one-seed-at-a-time loop.

    python benchmarks/paraphrase_throughput.py                   # CPU: tiny and WMT'19-sized random FSMT
    python benchmarks/paraphrase_throughput.py --device cuda     # on a GPU machine

The models are randomly initialised FSMT models: a tiny one (2 layers, d=64) and one with
facebook/wmt19-en-de's shape (6+6 layers, d=1024, FFN 8192, 42,024-token vocabularies,
~270 M parameters) — no weights can be downloaded here. A random model never emits eos, so
every translation runs to ``--new-tokens`` (16 by default, about what a LAMA prompt takes
in German BPE tokens); real models stop a little earlier on most beams.

Engine: knowprobe's round trip as the rule runs it (seeds batched ``--batch-size`` at a
time, the B German hypotheses of all seeds batched on the way back, one teacher-forced pass
to score). Baseline, measured in the same run: the same code with one sentence per generate
call. Both produce the same candidates (checked). Prints seeds/s, the ratio, and the
projection for LPAQA's 82 seeds (41 manual + 41 mined prompts).
"""

from __future__ import annotations

import argparse
import json
import platform
import string
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow" / "scripts"))

from knowprobe.lpaqa.paraphrase import HFTranslator, ParaphraseSettings, round_trip  # noqa: E402

TEMPLATES = [
    "[X] was born in [Y] .",
    "The capital of [X] is [Y] .",
    "[X] is a member of the [Y] political party .",
    "The native language of [X] is [Y] .",
    "[X] is developed by [Y] .",
    "[X] plays in [Y] position .",
    "[X] shares border with [Y] .",
    "[X] is affiliated with the [Y] religion .",
]
SIZES = {
    "tiny": dict(d_model=64, layers=2, heads=4, ffn=256, vocab=2000),
    "wmt19-sized": dict(d_model=1024, layers=6, heads=16, ffn=8192, vocab=42024),
}


def build(path: Path, d_model: int, layers: int, heads: int, ffn: int, vocab: int) -> Path:
    """A random FSMT model and a character-level FSMT tokenizer padded out to ``vocab`` entries."""
    from transformers import FSMTConfig, FSMTForConditionalGeneration, FSMTTokenizer

    entries = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for char in string.ascii_letters + string.digits + ".,'":
        entries.setdefault(char, len(entries))
        entries.setdefault(char + "</w>", len(entries))
    while len(entries) < vocab:
        entries[f"piece{len(entries)}</w>"] = len(entries)
    for name in ("vocab-src.json", "vocab-tgt.json"):
        (path / name).write_text(json.dumps(entries))
    (path / "merges.txt").write_text("")
    tokenizer = FSMTTokenizer(
        langs=["en", "de"],
        src_vocab_file=str(path / "vocab-src.json"),
        tgt_vocab_file=str(path / "vocab-tgt.json"),
        merges_file=str(path / "merges.txt"),
    )
    assert tokenizer.src_vocab_size == vocab
    torch.manual_seed(0)
    config = FSMTConfig(
        langs=["en", "de"],
        src_vocab_size=vocab,
        tgt_vocab_size=vocab,
        d_model=d_model,
        encoder_layers=layers,
        decoder_layers=layers,
        encoder_attention_heads=heads,
        decoder_attention_heads=heads,
        encoder_ffn_dim=ffn,
        decoder_ffn_dim=ffn,
        max_position_embeddings=1024,
        pad_token_id=1,
        eos_token_id=2,
        bos_token_id=0,
        decoder_start_token_id=2,
    )
    FSMTForConditionalGeneration(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def timed(seeds, translator, settings):
    start = time.perf_counter()
    candidates = round_trip(seeds, translator, translator, settings)
    return candidates, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--sizes", nargs="+", default=list(SIZES), choices=list(SIZES))
    parser.add_argument("--seeds", type=int, default=8, help="seed prompts per measurement")
    parser.add_argument("--beams", type=int, default=7)
    parser.add_argument("--new-tokens", type=int, default=16)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "paraphrase_throughput.json"))
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    seeds = pd.DataFrame(
        {
            "relation": [f"P{i}" for i in range(args.seeds)],
            "template": [TEMPLATES[i % len(TEMPLATES)] for i in range(args.seeds)],
        }
    )
    results = []
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            path = build(Path(tmp), **SIZES[size])
            translator = HFTranslator(path, device=args.device, dtype=args.dtype)
            parameters = sum(p.numel() for p in translator.model.parameters())
            common = dict(beams=args.beams, max_new_tokens=args.new_tokens, device=args.device, dtype=args.dtype)
            round_trip(seeds.iloc[:1], translator, translator, ParaphraseSettings(**common, batch_size=1))  # warm-up
            engine, engine_s = timed(seeds, translator, ParaphraseSettings(**common, batch_size=args.batch_size))
            baseline, baseline_s = timed(seeds, translator, ParaphraseSettings(**common, batch_size=1))
        same = engine["english"].tolist() == baseline["english"].tolist()
        row = {
            "model": size,
            "parameters": parameters,
            "device": args.device,
            "dtype": args.dtype,
            "threads": args.threads,
            "beams": args.beams,
            "new_tokens": args.new_tokens,
            "seeds": args.seeds,
            "candidates": len(engine),
            "engine_seeds_per_s": args.seeds / engine_s,
            "baseline_seeds_per_s": args.seeds / baseline_s,
            "ratio": baseline_s / engine_s,
            "same_candidates": same,
            "projected_82_seeds_s": 82 * engine_s / args.seeds,
        }
        results.append(row)
        print(
            f"{size:12s} {parameters / 1e6:7.1f} M params  engine {row['engine_seeds_per_s']:7.3f} seeds/s  "
            f"one-at-a-time {row['baseline_seeds_per_s']:7.3f} seeds/s  ratio {row['ratio']:.2f}x  "
            f"same candidates: {same}  82 seeds: {row['projected_82_seeds_s']:.0f} s",
            flush=True,
        )
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(
        json.dumps({"machine": platform.platform(), "processor": platform.processor(), "results": results}, indent=2)
        + "\n"
    )


if __name__ == "__main__":
    main()
