"""Throughput of COMPS's scoring against minicons (the library the authors scored with), same
model, stimuli and hardware, for a masked and a causal model.

    python benchmarks/comps_scoring.py                       # CPU, 6-layer random BERT and GPT-2
    python benchmarks/comps_scoring.py --device cuda --layers 12 --hidden 768 --pairs 5000

The stimuli are COMPS's own, built by knowprobe's builder from the demo norms
(resources/demo/comps): all of them (1,320 pairs), or ``--pairs`` in equal shares per subset. minicons scores
them as its ``conditional_score`` is used (batches of ``--minicons-batch`` pairs, sum reduction;
the causal model with its BOS token, as knowprobe scores it); knowprobe through
``knowprobe.comps.probe.score`` (each distinct text once, length-sorted batches, the LM head
only where a score is read). Each side runs once untimed first (CUDA's start-up, kernel choice),
then ``--repeats`` timed runs of which the best counts. The script prints pairs per second of
each, the ratio, and the largest difference between their scores.
"""

from __future__ import annotations

import argparse
import copy
import functools
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow" / "scripts"))

from _models import BERT_BASE_CASED_VOCAB, random_bert  # noqa: E402

from knowprobe import demo_model  # noqa: E402
from knowprobe.comps import builder, norms, probe, vectors, wordnet  # noqa: E402
from knowprobe.scoring import CausalLM, MaskedLM, ScoringSettings  # noqa: E402

DEMO = ROOT / "resources" / "demo" / "comps"


def stimuli(pairs: int | None) -> pd.DataFrame:
    """The demo norms' whole COMPS (every subset, as the builder makes it), or ``pairs`` of them
    drawn in equal shares per subset."""
    world = norms.read_norms(DEMO)
    taxonomy = wordnet.read_taxonomy(DEMO / "wordnet")
    found = vectors.concept_vectors(DEMO / "glove.demo.6d.txt", None, world.concepts["concept"])
    concepts = builder.concept_table(world, taxonomy, found, "animal%1:03:00::")
    drawn, _ = builder.draw_pairs(world.features, builder.similarity_table(world, concepts, taxonomy, found))
    built = builder.stimuli(drawn, concepts, ["wug", "dax", "blicket", "fep"])
    if pairs is None:
        return built
    share = pairs // 4
    parts = [part.sample(share, replace=len(part) < share, random_state=0) for _, part in built.groupby("subset")]
    return pd.concat(parts, ignore_index=True)


# the vocabulary sizes of BERT-base-cased and GPT-2, whose LM heads (a projection onto the
# vocabulary) are part of what each side computes
VOCAB_SIZES = {"masked": BERT_BASE_CASED_VOCAB, "causal": 50257}


def build(kind: str, texts: list[str], layers: int, hidden: int):
    from transformers import GPT2Config, GPT2LMHeadModel

    vocab_size = VOCAB_SIZES[kind]
    words = demo_model.build_vocab(texts)
    if kind == "masked":
        return random_bert(words, layers, hidden, vocab_size)
    vocab = words + [f"w{i}" for i in range(vocab_size - len(words))]
    torch.manual_seed(0)
    tokenizer = demo_model.make_causal_tokenizer(vocab)
    config = GPT2Config(
        vocab_size=vocab_size,
        n_embd=hidden,
        n_layer=layers,
        n_head=hidden // 64,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    return GPT2LMHeadModel(config).eval(), tokenizer


def with_minicons(kind, model, tokenizer, frame: pd.DataFrame, batch: int, device: str) -> np.ndarray:
    from minicons import scorer

    tokenizer = copy.deepcopy(tokenizer)
    # minicons' masked scorer calls batch_encode_plus, which transformers 5 removed; calling the
    # tokenizer on a list is what it did
    tokenizer.batch_encode_plus = lambda *args, **kwargs: tokenizer(*args, **kwargs)
    if kind == "masked":
        lm, extra = scorer.MaskedLMScorer(model, device, tokenizer=tokenizer), {}
    else:
        lm, extra = scorer.IncrementalLMScorer(model, device, tokenizer=tokenizer), {"bos_token": True}
    out = []
    for side in ("prefix_acceptable", "prefix_unacceptable"):
        scores = []
        for start in range(0, len(frame), batch):
            part = frame.iloc[start : start + batch]
            scores += lm.conditional_score(
                list(part[side]), list(part["property_phrase"]), reduction=lambda x: x.sum(0).item(), **extra
            )
        out.append(scores)
    return np.array(out).T


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--pairs", type=int, default=None, help="default: all of the demo's COMPS")
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--minicons-batch", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=1, help="time each side this many times, keep the best")
    defaults = ScoringSettings()
    parser.add_argument("--batch-size", type=int, default=defaults.batch_size, help="knowprobe's scoring.batch_size")
    parser.add_argument("--max-tokens", type=int, default=defaults.max_tokens, help="knowprobe's scoring.max_tokens")
    args = parser.parse_args()
    frame = stimuli(args.pairs)
    texts = list(frame["prefix_acceptable"] + " " + frame["property_phrase"]) + list(frame["prefix_unacceptable"])
    print(
        f"{len(frame)} pairs ({frame['subset'].value_counts().to_dict()}); {args.layers} layers, hidden "
        f"{args.hidden}; {args.device}, {torch.get_num_threads()} threads"
    )
    for kind in ("masked", "causal"):
        model, tokenizer = build(kind, texts, args.layers, args.hidden)
        model = model.to(args.device)
        scorer = (MaskedLM if kind == "masked" else CausalLM)(
            model,
            tokenizer,
            ScoringSettings(
                device=args.device, dtype="float32", batch_size=args.batch_size, max_tokens=args.max_tokens
            ),
        )

        theirs = functools.partial(with_minicons, kind, model, tokenizer, frame, args.minicons_batch, args.device)
        ours = functools.partial(with_knowprobe, scorer, frame)

        # a warm-up of each side first (CUDA's start, kernels chosen), then the best of --repeats
        warm = frame.iloc[:64]
        with_minicons(kind, model, tokenizer, warm, args.minicons_batch, args.device)
        with_knowprobe(scorer, warm)
        their_time, their_scores = best_of(theirs, args.repeats, args.device)
        our_time, our_scores = best_of(ours, args.repeats, args.device)
        difference = np.abs(our_scores - their_scores).max()
        print(
            f"{kind:6s}  minicons {len(frame) / their_time:7.1f} pairs/s ({their_time:.2f} s)   "
            f"knowprobe {len(frame) / our_time:7.1f} pairs/s ({our_time:.2f} s)   "
            f"ratio {their_time / our_time:.2f}x   max |difference| {difference:.1e}"
        )


def with_knowprobe(scorer, frame: pd.DataFrame) -> np.ndarray:
    return probe.score(scorer, scorer.kind, frame)[["acceptable_score", "unacceptable_score"]].to_numpy()


def best_of(run, repeats: int, device: str):
    """The shortest of ``repeats`` timed runs (the GPU synchronised), and the scores."""
    times = []
    for _ in range(repeats):
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        start = time.perf_counter()
        scores = run()
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return min(times), scores


if __name__ == "__main__":
    main()
