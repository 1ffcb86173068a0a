"""LPAQA's probe: log-probabilities of the candidate objects at the mask, per (fact, prompt).

For each pair the subject fills ``[X]`` and the mask token ``[Y]``; the shared scoring layer
(:mod:`knowprobe.scoring`) batches the filled prompts and reads the distribution at the mask.
The gold object's log-prob (over the full vocabulary) and rank among the candidates, and the
top-k candidates, are stored (the ``probe`` contract), and beside them each pair's final hidden
state at the mask: from it the selection stage recomputes the log-prob of every candidate, so
that selection and ensembles never rerun the model.

Google-RE's relations are not LAMA T-REx relations, so generated prompt sets have no prompts for
them: a Google-RE relation is probed with its own prompts in the set (the manual template) and
those of the T-REx relation it maps to (``lpaqa.google_re_relations``: place_of_birth → P19, ...).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

import numpy as np
import pandas as pd
import pyarrow as pa
import torch

from ..contracts import PROBE, to_table
from ..io import KnowprobeError
from ..prompts import fill_template

log = logging.getLogger(__name__)


HIDDEN_CONTRACT = "probe_hidden"


def prompts_for(prompts: pd.DataFrame, relation_map: dict[str, str]) -> pd.DataFrame:
    """The prompts a dataset is probed with: for every ``relation_map`` entry R → T, R's own prompts
    and then T's under R's name (a template R already has is not repeated)."""
    own = prompts[~prompts["relation"].isin(relation_map)]
    borrowed = []
    for relation, source in relation_map.items():
        rows = pd.concat([prompts[prompts["relation"] == relation], prompts[prompts["relation"] == source]])
        borrowed.append(rows.assign(relation=relation).drop_duplicates("template", keep="first"))
    return pd.concat([own, *borrowed], ignore_index=True)


def write_hidden(hidden, path, rows: int) -> None:
    """The final hidden states of a probe table's rows, in the model's dtype (safetensors), with
    their SHA-256 recorded beside them (``PATH.sha256``; ``knowprobe.io.record_digest``)."""
    from safetensors.torch import save_file

    from ..contracts import VERSION
    from ..io import atomic_path

    metadata = {"knowprobe.contract": HIDDEN_CONTRACT, "knowprobe.version": VERSION, "rows": str(rows)}
    with atomic_path(path, digest=True) as tmp:
        save_file({"hidden": hidden.contiguous()}, str(tmp), metadata=metadata)


@contextlib.contextmanager
def open_hidden(path, rows: int | None = None):
    """A probe's hidden-state file, open (safetensors' ``safe_open``) once its bytes are checked
    against the digest recorded as it was written and its metadata against ``write_hidden``'s
    (with ``rows``, the row count of its table). Every fault is one KnowprobeError naming it."""
    from safetensors import safe_open

    from ..contracts import VERSION
    from ..io import verify_digest

    verify_digest(path)
    with contextlib.ExitStack() as stack:
        try:
            handle = stack.enter_context(safe_open(str(path), framework="pt"))
            metadata = handle.metadata() or {}
            shape = handle.get_slice("hidden").get_shape()
        except Exception as error:  # safetensors raises several types; all mean "not such a file"
            raise KnowprobeError(f"{path}: not a probe's hidden states ({type(error).__name__}: {error})") from None
        if metadata.get("knowprobe.contract") != HIDDEN_CONTRACT or metadata.get("knowprobe.version") != VERSION:
            raise KnowprobeError(f"{path}: expected {HIDDEN_CONTRACT} version {VERSION}, found {metadata}")
        if rows is not None and shape[0] != rows:
            raise KnowprobeError(f"{path}: {shape[0]} hidden states for a table of {rows} rows")
        yield handle


def read_hidden(path, rows: int):
    """The hidden states written by ``write_hidden``, checked (``open_hidden``) against the rows of
    their table."""
    with open_hidden(path, rows) as handle:
        return handle.get_tensor("hidden")


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
    pairs = facts.merge(prompts[["relation", "prompt_id", "template", "source", "rank"]], on="relation", how="inner")
    return pairs.sort_values(["relation", "prompt_id", "fact_id"], kind="stable").reset_index(drop=True)


def probe(facts: pd.DataFrame, prompts: pd.DataFrame, scorer, candidates: pd.DataFrame, top_k: int):
    """Probe every (fact, prompt) pair with a masked LM scorer: a table of the ``probe`` contract
    and the final hidden state at the mask of each of its rows."""
    [(_, table, hidden)] = probe_parts({"part": (facts, prompts)}, scorer, candidates, top_k)
    return table, hidden


def probe_parts(
    parts: dict, scorer, candidates: pd.DataFrame, top_k: int, reused: list[tuple] = ()
) -> Iterator[tuple[str, pa.Table, torch.Tensor]]:
    """Probe the (fact, prompt) pairs of several parts at once (each a prompt set on a dataset
    split: ``name -> (facts, prompts)``), each distinct input (a template filled with a subject)
    scored once whichever parts ask for it; yields per part its name, a table of the ``probe``
    contract and its rows' final hidden states at the mask, as ``probe`` gives them part by part
    (one part at a time: a part's hidden states, one row per pair, are built only when it is
    yielded, so that the caller writes and drops them before the next). ``reused``: the
    ``(table, hidden states)`` files of earlier probes of the model: inputs they hold are not run
    through the encoder again, only the LM head reads their hidden states (``known_inputs``)."""
    if scorer.kind != "masked":
        raise KnowprobeError("LPAQA's probe ranks candidates at a mask token: it needs a model of kind masked")
    mask = scorer.tokenizer.mask_token
    paired = {}
    for name, (facts, prompts) in parts.items():
        pairs = pair_facts_with_prompts(facts, prompts)
        if pairs.empty:
            log.warning(
                "%s: no (fact, prompt) pair to probe: the prompt set has no prompt for any of the %d relations of "
                "these facts; the outputs are empty",
                name,
                facts["relation"].nunique(),
            )
        paired[name] = pairs
    texts = [
        fill_template(t, s, mask) for pairs in paired.values() for t, s in zip(pairs["template"], pairs["sub_label"])
    ]
    gold = np.concatenate([pairs["obj_token_id"].to_numpy(dtype=np.int64) for pairs in paired.values()] or [[]])
    log.info(
        "probing %d (fact, prompt) pairs of %d parts: %d candidates, top_k=%d, device=%s, dtype=%s",
        len(texts),
        len(parts),
        len(candidates),
        min(top_k, len(candidates)),
        scorer.device,
        next(scorer.model.parameters()).dtype,
    )
    known = known_inputs(reused, set(texts), mask) if reused and texts else None
    if reused:
        log.info("%d distinct inputs of these parts were scored by an earlier probe", len(known[0]) if known else 0)
    hidden_size = scorer.model.config.hidden_size
    dtype = next(scorer.model.parameters()).dtype
    if texts:
        scores = scorer.slot_scores(
            texts, candidates["token_id"].to_numpy(), gold.astype(np.int64), top_k=top_k, keep_hidden=True, known=known
        )
        log.info(
            "%d pairs, %d distinct inputs scored (%.2f pairs an input)",
            len(texts),
            scores.distinct_texts,
            len(texts) / max(1, scores.distinct_texts),
        )
    del texts, gold  # a Python string per pair: not kept while the parts are written
    word_of = dict(zip(candidates["token_id"], candidates["word"]))
    start = 0
    for name in list(paired):
        pairs = paired.pop(name)
        if pairs.empty:
            empty = torch.empty((0, hidden_size), dtype=dtype)
            yield name, to_table(pa.table({column: [] for column in PROBE.columns}), PROBE), empty
            continue
        rows = slice(start, start + len(pairs))
        start += len(pairs)
        index = scores.index[rows]
        topk_ids, topk_logprobs = scores.topk_ids[index], scores.topk_logprobs[index]
        table = pa.Table.from_pandas(pairs[list(PROBE.columns[:9])], preserve_index=False)
        for column, values in [
            ("gold_logprob", pa.array(scores.target_logprobs[rows, 0])),
            ("gold_rank", pa.array(scores.target_ranks[rows, 0])),
            ("prediction", pa.array([word_of[i] for i in topk_ids[:, 0]], pa.string())),
            ("topk_ids", rows_as_lists(topk_ids)),
            ("topk_logprobs", rows_as_lists(topk_logprobs)),
        ]:
            table = table.append_column(column, values)
        yield name, to_table(table, PROBE), scores.hidden[torch.from_numpy(index)]


def known_inputs(tables_and_hidden: list[tuple], needed: set[str], mask: str):
    """The inputs among ``needed`` that earlier probe tables hold, with their hidden states: read
    from ``(table path, hidden path)`` pairs, only the rows of those inputs (a prompt's rows lie
    together in a table, so they are read as a few runs of rows). None where there are none."""
    from ..contracts import read

    remaining, texts, states = set(needed), [], []
    for table_path, hidden_path in tables_and_hidden:
        table = read(table_path, PROBE, columns=["template", "sub_label"])
        filled = [fill_template(t, s, mask) for t, s in zip(table["template"], table["sub_label"])]
        wanted = np.flatnonzero([text in remaining for text in filled])
        if not len(wanted):
            continue
        with open_hidden(hidden_path, len(table)) as handle:
            sliced = handle.get_slice("hidden")
            for run in np.split(wanted, np.flatnonzero(np.diff(wanted) != 1) + 1):
                block = sliced[int(run[0]) : int(run[-1]) + 1]
                for offset, row in enumerate(run.tolist()):
                    if filled[row] in remaining:  # each input once, from the first table that has it
                        remaining.discard(filled[row])
                        texts.append(filled[row])
                        states.append(block[offset])
    return (texts, torch.stack(states)) if texts else None


def rows_as_lists(matrix: np.ndarray) -> pa.ListArray:
    """The rows of a 2-D array as an Arrow list column (no Python objects per row)."""
    offsets = np.arange(0, matrix.size + 1, matrix.shape[1], dtype=np.int32)
    return pa.ListArray.from_arrays(offsets, pa.array(matrix.ravel()))
