"""Throughput of COMPS's scoring against minicons (the library the authors scored with), same
model, stimuli and hardware, for a masked and a causal model.

    python benchmarks/comps_scoring.py                       # CPU, 6-layer random BERT and GPT-2
    python benchmarks/comps_scoring.py --device cuda --layers 12 --hidden 768 --pairs 5000
    python benchmarks/comps_scoring.py --norms resources/comps/norms --wordnet resources/comps/wordnet/dict \
        --kinds causal --layers 2 --hidden 128      # the full COMPS (92,672 pairs)

The stimuli are COMPS's own, built by knowprobe's builder: from the demo norms
(resources/demo/comps) by default, or from the real XCSLB norms and WordNet 3.0 (``--norms``,
``--wordnet``; ``--glove`` for GloVe vectors, else a random stand-in, which changes only which
co-occurrence negatives are drawn, not how many texts there are or how they repeat): all of
them, or ``--pairs`` in equal shares per subset. It prints first what each side computes: the
texts, the distinct ones, and the tokens a causal model runs (knowprobe with and without shared
prefixes, minicons with its padding, in this benchmark's word-level tokenisation). minicons
scores them as its ``conditional_score`` is used (batches of ``--minicons-batch`` pairs, sum
reduction; the causal model without a start token, as the authors called it and knowprobe's
COMPS scores it); knowprobe through ``knowprobe.comps.probe.score`` (each distinct text once,
the LM head only where a score is read; a masked model's copies in length-sorted batches, a
causal model's texts packed into full rows with the token prefixes several texts share placed
once, timed also without sharing). Each side runs once untimed first (CUDA's start-up, kernel
choice), then ``--repeats`` rounds in which each side runs once in turn; each side's best run
counts. The script prints pairs per second of each, the ratios, and the largest difference
between their scores.

``--precision float16`` (or ``bfloat16``, ``tf32``, ``auto``: the device's default) times as well
what a COMPS job does below float32: knowprobe in that precision, then the float32 recheck of the
pairs near a tie (``comps.scoring.recheck``'s defaults), both passes timed, against minicons in
float32; it prints the decisions equal to minicons' and each subset's accuracy beside minicons'.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
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
from knowprobe.devices import precision_name, resolve_dtype, use_precision  # noqa: E402
from knowprobe.scoring import CausalLM, MaskedLM, ScoringSettings  # noqa: E402

DEMO = ROOT / "resources" / "demo" / "comps"


def stimuli(pairs: int | None, norms_dir=DEMO, wordnet_dir=DEMO / "wordnet", glove=None) -> pd.DataFrame:
    """The whole COMPS of the norms (every subset, as the builder makes it), or ``pairs`` of them
    drawn in equal shares per subset."""
    world = norms.read_norms(norms_dir)
    taxonomy = wordnet.read_taxonomy(wordnet_dir)
    if glove is None and norms_dir == DEMO:
        glove = DEMO / "glove.demo.6d.txt"
    if glove is None:  # a random stand-in: the same texts, other co-occurrence negatives
        rng = np.random.default_rng(0)
        found = {c: rng.normal(size=50).astype(np.float32) for c in world.concepts["concept"]}
    else:
        found = vectors.concept_vectors(glove, None, world.concepts["concept"])
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
        lm, extra = scorer.IncrementalLMScorer(model, device, tokenizer=tokenizer), {"bos_token": False}
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


@functools.cache
def token_ids(tokenizer):
    """The tokenizer's ids of a text (no special tokens), each text tokenized once: the counts
    below and the bound ask for the same texts many times."""
    return functools.cache(lambda text: tuple(tokenizer(text, add_special_tokens=False)["input_ids"]))


def work_counts(frame: pd.DataFrame, tokenizer, minicons_batch: int) -> dict:
    """What each side computes for a causal model: texts, distinct texts, and tokens run."""
    prefixes = list(frame["prefix_acceptable"]) + list(frame["prefix_unacceptable"])
    phrases = list(frame["property_phrase"]) * 2
    ids_of = token_ids(tokenizer)

    def tokens(text):
        return len(ids_of(text))

    distinct = dict.fromkeys(zip(prefixes, phrases))
    ids = {(p, q): ids_of(f"{p} {q}") for p, q in distinct}
    # knowprobe's layout: every distinct token prefix of the distinct texts once (a prefix tree),
    # and the LM head once at each state a phrase token is predicted from
    tree = {sequence[: k + 1] for sequence in ids.values() for k in range(len(sequence))}
    head_states = {ids[p, q][:t] for p, q in distinct for t in range(tokens(p), len(ids[p, q]))}
    by_prefix = {}
    for prefix, phrase in distinct:
        by_prefix.setdefault(prefix, []).append(phrase)
    full = sum(tokens(f"{p} {q}") for p, q in distinct)
    shared = sum(
        tokens(f"{p} {q}") if len(qs) == 1 else tokens(p) + sum(tokens(f"{p} {q}") - tokens(p) for q in qs)
        for p, qs in by_prefix.items()
        for q in qs[:1]
    )
    # minicons: every text, in batches of minicons_batch pairs per side, each padded to its longest
    padded = 0
    for side in (list(frame["prefix_acceptable"]), list(frame["prefix_unacceptable"])):
        texts = [f"{p} {q}" for p, q in zip(side, frame["property_phrase"])]
        for start in range(0, len(texts), minicons_batch):
            part = texts[start : start + minicons_batch]
            padded += len(part) * max(tokens(t) for t in part)
    return {
        "texts": len(prefixes),
        "distinct": len(distinct),
        "prefixes": len(by_prefix),
        "shared_prefixes": sum(len(qs) > 1 for qs in by_prefix.values()),
        "tokens_all": sum(tokens(f"{p} {q}") for p, q in zip(prefixes, phrases)),
        "tokens_minicons": padded,
        "tokens_distinct": full,
        "tokens_shared": shared,
        "tokens_tree": len(tree),
        "head_states": len(head_states),
    }


def arithmetic_bound(kind: str, frame: pd.DataFrame, tokenizer, config, minicons_batch: int) -> dict:
    """How many times knowprobe's arithmetic minicons does on these stimuli, counting multiply-adds
    of the transformer (E = layers x (4 hidden^2 + 2 hidden x intermediate) per token run) and of
    the LM head (H = hidden x vocabulary, plus a hidden^2 transform for masked models) per position
    it is applied at: the most an exact scorer can gain on minicons by computing less.

    Causal: minicons runs every text padded to its batch's longest with the head at every position;
    knowprobe each distinct token prefix of the distinct texts once (their tokens as a prefix tree),
    the head once at each state a phrase token is predicted from. Masked (pseudo-log-likelihood, a
    pass per phrase token): minicons runs each text's masked copies padded to its batch's longest,
    the head at every position; knowprobe the copies of the distinct texts at their own lengths,
    the head at the masked position."""
    hidden, layers = config.hidden_size, config.num_hidden_layers
    intermediate = getattr(config, "intermediate_size", None) or getattr(config, "n_inner", None) or 4 * hidden
    encoder = layers * (4 * hidden * hidden + 2 * hidden * intermediate)
    head = hidden * config.vocab_size + (hidden * hidden if kind == "masked" else 0)
    ids_of = token_ids(tokenizer)

    def tokens(text):
        return len(ids_of(text))

    special = 2 if kind == "masked" else 0  # [CLS] and [SEP]
    texts = [
        (p, q)
        for side in ("prefix_acceptable", "prefix_unacceptable")
        for p, q in zip(frame[side], frame["property_phrase"])
    ]
    theirs = 0
    for start in range(0, len(frame), minicons_batch):  # each side's batch of pairs
        for side in (
            texts[start : start + minicons_batch],
            texts[len(frame) + start : len(frame) + start + minicons_batch],
        ):
            if not side:
                continue
            longest = max(tokens(f"{p} {q}") for p, q in side) + special
            copies = sum(tokens(f"{p} {q}") - tokens(p) for p, q in side) if kind == "masked" else len(side)
            theirs += copies * longest * (encoder + head)
    distinct = list(dict.fromkeys(texts))
    if kind == "masked":
        ours = sum(
            (tokens(f"{p} {q}") - tokens(p)) * ((tokens(f"{p} {q}") + special) * encoder + head) for p, q in distinct
        )
        # what knowprobe runs (scoring/final_layer.py): the last layer's keys and values at every
        # position (2 hidden^2), the rest of it at the masked one only
        layer = encoder // layers
        final = sum(
            (tokens(f"{p} {q}") - tokens(p))
            * (
                (tokens(f"{p} {q}") + special) * (encoder - layer + 2 * hidden * hidden)
                + layer
                - 2 * hidden * hidden
                + head
            )
            for p, q in distinct
        )
        return {"minicons": theirs, "knowprobe": ours, "ratio": theirs / ours, "ratio_final": theirs / final}
    else:
        counts = work_counts(frame, tokenizer, minicons_batch)
        ours = counts["tokens_tree"] * encoder + counts["head_states"] * head
        # the bound as issue 31 stated it, before the prefix tree: each text's own prefix shared
        phrase_tokens = sum(tokens(f"{p} {q}") - tokens(p) for p, q in distinct)
        by_text = counts["tokens_shared"] * encoder + phrase_tokens * head
        return {"minicons": theirs, "knowprobe": ours, "ratio": theirs / ours, "ratio_prefixes": theirs / by_text}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--pairs", type=int, default=None, help="default: all of the norms' COMPS")
    parser.add_argument("--norms", type=Path, default=DEMO, help="the XCSLB norms' data/ folder (default: the demo's)")
    parser.add_argument("--wordnet", type=Path, default=DEMO / "wordnet", help="WordNet's dict/ folder")
    parser.add_argument("--glove", type=Path, default=None, help="GloVe vectors (default: a random stand-in)")
    parser.add_argument("--kinds", nargs="+", default=["masked", "causal"], choices=["masked", "causal"])
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--minicons-batch", type=int, default=32)
    parser.add_argument("--no-minicons", action="store_true", help="time knowprobe alone (counts still printed)")
    parser.add_argument("--repeats", type=int, default=1, help="time each side this many times, keep the best")

    def limit(value: str):
        return value if value == "auto" else int(value)

    defaults = ScoringSettings()
    parser.add_argument(
        "--batch-size",
        type=limit,
        default=defaults.batch_size,
        help="knowprobe's scoring.batch_size (auto: the device's)",
    )
    parser.add_argument(
        "--max-tokens",
        type=limit,
        default=defaults.max_tokens,
        help="knowprobe's scoring.max_tokens (auto: the device's)",
    )
    parser.add_argument(
        "--precision",
        choices=["auto", "float16", "bfloat16", "tf32"],
        default=None,
        help="also time knowprobe in this precision with COMPS's float32 recheck (auto: the device's default)",
    )
    args = parser.parse_args()
    frame = stimuli(args.pairs, args.norms, args.wordnet, args.glove)
    texts = list(frame["prefix_acceptable"] + " " + frame["property_phrase"]) + list(frame["prefix_unacceptable"])
    print(
        f"{len(frame)} pairs ({frame['subset'].value_counts().to_dict()}); {args.layers} layers, hidden "
        f"{args.hidden}; {args.device}, {torch.get_num_threads()} threads"
    )
    for kind in args.kinds:
        model, tokenizer = build(kind, texts, args.layers, args.hidden)
        if kind == "causal":
            n = work_counts(frame, tokenizer, args.minicons_batch)
            print(
                f"causal work: {n['texts']:,} texts, {n['distinct']:,} distinct (x{n['texts'] / n['distinct']:.2f}); "
                f"{n['prefixes']:,} prefixes, {n['shared_prefixes']:,} shared by several texts; tokens run: "
                f"minicons {n['tokens_minicons']:,} (padded; {n['tokens_all']:,} real), knowprobe "
                f"{n['tokens_distinct']:,} (distinct texts) -> {n['tokens_shared']:,} (each text's prefix once) -> "
                f"{n['tokens_tree']:,} (each distinct token prefix once, as it runs): "
                f"x{n['tokens_minicons'] / n['tokens_tree']:.2f} fewer than minicons, "
                f"x{n['tokens_distinct'] / n['tokens_tree']:.2f} from sharing prefixes"
            )
        bound = arithmetic_bound(kind, frame, tokenizer, model.config, args.minicons_batch)
        print(
            f"{kind} arithmetic: minicons {bound['minicons']:.2e} multiply-adds, knowprobe {bound['knowprobe']:.2e}: "
            f"the bound of an exact scorer's ratio is {bound['ratio']:.2f}x"
            + (f" ({bound['ratio_final']:.2f}x with the last layer at the mask only)" if "ratio_final" in bound else "")
        )
        model = model.to(args.device)
        settings = ScoringSettings(
            device=args.device, dtype="float32", batch_size=args.batch_size, max_tokens=args.max_tokens
        )
        scorer = (MaskedLM if kind == "masked" else CausalLM)(model, tokenizer, settings, **start_option(kind))
        sides = {"knowprobe": functools.partial(with_knowprobe, scorer, frame)}
        if kind == "causal":
            unshared = functools.partial(with_knowprobe, scorer, frame, share_prefixes=False)
            sides["knowprobe, prefixes not shared"] = unshared
        if kind == "masked" and scorer.final_layer is not None:
            everywhere = copy.copy(scorer)
            everywhere.final_layer = None
            sides["knowprobe, last layer everywhere"] = functools.partial(with_knowprobe, everywhere, frame)
        below = None
        if args.precision:
            below = below_float32(model, tokenizer, kind, args.precision, scorer, frame)
            if below is not None:
                sides[f"knowprobe, {below.name} + float32 recheck"] = below
        if not args.no_minicons:
            sides["minicons"] = functools.partial(
                with_minicons, kind, model, tokenizer, frame, args.minicons_batch, args.device
            )
        # a warm-up of each side first (CUDA's start, kernels chosen), then the best of --repeats
        warm = frame.iloc[:64]
        with_knowprobe(scorer, warm)
        if not args.no_minicons:
            with_minicons(kind, model, tokenizer, warm, args.minicons_batch, args.device)
        if below is not None:
            with_knowprobe(below.scorer, warm)
        timed = best_of(sides, args.repeats, args.device)
        ours, our_scores = timed["knowprobe"]
        if below is not None:
            print(below.report.describe())
            if "minicons" in timed:
                seconds, scores = timed[f"knowprobe, {below.name} + float32 recheck"]
                print(
                    f"knowprobe in {below.name} with the float32 recheck: {timed['minicons'][0] / seconds:.2f}x "
                    f"minicons in float32; " + agreement(frame, scores, timed["minicons"][1])
                )
        for name, (seconds, scores) in timed.items():
            line = f"{kind:6s}  {name:38s} {len(frame) / seconds:8.1f} pairs/s ({seconds:.2f} s)"
            if name != "knowprobe":
                difference = np.abs(our_scores - scores).max()
                line += f"   knowprobe is {seconds / ours:.2f}x faster   max |difference| {difference:.1e}"
                if name == "minicons":
                    line += f"   {seconds / ours / bound['ratio']:.0%} of the bound"
                    if "ratio_final" in bound:
                        line += f" ({seconds / ours / bound['ratio_final']:.0%} of {bound['ratio_final']:.2f}x)"
                    if "ratio_prefixes" in bound:
                        line += (
                            f" ({seconds / ours / bound['ratio_prefixes']:.0%} of the bound "
                            f"{bound['ratio_prefixes']:.2f}x with each text's prefix alone shared)"
                        )
            print(line)


# comps.scoring.recheck's defaults (workflow/schemas/comps.schema.yaml)
RECHECK_SAMPLE, RECHECK_FACTOR = 0.02, 4


class BelowFloat32:
    """knowprobe as a COMPS job scores below float32: the pairs in ``name``'s precision (a copy of
    the model), then those near a tie again with the float32 scorer (``probe.recheck``)."""

    def __init__(self, name: str, scorer, exact, frame: pd.DataFrame):
        self.name, self.scorer, self.exact, self.frame = name, scorer, exact, frame
        self.report = None

    def __call__(self) -> np.ndarray:
        # on a GPU TF32 is torch's process-wide mode: on for the first pass only (minicons and the
        # recheck compute in float32)
        device = self.scorer.device
        if device.type == "cuda":
            use_precision(self.scorer.model, self.scorer.settings.dtype, device)
        try:
            scores = probe.score(self.scorer, self.scorer.kind, self.frame)
        finally:
            if device.type == "cuda":
                use_precision(self.exact.model, "float32", device)
        scores, self.report = probe.recheck(scores, self.rescore, RECHECK_SAMPLE, RECHECK_FACTOR)
        return scores[["acceptable_score", "unacceptable_score"]].to_numpy()

    def rescore(self, rows: np.ndarray) -> pd.DataFrame:
        return probe.score(self.exact, self.exact.kind, self.frame.iloc[rows])


def below_float32(model, tokenizer, kind: str, precision: str, exact, frame: pd.DataFrame) -> BelowFloat32 | None:
    """The below-float32 side for ``precision`` (None, said, where that is float32 on this device)."""
    device = exact.device
    dtype = resolve_dtype(precision, device, torch.float32)  # the random model is a float32 checkpoint
    if dtype == torch.float32 and precision != "tf32":
        print(f"--precision {precision} is float32 on {device}: nothing below float32 to time")
        return None
    copied = copy.deepcopy(model).to(dtype)
    if device.type == "cpu":
        use_precision(copied, precision, device)  # TF32 emulated on this copy alone
    settings = dataclasses.replace(exact.settings, dtype=precision)
    scorer = (MaskedLM if kind == "masked" else CausalLM)(copied, tokenizer, settings, **start_option(kind))
    return BelowFloat32(precision_name(precision, dtype), scorer, exact, frame)


def agreement(frame: pd.DataFrame, ours: np.ndarray, theirs: np.ndarray) -> str:
    """The decisions (acceptable above unacceptable) two sides share, and each subset's accuracy."""
    mine, yours = ours[:, 0] > ours[:, 1], theirs[:, 0] > theirs[:, 1]
    subsets = frame["subset"].to_numpy()
    moves = {s: 100 * (mine[subsets == s].mean() - yours[subsets == s].mean()) for s in sorted(set(subsets))}
    return (
        f"decisions equal to minicons' (float32): {np.mean(mine == yours):.2%}; subset accuracy minus minicons', "
        f"points: " + ", ".join(f"{s} {m:+.2f}" for s, m in moves.items())
    )


def start_option(kind: str) -> dict:
    # COMPS scores causal models without a start token (the authors' call, comps.scoring.start_token)
    return {"start_token": False} if kind == "causal" else {}


def with_knowprobe(scorer, frame: pd.DataFrame, share_prefixes: bool = True) -> np.ndarray:
    scores = probe.score(scorer, scorer.kind, frame, share_prefixes=share_prefixes)
    return scores[["acceptable_score", "unacceptable_score"]].to_numpy()


def best_of(sides: dict, repeats: int, device: str) -> dict:
    """Each side's shortest of ``repeats`` timed runs (the GPU synchronised) and its scores, the
    sides taking turns within each round, so that a drift of the machine's speed (other work on
    a shared host) falls on every side alike rather than on whichever ran last."""
    best = {}
    for _ in range(repeats):
        for name, run in sides.items():
            if device.startswith("cuda"):
                torch.cuda.synchronize()
            start = time.perf_counter()
            scores = run()
            if device.startswith("cuda"):
                torch.cuda.synchronize()
            seconds = time.perf_counter() - start
            best[name] = min(best.get(name, (seconds, scores)), (seconds, scores), key=lambda pair: pair[0])
    return best


if __name__ == "__main__":
    main()
