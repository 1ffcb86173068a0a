"""float32's decisions at a lower precision's cost: the decisions near a tie rescored in float32.

A study decides by comparing scores within a group: BEAR and LPAQA's statement score take the best
of a group's candidates (an instance's answers under one template, a (fact, prompt)'s C_r), COMPS
whether a pair's acceptable sentence scores above its unacceptable one. Below float32 (half
precision, TF32 on a GPU; bfloat16 on a CPU with AMX) two scores that lie close can swap places.
``recheck_groups`` keeps float32's decisions while rescoring few candidates in float32:

1. **sample**: an evenly spaced sample of the groups (``share`` of them, at least
   ``RECHECK_MIN_SAMPLE``) is rescored whole in float32, and the largest change of a difference
   between two scores of one sampled group is taken as the precision's ``error``;
2. **near**: every other group whose two best scores lie within ``bound = factor x error`` of
   each other has its candidates within ``bound`` of its best rescored in float32 (a pair: both).

A candidate left alone lies more than ``bound`` below its group's best, so with ``factor`` >= 1
float32 cannot make it the best unless its own score moved by more than the sample's largest
move. The report says how far the near groups' differences moved (``error_near``): beyond half the
bound (``bound_too_tight``) groups outside it may have changed too, and the caller warns. Rescored
candidates carry float32's scores, the others their own precision's. Scores that are not finite
(candidates a model cannot score) take no part; a group with fewer than two finite scores has no
decision.
"""

from __future__ import annotations

import dataclasses
import gc
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

# the fewest groups whose float32 scores measure a precision's error
RECHECK_MIN_SAMPLE = 256
DECISIONS = ("best", "first_above_rest")


def below_float32(scorer, settings) -> bool:
    """Whether the scorer's model computes in less than float32 (weights in half precision, or
    float32 with TF32 matrix products): where a study's recheck applies."""
    return next(scorer.model.parameters()).dtype != torch.float32 or settings.dtype == "tf32"


def float32_scorer(load: Callable, settings):
    """The scorer a recheck rescores with: ``load(settings)`` in float32, after the device's cached
    memory is freed (drop the low-precision scorer first: one copy of the weights at a time)."""
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    return load(dataclasses.replace(settings, dtype="float32"))


def even_sample(n: int, share: float) -> np.ndarray:
    """Evenly spaced positions of ``n``: ``share`` of them, at least ``RECHECK_MIN_SAMPLE`` (all
    where fewer)."""
    size = min(n, max(RECHECK_MIN_SAMPLE, int(np.ceil(share * n))))
    return np.unique(np.linspace(0, n - 1, size).round().astype(np.int64)) if size else np.empty(0, np.int64)


@dataclass(frozen=True)
class Recheck:
    """What ``recheck_groups`` did, for the job's log."""

    groups: int  # groups with a decision (two finite scores or more)
    sample: int  # groups rescored whole to measure the error
    error: float  # the largest change of a difference within a sampled group
    bound: float  # groups whose two best lie within it were rescored near their best
    near: int  # groups rescored for their two best lying close (outside the sample)
    rescored: int  # candidates rescored in float32, sample and near
    changed_sample: int  # decisions float32 changed, in the sample
    changed_near: int  # and among the near groups
    error_near: float  # the largest change of a difference within a near group
    unit: str = "groups"

    def describe(self) -> str:
        return (
            f"float32 recheck: {self.sample:,} of {self.groups:,} {self.unit} sampled, their margins moved by at "
            f"most {self.error:.4g}; {self.near:,} more within {self.bound:.4g} of a tie rescored; float32 changed "
            f"{self.changed_sample} decisions of the sample and {self.changed_near} of the near {self.unit} (their "
            f"margins moved by at most {self.error_near:.4g}); {self.rescored:,} scores rescored"
        )

    @property
    def bound_too_tight(self) -> bool:
        """Near groups whose differences moved by more than half the bound: groups outside it may
        have changed sides too."""
        return self.error_near > self.bound / 2


class Groups:
    """The finite scores of each group, its members sorted by their original position."""

    def __init__(self, scores: np.ndarray, groups: np.ndarray):
        finite = np.flatnonzero(np.isfinite(scores))
        order = finite[np.lexsort((finite, groups[finite]))]
        ids, starts, counts = np.unique(groups[order], return_index=True, return_counts=True)
        self.order, self.ids, self.starts, self.counts = order, ids, starts, counts
        self.decided = np.flatnonzero(counts >= 2)  # positions in ids of the groups with a decision

    def members(self, which: np.ndarray) -> list[np.ndarray]:
        return [self.order[self.starts[g] : self.starts[g] + self.counts[g]] for g in which]


def decide(values: np.ndarray, decision: str):
    """A group's decision: ``best``, the position of its best score (ties: the first); or
    ``first_above_rest``, whether its first score is above every other (a tie: not)."""
    if decision == "best":
        return int(np.argmax(values))
    return bool(values[0] > values[1:].max())


def recheck_groups(
    scores: np.ndarray,
    groups: np.ndarray,
    rescore: Callable[[np.ndarray], np.ndarray],
    share: float,
    factor: float,
    decision: str = "best",
    unit: str = "groups",
) -> tuple[np.ndarray, Recheck]:
    """``scores`` [n] (float, from a model below float32), each in the group ``groups`` [n] names,
    with the sampled groups' and the near groups' candidates (see the module) replaced by their
    float32 scores; ``rescore(positions)`` gives those of the candidates at ``positions`` (sorted,
    each asked for once). ``decision``: how a group decides (``decide``), for the counts of
    decisions float32 changed."""
    if decision not in DECISIONS:
        raise ValueError(f"decision={decision!r}: one of {', '.join(DECISIONS)}")
    scores = np.asarray(scores, dtype=np.float64)
    out = scores.copy()
    found = Groups(scores, np.asarray(groups))

    def replace(parts: list[np.ndarray]) -> float:
        """Put the float32 scores of the candidates ``parts`` in; the largest change of a
        difference within one part."""
        if not parts:
            return 0.0
        positions = np.concatenate(parts)
        order = np.argsort(positions)
        exact = np.empty(len(positions))
        exact[order] = np.asarray(rescore(positions[order]), dtype=np.float64)
        out[positions] = exact
        moved, offset = 0.0, 0
        for part in parts:
            delta = exact[offset : offset + len(part)] - scores[part]
            moved, offset = max(moved, float(delta.max() - delta.min())), offset + len(part)
        return moved

    def changed(parts: list[np.ndarray]) -> int:
        return sum(decide(scores[part], decision) != decide(out[part], decision) for part in parts)

    # the sample: whole groups, evenly spaced
    in_sample = found.decided[even_sample(len(found.decided), share)]
    sampled = found.members(in_sample)
    error = replace(sampled)
    bound = factor * error
    # the near groups: their two best within the bound (a tie counts as near: 0 where nothing moved)
    near, close = [], []
    for part in found.members(np.setdiff1d(found.decided, in_sample)):
        values = scores[part]
        within = part[values >= values.max() - bound]
        if len(within) >= 2:
            near.append(part)
            close.append(within)
    error_near = replace(close)
    report = Recheck(
        groups=len(found.decided),
        sample=len(sampled),
        error=error,
        bound=bound,
        near=len(near),
        rescored=sum(map(len, sampled)) + sum(map(len, close)),
        changed_sample=changed(sampled),
        changed_near=changed(near),
        error_near=error_near,
        unit=unit,
    )
    return out, report
