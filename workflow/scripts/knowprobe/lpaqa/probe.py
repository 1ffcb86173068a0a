"""LPAQA's probe: log-probabilities of the candidate objects at the mask, per (fact, prompt).

For each pair the subject fills ``[X]`` and the mask token ``[Y]``; the shared scoring layer
(:mod:`knowprobe.scoring`) batches the filled prompts and reads the distribution at the mask.
The gold object's log-prob (over the full vocabulary) and rank among the candidates, and the
top-k candidates, are stored (the ``probe`` contract) so that selection and ensembles never
rerun the model.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pyarrow as pa

from ..contracts import PROBE, to_table
from ..io import KnowprobeError
from ..prompts import fill_template

log = logging.getLogger(__name__)


def pair_facts_with_prompts(facts: pd.DataFrame, prompts: pd.DataFrame) -> pd.DataFrame:
    """One row per (fact, prompt) of the same relation; ``prompt_id`` numbers the prompt set's rows."""
    prompts = prompts.reset_index(drop=True).assign(prompt_id=lambda f: np.arange(len(f), dtype=np.int32))
    without = sorted(set(facts["relation"]) - set(prompts["relation"]))
    if without:
        lost = int(facts["relation"].isin(without).sum())
        log.warning(
            "%d facts of %d relations have no prompt in this set and are not probed: %s",
            lost,
            len(without),
            ", ".join(without),
        )
    pairs = facts.merge(prompts[["relation", "prompt_id", "template", "source"]], on="relation", how="inner")
    return pairs.sort_values(["relation", "prompt_id", "fact_id"], kind="stable").reset_index(drop=True)


def probe(facts: pd.DataFrame, prompts: pd.DataFrame, scorer, candidates: pd.DataFrame, top_k: int) -> pa.Table:
    """Probe every (fact, prompt) pair with a masked LM scorer; a table of the ``probe`` contract."""
    if scorer.kind != "masked":
        raise KnowprobeError("LPAQA's probe ranks candidates at a mask token: it needs a model of kind masked")
    pairs = pair_facts_with_prompts(facts, prompts)
    if pairs.empty:
        raise KnowprobeError("no (fact, prompt) pair to probe: facts and prompts share no relation")
    mask = scorer.tokenizer.mask_token
    texts = [fill_template(t, s, mask) for t, s in zip(pairs["template"], pairs["sub_label"])]
    log.info(
        "probing %d (fact, prompt) pairs: %d facts, %d prompts, %d candidates, top_k=%d, device=%s, dtype=%s",
        len(pairs),
        pairs["fact_id"].nunique(),
        pairs["prompt_id"].nunique(),
        len(candidates),
        min(top_k, len(candidates)),
        scorer.device,
        next(scorer.model.parameters()).dtype,
    )
    scores = scorer.candidate_logprobs(
        texts, candidates["token_id"].to_numpy(), pairs["obj_token_id"].to_numpy(), top_k=top_k
    )
    word_of = dict(zip(candidates["token_id"], candidates["word"]))
    table = pa.Table.from_pandas(pairs[list(PROBE.columns[:8])], preserve_index=False)
    for name, values in [
        ("gold_logprob", pa.array(scores.target_logprobs[:, 0])),
        ("gold_rank", pa.array(scores.target_ranks[:, 0])),
        ("prediction", pa.array([word_of[i] for i in scores.topk_ids[:, 0]], pa.string())),
        ("topk_ids", rows_as_lists(scores.topk_ids)),
        ("topk_logprobs", rows_as_lists(scores.topk_logprobs)),
    ]:
        table = table.append_column(name, values)
    return to_table(table, PROBE)


def rows_as_lists(matrix: np.ndarray) -> pa.ListArray:
    """The rows of a 2-D array as an Arrow list column (no Python objects per row)."""
    offsets = np.arange(0, matrix.size + 1, matrix.shape[1], dtype=np.int32)
    return pa.ListArray.from_arrays(offsets, pa.array(matrix.ravel()))
