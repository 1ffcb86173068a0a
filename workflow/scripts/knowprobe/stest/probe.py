"""S-TEST's scores through the shared scorers: for each triple, query and model, a score of the
fine and of the coarse object (``p_r`` compares them, :mod:`knowprobe.stest.metrics`).

- Masked LMs (mode ``mask``): the log-probability of each object's token at the scored mask.
- Causal LMs, mode ``next_token``: the log-probability of each object's token after the text
  before the slot, which is all a left-to-right model reads, so that CP scores equal VP's, as
  the paper notes. A masked subject (naturalness) is the model's unknown token, the text around
  it tokenized as the authors' GPT-2 connector does (``subject_spacing``,
  :mod:`knowprobe.stest.prompts`). Mode ``sentence`` (beyond the paper): log P(rest of the
  sentence | text before the slot) with each object in the slot, the cascade's clause holding
  the other object, so that the clause, too, is read.
- Relatedness (mode ``embedding``): the cosine similarity of the mean-pooled final-layer
  embeddings of the subject and of each object, each encoded alone (Yu & Ettinger, 2020).

An object that is not a single-token candidate of the model, or a label the model cannot embed,
gets no score (NaN); the metric counts such triples apart (``left_out``).
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from ..scoring import CausalLM, MaskedLM
from .prompts import causal_continuation, causal_prefix, masked_form

log = logging.getLogger(__name__)

SCORE_COLUMNS = [
    "model",
    "relation",
    "sub_uri",
    "measure",
    "method",
    "mode",
    "query",
    "fine_score",
    "coarse_score",
    "fine_in_vocab",
    "coarse_in_vocab",
]


def token_ids(labels: pd.Series, candidates: pd.DataFrame) -> np.ndarray:
    """Each label's candidate token id, -1 where the label is not a candidate word."""
    ids = dict(zip(candidates["word"], candidates["token_id"]))
    return np.array([ids.get(label, -1) for label in labels], dtype=np.int64)


def object_scores(
    scorer, queries: pd.DataFrame, triples: pd.DataFrame, fine_ids, coarse_ids, subject_spacing: str = "authors"
) -> list[pd.DataFrame]:
    """The queries' scores of both objects, one frame per scoring mode of the model's kind."""
    rows = queries["row"].to_numpy()
    fine, coarse = fine_ids[rows], coarse_ids[rows]
    usable = (fine >= 0) & (coarse >= 0)
    base = queries.assign(fine_in_vocab=fine >= 0, coarse_in_vocab=coarse >= 0)
    if isinstance(scorer, MaskedLM):
        forms = [masked_form(q, scorer.tokenizer.mask_token) for q in queries["query"]]
        usable &= ~left_out_if_too_long(scorer, [(text,) for text, _, _ in forms], queries, usable)
        out = np.full((len(queries), 2), np.nan)
        # queries differ in how many masks they hold and which is scored: one call per shape
        shapes = pd.Series([(masks, slot) for _, masks, slot in forms])
        for (masks, slot), index in shapes.groupby(shapes).groups.items():
            index = np.asarray([i for i in index if usable[i]], dtype=np.int64)
            if len(index):
                scores = scorer.candidate_logprobs(
                    [forms[i][0] for i in index],
                    np.union1d(fine[index], coarse[index]),
                    targets=np.stack([fine[index], coarse[index]], axis=1),
                    masks=masks,
                    slot=slot,
                )
                out[index] = scores.target_logprobs
        return [base.assign(mode="mask", fine_score=out[:, 0], coarse_score=out[:, 1])]
    assert isinstance(scorer, CausalLM)
    unknown = scorer.tokenizer.unk_token or scorer.tokenizer.eos_token
    prefixes = [causal_prefix(q, unknown, subject_spacing) for q in queries["query"]]
    # the sentence mode's continuations, each object in the slot in turn: the longest texts a
    # causal model reads (the prefix and the rest of the sentence), so they are what must fit
    labels_of_rows = triples[["fine_label", "coarse_label"]].to_numpy()[rows]
    continuations = [
        (
            causal_continuation(q, a, b, unknown, subject_spacing),
            causal_continuation(q, b, a, unknown, subject_spacing),
        )
        for q, (a, b) in zip(queries["query"], labels_of_rows)
    ]
    sentences = [tuple(f"{prefix} {rest}" for rest in pair) for prefix, pair in zip(prefixes, continuations)]
    usable &= ~left_out_if_too_long(scorer, sentences, queries, usable)
    index = np.flatnonzero(usable)
    next_token = np.full((len(queries), 2), np.nan)
    if len(index):
        scores = scorer.candidate_logprobs(
            [prefixes[i] for i in index],
            np.union1d(fine[index], coarse[index]),
            targets=np.stack([fine[index], coarse[index]], axis=1),
        )
        next_token[index] = scores.target_logprobs
    sentence = np.full((len(queries), 2), np.nan)
    if len(index):
        for column in (0, 1):
            rests = [continuations[i][column] for i in index]
            sentence[index, column] = scorer.conditional_logprob([prefixes[i] for i in index], rests)
    return [
        base.assign(mode="next_token", fine_score=next_token[:, 0], coarse_score=next_token[:, 1]),
        base.assign(mode="sentence", fine_score=sentence[:, 0], coarse_score=sentence[:, 1]),
    ]


