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
gets no score (NaN); the metric counts such triples apart (``left_out``). So does a triple the
model cannot be asked about at all (``unusable_triples``: a label holding a slot marker or one of
the model's special tokens, or a vanilla or cascade query of its own longer than the model takes):
its queries get no score, it is counted by reason in the job's log, and it is shown in no other
triple's few-shot prompt, so that one bad triple stays one.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from ..prompts import OBJECT, SUBJECT
from ..scoring import CausalLM, MaskedLM
from . import prompts
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


UNUSABLE_REASONS = {
    "placeholder": "a label holds [X] or [Y], which the prompts use as slots",
    "special_token": "a label holds a special token of the model (its mask token, ...), read as that token",
    "too_long": "a vanilla or cascade query of the triple's own is longer than the model takes",
}


SUBJECT_TOKENS = ("eos", "unk")  # stest.subject_token


def subject_token(scorer, subject: str = "eos") -> str:
    """The token a causal model reads for a masked subject. ``eos``: the model's end-of-sequence
    id (``config.eos_token_id``, the first where it lists several), which the authors' GPT-2
    connector puts in every ``[MASK]`` (``unk_id = config.eos_token_id``, commented "use UNK as
    [MASK]"); ``unk``: the tokenizer's unknown token, as that comment reads. On GPT-2 both are
    ``<|endoftext|>``; a tokenizer without the one falls back to the other."""
    if subject not in SUBJECT_TOKENS:
        raise ValueError(f"subject token {subject!r} is not one of {', '.join(SUBJECT_TOKENS)}")
    tokenizer = scorer.tokenizer
    eos = getattr(getattr(scorer.model, "config", None), "eos_token_id", None)
    eos = eos[0] if isinstance(eos, list | tuple) else eos
    eos = tokenizer.convert_ids_to_tokens(eos) if eos is not None else tokenizer.eos_token
    ordered = (eos, tokenizer.unk_token) if subject == "eos" else (tokenizer.unk_token, eos)
    return next(token for token in ordered if token)


def model_texts(
    scorer, queries: pd.DataFrame, triples: pd.DataFrame, subject_spacing: str = "authors", subject: str = "eos"
) -> list[tuple]:
    """The texts the model reads for each query, which must fit it: a masked model's query with
    its masks; a causal model's prefix with the rest of the sentence, each object in the slot in
    turn (the sentence mode's texts, the longest a causal model reads)."""
    if isinstance(scorer, MaskedLM):
        return [(masked_form(q, scorer.tokenizer.mask_token)[0],) for q in queries["query"]]
    unknown = subject_token(scorer, subject)
    labels = triples[["fine_label", "coarse_label"]].to_numpy()[queries["row"].to_numpy()]
    texts = []
    for query, (a, b) in zip(queries["query"], labels):
        prefix = causal_prefix(query, unknown, subject_spacing)
        texts.append(
            tuple(f"{prefix} {causal_continuation(query, x, y, unknown, subject_spacing)}" for x, y in ((a, b), (b, a)))
        )
    return texts


def label_problems(scorer, triples: pd.DataFrame) -> np.ndarray:
    """Per triple, ``placeholder`` or ``special_token`` where a label holds a slot marker or one of
    the model's special tokens, else ""."""
    reasons = np.full(len(triples), "", dtype=object)
    specials = [token for token in scorer.tokenizer.all_special_tokens if token]
    for reason, markers in (("special_token", specials), ("placeholder", [SUBJECT, OBJECT])):
        hit = np.zeros(len(triples), dtype=bool)
        for column in ("sub_label", "fine_label", "coarse_label"):
            hit |= np.array([any(marker in text for marker in markers) for text in triples[column]], dtype=bool)
        reasons[hit] = reason
    return reasons


def unusable_triples(
    scorer, triples: pd.DataFrame, relations: dict, subject_spacing: str = "authors", subject: str = "eos"
) -> np.ndarray:
    """Per triple, why this model cannot be asked about it (a key of ``UNUSABLE_REASONS``), or ""
    where it can; logged, counted by reason. Such a triple is left out of p_r and of the few-shot
    demonstrations (``model_queries``)."""
    triples = triples.reset_index(drop=True)
    reasons = label_problems(scorer, triples)
    if (reasons == "").any():
        own = prompts.queries(triples, relations, k=1, seed=0)
        own = own[(own["method"] != "FP") & (reasons[own["row"].to_numpy()] == "")].reset_index(drop=True)
        texts = model_texts(scorer, own, triples, subject_spacing, subject)
        width = len(texts[0]) if texts else 1
        long = scorer.too_long([text for pair in texts for text in pair]).reshape(len(texts), width).any(axis=1)
        reasons[np.unique(own["row"].to_numpy()[long])] = "too_long"
    unusable = np.flatnonzero(reasons != "")
    if len(unusable):
        counts = pd.Series(reasons[unusable]).value_counts().sort_index()
        first = triples.iloc[unusable[0]]
        log.warning(
            "%d triples this model cannot be asked about, left out of p_r and of every few-shot prompt (%s); "
            "e.g. %s %s (%s: %r)",
            len(unusable),
            ", ".join(f"{reason} {n}" for reason, n in counts.items()),
            first["relation"],
            first["sub_uri"],
            reasons[unusable[0]],
            str(first["sub_label"])[:80],
        )
    return reasons


def model_queries(
    scorer,
    triples: pd.DataFrame,
    relations: dict,
    few_shot: dict,
    subject_spacing: str = "authors",
    subject: str = "eos",
) -> tuple[pd.DataFrame, np.ndarray]:
    """The queries this model is asked, their demonstrations drawn among the triples it can be
    asked about (``few_shot``: k, seed, draw), and each triple's reason to be left out ("" none)."""
    unusable = unusable_triples(scorer, triples, relations, subject_spacing, subject)
    queries = prompts.queries(
        triples, relations, few_shot["k"], few_shot["seed"], few_shot.get("draw", "numpy"), usable=unusable == ""
    )
    return queries, unusable


def object_scores(
    scorer,
    queries: pd.DataFrame,
    triples: pd.DataFrame,
    fine_ids,
    coarse_ids,
    subject_spacing: str = "authors",
    unusable: np.ndarray | None = None,
    subject: str = "eos",
) -> list[pd.DataFrame]:
    """The queries' scores of both objects, one frame per scoring mode of the model's kind; the
    queries of ``unusable`` triples (a reason, "" for none) get none."""
    rows = queries["row"].to_numpy()
    fine, coarse = fine_ids[rows], coarse_ids[rows]
    usable = (fine >= 0) & (coarse >= 0)
    if unusable is not None:
        usable &= np.asarray(unusable)[rows] == ""
    # a demonstration holding a special token (queries drawn without model_queries' care)
    specials = [token for token in scorer.tokenizer.all_special_tokens if token]
    shown = usable & np.array([any(token in query for token in specials) for query in queries["query"]], dtype=bool)
    if shown.any():
        log.warning("%d queries show a label holding a special token of this model: no score", int(shown.sum()))
        usable &= ~shown
    base = queries.assign(fine_in_vocab=fine >= 0, coarse_in_vocab=coarse >= 0)
    texts = model_texts(scorer, queries, triples, subject_spacing, subject)
    usable &= ~left_out_if_too_long(scorer, texts, queries, usable)
    if isinstance(scorer, MaskedLM):
        forms = [masked_form(q, scorer.tokenizer.mask_token) for q in queries["query"]]
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
    unknown = subject_token(scorer, subject)
    prefixes = [causal_prefix(q, unknown, subject_spacing) for q in queries["query"]]
    # the sentence mode's continuations, each object in the slot in turn
    labels_of_rows = triples[["fine_label", "coarse_label"]].to_numpy()[rows]
    continuations = [
        (
            causal_continuation(q, a, b, unknown, subject_spacing),
            causal_continuation(q, b, a, unknown, subject_spacing),
        )
        for q, (a, b) in zip(queries["query"], labels_of_rows)
    ]
    index = np.flatnonzero(usable)
    next_token = np.full((len(queries), 2), np.nan)
    sentence = np.full((len(queries), 2), np.nan)
    if len(index):
        # one pass: each prefix placed once for both objects' next token and both continuations
        next_token[index], sentence[index] = scorer.next_token_and_continuations(
            [prefixes[i] for i in index],
            np.stack([fine[index], coarse[index]], axis=1),
            [continuations[i] for i in index],
        )
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
            example[:80],
            reason[:160],
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
    unusable: np.ndarray | None = None,
    subject: str = "eos",
) -> pd.DataFrame:
    """Every score of one model: the queries' (each mode of its kind) and relatedness; a causal
    model reads a masked subject as ``subject`` says (``subject_token``), spaced as
    ``subject_spacing`` says (:mod:`knowprobe.stest.prompts`).
    The queries of triples the model cannot be asked about (``unusable``, as ``model_queries``
    gives it; by default those whose labels it cannot read) get no score."""
    triples = triples.reset_index(drop=True)
    if unusable is None:
        unusable = label_problems(scorer, triples)
    fine_ids = token_ids(triples["fine_label"], candidates)
    coarse_ids = token_ids(triples["coarse_label"], candidates)
    frames = object_scores(scorer, queries, triples, fine_ids, coarse_ids, subject_spacing, unusable, subject)
    frames.append(relatedness(scorer, triples, fine_ids, coarse_ids))
    scores = pd.concat(frames, ignore_index=True)
    rows = scores["row"].to_numpy()
    scores["model"] = model
    scores["relation"] = triples["relation"].to_numpy()[rows]
    scores["sub_uri"] = triples["sub_uri"].to_numpy()[rows]
    return scores[SCORE_COLUMNS]
