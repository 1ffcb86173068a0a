"""Prompt selection and ensembles (LPAQA §4): Top-1, Top-K (log-linear and linear), Opti, Oracle.

Everything here works on one relation's candidate log-probabilities ``logprobs[prompt, fact,
candidate]`` (normalised over the model's whole vocabulary, as the probe computed them) and the
gold candidate of each fact. A fact counts as correct when no candidate scores strictly higher
than its gold object: LAMA's P@1 rule (``gold_rank == 0``), applied to ensemble scores alike.

- **Top-1**: the prompt with the best micro P@1 on the train split. Ties go to the prompt the set
  ranks first (its own order: frequency for mined prompts, round-trip probability for
  paraphrases), then to the lower prompt id.
- **Top-K**, log-linear: the sum of the log-probs of the K best prompts in that order (LPAQA
  eq. 1; the 1/K factor changes no argmax). **Linear** (Figure 5): the sum of their probabilities.
- **Opti** (eq. 3): per relation one parameter per prompt, initialised at 0; the weights are their
  softmax; a fact's score is the weighted sum of the prompts' log-probs, renormalised over the
  candidates; the loss is the mean negative log-probability of the gold objects of the train
  split. Adam (learning rate 0.1), mini-batches of 128 facts drawn anew each epoch with a seed,
  at most 500 epochs, stopped when the epoch's mean training loss has not improved by 1e-3 for 30
  epochs: the settings of LPAQA's code (the paper's text says Adam defaults and batches of 32).
- **Oracle**: correct when any prompt of the relation is correct.
"""

from __future__ import annotations

import logging
import zlib
from collections import deque
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from ..config import schema_defaults
from .metrics import p_at_1, relation_grid
from .prompt_rank import prompt_order  # noqa: F401 (Top-1's order, also read as selection.prompt_order)

log = logging.getLogger(__name__)

_OPTI = schema_defaults("lpaqa", "selection", "opti")


@dataclass(frozen=True)
class OptiSettings:
    """The config's ``lpaqa.selection.opti``."""

    learning_rate: float = _OPTI["learning_rate"]
    batch_size: int = _OPTI["batch_size"]
    max_epochs: int = _OPTI["max_epochs"]
    patience: int = _OPTI["patience"]
    min_improvement: float = _OPTI["min_improvement"]
    seed: int = _OPTI["seed"]