def left_out_if_too_long(scorer, texts: list[tuple], queries: pd.DataFrame, usable):
    """Which queries are longer than the model takes (a few-shot prompt of ten long labels), each
    query given as the texts the model will read for it: they get no score for this model, logged
    and left out of p_r, and the rest are scored."""
    long = np.zeros(len(texts), dtype=bool)
    index = np.flatnonzero(usable)
    if len(index):
        width = len(texts[0])
        flat = [texts[i][j] for i in index for j in range(width)]
        long[index] = scorer.too_long(flat).reshape(len(index), width).any(axis=1)
    if long.any():
        methods = queries.loc[long, "method"].value_counts().to_dict()
        log.warning(
            "%d queries are longer than this model takes (%s): no score, left out of p_r; e.g. %r",
            int(long.sum()),
            ", ".join(f"{m} {n}" for m, n in methods.items()),
            texts[int(np.flatnonzero(long)[0])][0][:120],
        )
    return long


def cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = a.astype(np.float64), b.astype(np.float64)
    return (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def relatedness(scorer, triples: pd.DataFrame, fine_ids, coarse_ids) -> pd.DataFrame:
    """Cosine similarity of the subject's phrase embedding with each object's (every phrase
    embedded once). A triple with a label this model cannot embed (an empty one, or one longer
    than the model takes) gets no score (NaN), is logged, and is left out of p_r; the rest go on."""
    phrases = sorted(set(triples["sub_label"]) | set(triples["fine_label"]) | set(triples["coarse_label"]))
    unembeddable = scorer.unembeddable(phrases)
    kept = [phrase for phrase in phrases if phrase not in unembeddable]
    embedded = scorer.phrase_embeddings(kept) if kept else np.empty((0, 1), dtype=np.float32)
    where = {phrase: i for i, phrase in enumerate(kept)}
    nan_row = np.full((1, embedded.shape[1]), np.nan, dtype=np.float32)
    table = np.concatenate([embedded, nan_row])  # row -1: a label that was not embedded

    def of(labels):
        return table[[where.get(label, -1) for label in labels]]

    subjects = of(triples["sub_label"])
    out = pd.DataFrame(
        {
            "row": np.arange(len(triples)),
            "measure": "relatedness",
            "method": "-",
            "query": "",
            "fine_in_vocab": fine_ids >= 0,
            "coarse_in_vocab": coarse_ids >= 0,
            "mode": "embedding",
            "fine_score": cosine(subjects, of(triples["fine_label"])),
            "coarse_score": cosine(subjects, of(triples["coarse_label"])),
        }
    )
    if unembeddable:
        hit = triples[["sub_label", "fine_label", "coarse_label"]].isin(list(unembeddable)).any(axis=1)
        example, reason = next(iter(unembeddable.items()))
        log.warning(
            "relatedness: %d labels this model cannot embed (e.g. %r: %s); %d triples left out of it",
            len(unembeddable),
            example,
            reason,
            int(hit.sum()),
        )
    return out


def score(
    scorer,
    model: str,
    triples: pd.DataFrame,
    queries: pd.DataFrame,
    candidates: pd.DataFrame,
    subject_spacing: str = "authors",
) -> pd.DataFrame:
    """Every score of one model: the queries' (each mode of its kind) and relatedness; a causal
    model reads a masked subject as ``subject_spacing`` says (:mod:`knowprobe.stest.prompts`)."""
    triples = triples.reset_index(drop=True)
    fine_ids = token_ids(triples["fine_label"], candidates)
    coarse_ids = token_ids(triples["coarse_label"], candidates)
    frames = object_scores(scorer, queries, triples, fine_ids, coarse_ids, subject_spacing)
    frames.append(relatedness(scorer, triples, fine_ids, coarse_ids))
    scores = pd.concat(frames, ignore_index=True)
    rows = scores["row"].to_numpy()
    scores["model"] = model
    scores["relation"] = triples["relation"].to_numpy()[rows]
    scores["sub_uri"] = triples["sub_uri"].to_numpy()[rows]
    return scores[SCORE_COLUMNS]
