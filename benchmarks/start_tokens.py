"""What the start token changes: a causal model's next-token P@1 on LAMA's T-REx facts under each
``scoring.start_token`` choice (docs/scoring.md, "The start token").

LPAQA's next-token probe as the workflow runs it (knowprobe.lpaqa.probe: LAMA's manual prompts,
the prompt's text before [Y] with the subject filled, LAMA's common vocabulary as the candidates
in the tokenizer's word-initial form, LAMA's filter), on one model loaded once, once per choice:
``auto`` (the default), ``bos``, ``eos`` and ``none``. P@1 is micro over the facts of each
relation; the mean is over relations (macro), and over the relations whose prompt ends in [Y].

    python benchmarks/start_tokens.py --gguf PATH/SmolLM2-135M-Instruct.Q4_1.gguf \
        --lama ../shared/data/lama --facts 100

The model is a GGUF file (``--gguf``) or a save_pretrained folder (``--model``); ``--facts``
takes at most that many facts of each relation (seeded, after LAMA's filter).
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

import numpy as np
import pandas as pd


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--gguf", type=Path, help="a GGUF file")
    source.add_argument("--model", type=Path, help="a save_pretrained folder")
    parser.add_argument("--lama", type=Path, required=True, help="LAMA's data folder (relations.jsonl, TREx/)")
    parser.add_argument("--facts", type=int, default=100, help="at most this many facts per relation")
    parser.add_argument("--choices", nargs="+", default=["auto", "bos", "eos", "none"])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)

    import torch

    from knowprobe import vocab
    from knowprobe.lpaqa import lama, probe
    from knowprobe.models import load_model, load_tokenizer
    from knowprobe.prompts import object_at_end
    from knowprobe.scoring import CausalLM, ScoringSettings
    from knowprobe.scoring.start_token import resolve_start_token

    torch.set_num_threads(1)
    where = args.gguf or args.model
    started = time.process_time()
    tokenizer = load_tokenizer(where, "causal")
    model = load_model(where, "causal", torch.float32)
    loaded = time.process_time() - started
    relations = lama.read_relations(args.lama / "relations.jsonl")
    present = sorted(p.stem for p in (args.lama / "TREx").glob("P*.jsonl"))
    relations = relations[relations["relation"].isin(present)].reset_index(drop=True)
    facts = lama.read_trex(args.lama, relations, present)
    words = vocab.read_words(args.lama / "common_vocab_cased.txt")
    candidates = vocab.candidate_table(tokenizer, words)
    kept, _ = vocab.filter_facts(facts, tokenizer, candidates["token_id"].to_numpy())
    kept = kept.sample(frac=1.0, random_state=args.seed).groupby("relation", sort=True).head(args.facts)
    prompts = lama.manual_prompts(relations, {})
    at_end = {r.relation: object_at_end(r.template) for r in prompts.itertuples()}
    print(
        f"{type(model).__name__} from {where.name}: {len(kept)} facts of {kept['relation'].nunique()} relations, "
        f"{len(candidates)} candidates; loaded in {loaded:.1f} CPU-s"
    )
    rows = []
    for choice in args.choices:
        settings = ScoringSettings(device="cpu", dtype="float32", start_token=choice)
        scorer = CausalLM(model, tokenizer, settings)
        label = resolve_start_token(tokenizer, choice).label
        started = time.process_time()
        table, _ = probe.probe(kept, prompts, scorer, candidates, top_k=1, score="next_token")
        frame = table.to_pandas() if hasattr(table, "to_pandas") else table
        right = frame.assign(correct=frame["gold_rank"] == 0).groupby("relation")["correct"].mean()
        row = {"start_token": choice, "token": label}
        row.update({relation: 100 * value for relation, value in right.items()})
        row["mean"] = 100 * right.mean()
        row["mean, [Y] at the end"] = 100 * right[[r for r in right.index if at_end[r]]].mean()
        row["CPU-s"] = time.process_time() - started
        rows.append(row)
    out = pd.DataFrame(rows)
    with pd.option_context("display.width", 250, "display.max_columns", 40):
        print(out.round(1).to_string(index=False))
    print()
    columns = list(out.columns)
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for row in out.itertuples(index=False):
        print("| " + " | ".join(f"{v:.1f}" if isinstance(v, float) else str(v) for v in row) + " |")
    assert np.isfinite(out["mean"]).all()


if __name__ == "__main__":
    main()