def correct(scores: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """Whether each fact's gold candidate has the best score (ties allowed): ``scores[..., fact,
    candidate]``, ``gold[fact]`` → ``[..., fact]``."""
    gold_scores = np.take_along_axis(scores, np.broadcast_to(gold[:, None], scores.shape[:-1] + (1,)), axis=-1)
    return gold_scores[..., 0] >= scores.max(axis=-1)


def top_k_ensembles(logprobs: np.ndarray, order: np.ndarray, max_k: int):
    """Yield ``(k, log_linear, linear)`` for K = 1 .. ``max_k``: the ``[fact, candidate]`` scores of
    the K best prompts in ``order``, the sum of their log-probs and the log of the sum of their
    probabilities, in float64. Running sums: one pass serves every K, where summing the K best
    anew for each K would add K(K+1)/2 prompt slices (benchmarks/selection.py). Past the number of
    prompts, K gives all of them."""
    log_linear = linear = None
    for k in range(1, max_k + 1):
        if k <= len(order):
            chosen = logprobs[order[k - 1]].astype(np.float64)
            log_linear = chosen if log_linear is None else log_linear + chosen
            linear = chosen if linear is None else np.logaddexp(linear, chosen)
        yield k, log_linear, linear


def top_k_scores(logprobs: np.ndarray, order: np.ndarray, k: int, linear: bool = False) -> np.ndarray:
    """``[fact, candidate]`` scores of the ``k`` best prompts: the sum of their log-probs, or with
    ``linear`` the log of the sum of their probabilities."""
    ((_, log_linear, linear_scores),) = deque(top_k_ensembles(logprobs, order, k), maxlen=1)  # the last: K = k
    return linear_scores if linear else log_linear


def oracle(prompt_correct: np.ndarray) -> np.ndarray:
    return prompt_correct.any(axis=0)


@dataclass(frozen=True)
class OptiFit:
    weights: np.ndarray  # [prompts], softmax of the learned parameters
    epochs: int
    first_loss: float
    final_loss: float


def fit_opti(logprobs: np.ndarray, gold: np.ndarray, settings: OptiSettings, seed_key: int = 0) -> OptiFit:
    """Learn one relation's prompt weights on its train facts (``logprobs[prompt, fact, candidate]``).
    ``seed_key`` (e.g. the relation number) gives each relation its own batch order."""
    prompts, facts = logprobs.shape[:2]
    if facts == 0:
        return OptiFit(np.full(prompts, 1.0 / prompts), 0, float("nan"), float("nan"))
    generator = np.random.default_rng([settings.seed, seed_key])
    torch.manual_seed(settings.seed)
    values = torch.from_numpy(np.ascontiguousarray(logprobs, dtype=np.float32))
    targets = torch.from_numpy(np.array(gold, dtype=np.int64))  # a copy: pandas hands out read-only arrays
    theta = torch.zeros(prompts, requires_grad=True)
    optimizer = torch.optim.Adam([theta], lr=settings.learning_rate)
    best, stale, first, epoch, last = float("inf"), 0, None, 0, float("nan")
    while epoch < settings.max_epochs:
        epoch += 1
        order = torch.from_numpy(generator.permutation(facts))
        total = 0.0
        for start in range(0, facts, settings.batch_size):
            batch = order[start : start + settings.batch_size]
            loss = opti_loss(theta, values[:, batch], targets[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(batch)
        last = total / facts
        first = last if first is None else first
        if last < best - settings.min_improvement:
            best, stale = last, 0
        else:
            stale += 1
            if stale >= settings.patience:
                break
    weights = torch.softmax(theta.detach(), dim=0).numpy().astype(np.float64)
    return OptiFit(weights, epoch, float(first), float(last))


def opti_loss(theta: torch.Tensor, logprobs: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
    """Mean negative log-probability of the gold objects under the weighted sum of log-probs,
    renormalised over the candidates (``logprobs[prompt, fact, candidate]``)."""
    scores = torch.einsum("p,pfc->fc", torch.softmax(theta, dim=0), logprobs)
    return -(scores.gather(1, gold[:, None])[:, 0] - torch.logsumexp(scores, dim=1)).mean()


def weighted_scores(logprobs: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``[fact, candidate]``: the weighted sum over prompts, accumulated in float64 one prompt at a
    time (a float64 copy of the whole array would be 5.6 GB for one relation at full scale)."""
    out = np.zeros(logprobs.shape[1:], dtype=np.float64)
    for weight, prompt in zip(weights, logprobs):
        out += weight * prompt.astype(np.float64)
    return out


# --- backward features (Table 15) -------------------------------------------------------------


def top_b_columns(logprobs: np.ndarray, b: int) -> np.ndarray:
    """``[fact, B]``: the B candidates with the largest summed forward log-prob over the relation's
    prompts (one candidate set per fact, whatever the weights), best first, ties to the lower."""
    summed = logprobs.sum(axis=0, dtype=np.float64)
    return np.argsort(-summed, axis=1, kind="stable")[:, : min(b, summed.shape[1])]


def at_columns(logprobs: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """``logprobs[prompt, fact, candidate]`` at each fact's ``columns[fact, B]``: ``[prompt, fact, B]``."""
    return np.take_along_axis(logprobs, np.broadcast_to(columns[None], (logprobs.shape[0], *columns.shape)), axis=2)


def gold_position(columns: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """Where each fact's gold candidate is among its ``columns`` (-1: not among them)."""
    hits = columns == gold[:, None]
    return np.where(hits.any(axis=1), hits.argmax(axis=1), -1)


def correct_within(scores: np.ndarray, position: np.ndarray) -> np.ndarray:
    """``correct`` over a restricted candidate set: a fact whose gold is not in it is wrong."""
    inside = position >= 0
    right = np.zeros(len(position), dtype=bool)
    right[inside] = correct(scores[inside], position[inside])
    return right


@dataclass
class Restricted:
    """One relation's forward (and backward) log-probs of each fact's top-B candidates."""

    forward: np.ndarray  # [prompt, fact, B]
    backward: np.ndarray  # [prompt, fact, B]: log P(subject | object, prompt)
    position: np.ndarray  # [fact]: the gold's place among the B, -1 if absent

    def features(self, with_backward: bool) -> np.ndarray:
        return self.forward + self.backward if with_backward else self.forward


def fit_restricted(train: Restricted, with_backward: bool, settings: OptiSettings, seed_key: int) -> OptiFit:
    """Opti on the top-B candidates, from the train facts whose gold is among them."""
    inside = train.position >= 0
    return fit_opti(train.features(with_backward)[:, inside], train.position[inside], settings, seed_key)


# --- the stage: every method, every relation, every evaluated split ----------------------------


@dataclass(frozen=True)
class SelectionSettings:
    """The config's ``lpaqa.selection`` (K runs from 1 to ``max_k``)."""

    max_k: int = schema_defaults("lpaqa", "selection")["max_k"]
    opti: OptiSettings = OptiSettings()


@dataclass
class RelationData:
    """One relation of one dataset split: ``logprobs[prompt, fact, candidate]`` and the facts."""

    logprobs: np.ndarray
    gold: np.ndarray  # candidate index of each fact's object
    facts: pd.DataFrame  # fact_id, obj_label, in the logprobs' fact order

    def subset(self, keep: np.ndarray) -> RelationData:
        return RelationData(self.logprobs[:, keep], self.gold[keep], self.facts[keep].reset_index(drop=True))


def relation_key(relation: str) -> int:
    """A number of its own for each relation name, to seed its Opti batches (stable across runs,
    whichever other relations are selected)."""
    return zlib.crc32(relation.encode("utf-8"))


def predictions(data: RelationData, order: np.ndarray, weights: np.ndarray, ks) -> dict[str, np.ndarray]:
    """Whether each fact is right under each method, given a train ranking and Opti's weights:
    Top-K (log-linear and linear) for each K of ``ks``, Opti and Oracle."""
    out = {}
    for k, log_linear, linear in top_k_ensembles(data.logprobs, order, max(ks, default=0)):
        if k in ks:
            out[f"Top{k}"] = correct(log_linear, data.gold)
            out[f"Top{k}-linear"] = correct(linear, data.gold)
    out["Opti"] = correct(weighted_scores(data.logprobs, weights), data.gold)
    out["Oracle"] = oracle(correct(data.logprobs, data.gold))
    return out


def order_of(train_rank: np.ndarray) -> np.ndarray:
    """Prompts best first from their train ranks (0 = Top-1)."""
    return np.argsort(train_rank, kind="stable")


def long_table(facts: pd.DataFrame, split_methods: dict[tuple[str, str], dict[str, np.ndarray]]) -> pd.DataFrame:
    """``fact_id, obj_label, dataset, split, method, correct`` from per-split method predictions."""
    columns = ["fact_id", "obj_label", "dataset", "split", "method", "correct"]
    frames = [
        facts[key].assign(dataset=key[0], split=key[1], method=method, correct=right)
        for key, methods in split_methods.items()
        for method, right in methods.items()
    ]
    return pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)


def select_relation(
    relation: str,
    train: RelationData,
    evaluated: dict[tuple[str, str], RelationData],
    set_rank: np.ndarray,
    settings: SelectionSettings,
    seed_key: int = 0,
    backward: dict[str, Restricted] | None = None,
) -> tuple[pd.DataFrame, dict]:
    """Rank the prompts and fit Opti on ``train``; each method's per-fact correctness on every
    ``evaluated[(dataset, split)]``. With ``backward`` (``Restricted`` of "train" and of each
    evaluated split name ``"dataset/split"``), also Opti over the top-B candidates with forward
    features only (``Opti-forward``) and with backward ones added (``Opti+backward``).
    Returns the long table ``dataset, split, method, fact_id, obj_label, correct`` and the
    relation's prompt statistics."""
    train_correct = correct(train.logprobs, train.gold)
    order = prompt_order(train_correct, set_rank)
    fit = fit_opti(train.logprobs, train.gold, settings.opti, seed_key)
    split_methods, facts = {}, {}
    for key, data in evaluated.items():
        if not len(data.gold):
            continue
        split_methods[key] = predictions(data, order, fit.weights, range(1, settings.max_k + 1))
        facts[key] = data.facts
    if backward is not None:
        for name, with_backward in [("Opti-forward", False), ("Opti+backward", True)]:
            restricted_fit = fit_restricted(backward["train"], with_backward, settings.opti, seed_key)
            for key in split_methods:
                part = backward["/".join(key)]
                scores = weighted_scores(part.features(with_backward), restricted_fit.weights)
                split_methods[key][name] = correct_within(scores, part.position)
    position = np.empty(len(order), dtype=np.int64)
    position[order] = np.arange(len(order))
    stats = {
        "train_facts": int(train.logprobs.shape[1]),
        "train_micro": train_correct.mean(axis=1) if train_correct.shape[1] else np.full(len(order), np.nan),
        "train_rank": position,
        "weight": fit.weights,
        "opti_epochs": fit.epochs,
        "opti_final_loss": fit.final_loss,
    }
    if not train_correct.shape[1]:
        log.warning("%s: no train facts; prompts keep the set's order and Opti's weights stay uniform", relation)
    return long_table(facts, split_methods), stats


@dataclass
class ProbeSplit:
    """A probe table of one dataset split and the hidden states of its rows."""

    table: pd.DataFrame
    hidden: torch.Tensor

    @classmethod
    def read(cls, table_path, hidden_path) -> ProbeSplit:
        """The probe's two outputs of a split, each checked (contract, row count)."""
        from ..contracts import PROBE, read
        from .probe import read_hidden

        table = read(table_path, PROBE)
        return cls(table, read_hidden(hidden_path, len(table)))

    def relations(self) -> set[str]:
        return set(self.table["relation"])

    def relation_data(self, relation: str, candidate_logprobs, column_of: dict[int, int] | None):
        """One relation's ``RelationData`` (log-probs of every candidate, recomputed from the stored
        hidden states by ``candidate_logprobs(hidden) -> [n, candidates]``) and its prompts.
        ``column_of``: a gold token id's candidate column; None where ``obj_token_id`` is the
        column already (the statement score's, a column of the relation's C_r)."""
        grid, prompts, facts = relation_grid(self.table, relation)
        logprobs = candidate_logprobs(self.hidden[torch.from_numpy(grid.ravel())])
        golds = facts["obj_token_id"]
        gold = (golds if column_of is None else golds.map(column_of)).to_numpy()
        return RelationData(logprobs.reshape(*grid.shape, -1), gold, facts), prompts


@dataclass
class RelationSplits:
    """What the stage needs of one relation of a dataset: its prompts (grid order), T-REx-train's
    train part, and the evaluated splits ``(dataset, split)``: dev, test and, for T-REx, T-REx-UHN."""

    relation: str
    prompts: pd.DataFrame
    train: RelationData
    evaluated: dict[tuple[str, str], RelationData]
    backward: dict[str, Restricted] | None = None  # "train" and "dataset/split" of each evaluated


def restricted_of(data: RelationData, rows: pd.DataFrame, column_of: dict[int, int], b: int) -> Restricted:
    """A relation's ``Restricted`` from its rows of a backward table (prompt, fact, position
    order), checked against the top-B candidates recomputed here from the same log-probs."""
    prompts, facts = data.logprobs.shape[:2]
    columns = top_b_columns(data.logprobs, b)
    shape = (prompts, facts, columns.shape[1])
    if len(rows) != np.prod(shape):
        raise ValueError(f"backward rows: {len(rows)} for {prompts} prompts x {facts} facts x {shape[2]} objects")
    stored = rows["token_id"].map(column_of).to_numpy().reshape(shape)
    if (
        not (stored == columns[None]).all()
        or not (rows["fact_id"].to_numpy().reshape(shape)[0, :, 0] == data.facts["fact_id"].to_numpy()).all()
    ):
        raise ValueError("backward rows do not hold the top-B objects of these facts: rerun lpaqa_backward")
    backward = rows["backward_logprob"].to_numpy(np.float64).reshape(shape)
    return Restricted(at_columns(data.logprobs, columns), backward, gold_position(columns, data.gold))


def subset_restricted(part: Restricted, keep: np.ndarray) -> Restricted:
    return Restricted(part.forward[:, keep], part.backward[:, keep], part.position[keep])


def relation_splits(
    dataset: str,
    probes: dict[str, ProbeSplit],
    train_ids: set[str],
    candidate_logprobs,
    column_of: dict[int, int] | None,
    uhn_ids: set[str] | None = None,
    backward: dict[str, pd.DataFrame] | None = None,
    b: int = 0,
):
    """Yield the ``RelationSplits`` of every relation of a dataset's test probe, with log-probs
    recomputed from the stored hidden states by ``candidate_logprobs(hidden) -> [n, candidates]``
    (and with ``backward``, the backward tables of the test and train_dev splits, their
    ``Restricted``). T-REx-train relations without test facts (those only Google-RE ranks on) are
    not evaluated."""
    from ..io import progress

    def data_of(split: str, relation: str) -> tuple[RelationData, pd.DataFrame, Restricted | None]:
        data, prompts = probes[split].relation_data(relation, candidate_logprobs, column_of)
        if backward is None:
            return data, prompts, None
        rows = backward[split]
        return data, prompts, restricted_of(data, rows[rows["relation"].to_numpy() == relation], column_of, b)

    train_relations = probes["train_dev"].relations()
    for relation in progress(sorted(probes["test"].relations()), desc=f"select {dataset}", unit="relation"):
        data, prompts, test_part = data_of("test", relation)
        evaluated = {(dataset, "test"): data}
        parts = {f"{dataset}/test": test_part}
        if uhn_ids is not None:
            keep = data.facts["fact_id"].isin(uhn_ids).to_numpy()
            evaluated[(f"{dataset}_uhn", "test")] = data.subset(keep)
            parts[f"{dataset}_uhn/test"] = test_part and subset_restricted(test_part, keep)
        if relation in train_relations:
            both, train_prompts, both_part = data_of("train_dev", relation)
            if not train_prompts["template"].equals(prompts["template"]):
                raise ValueError(f"{dataset} {relation}: the test and train_dev probes used other prompts")
            in_train = both.facts["fact_id"].isin(train_ids).to_numpy()
            train, evaluated[(dataset, "dev")] = both.subset(in_train), both.subset(~in_train)
            parts["train"] = both_part and subset_restricted(both_part, in_train)
            parts[f"{dataset}/dev"] = both_part and subset_restricted(both_part, ~in_train)
        else:
            empty = np.zeros((len(prompts), 0, data.logprobs.shape[2]), np.float32)
            train = RelationData(empty, np.zeros(0, np.int64), data.facts.iloc[:0])
            if backward is not None:
                parts["train"] = Restricted(*(np.zeros((len(prompts), 0, b)),) * 2, np.zeros(0, np.int64))
        yield RelationSplits(relation, prompts, train, evaluated, parts if backward is not None else None)


def results_table(predicted: pd.DataFrame) -> pd.DataFrame:
    """Per (method, dataset, split, relation): facts, objects, micro and macro P@1."""
    return p_at_1(predicted, keys=["method", "dataset", "split"])
