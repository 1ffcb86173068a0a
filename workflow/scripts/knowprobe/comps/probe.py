"""COMPS's scores through the shared scorers: log p(property phrase | prefix) for the acceptable
and the unacceptable prefix of every pair (§3.2 of the paper, "scoring by premise").

Causal LMs sum the log-probabilities of the phrase's tokens after the prefix; masked LMs give the
conditional pseudo-log-likelihood (each phrase token masked in turn, the prefix and the rest of
the phrase visible; with ``within_word_l2r`` the later pieces of the same word are masked too).
Each distinct (prefix, phrase) text is scored once: a positive concept's sentence recurs in the
four pairs of its negatives, so about 60% of COMPS-BASE's texts are distinct. A causal model
also places the tokens several distinct texts begin with ("a robin" before each of its
properties) once, each text's later tokens attending to them (``CausalLM.conditional_logprob``).

Below float32 (half precision or TF32, on a GPU) a pair's two scores can swap places, for its two
scores lie close. ``recheck`` keeps float32's decisions at about half precision's cost, by the
scoring layer's recheck (``knowprobe.scoring.recheck``, every study's): it rescores in float32 an
evenly spaced sample of the pairs, takes the largest change of a pair's margin (acceptable less
unacceptable score) it sees there as the precision's error, and rescores in float32 every pair
whose margin lies within ``factor`` times that error of a tie.

A pair this model cannot score (a text longer than it takes, a property phrase without a token
of its own for its tokenizer: ``LEFT_OUT_REASONS``) is left out for this model alone: its scores
are NaN and its row says why (``left_out``), so that one bad stimulus never stops the job, and
the tables count it apart from the accuracy, as S-TEST does with its unusable triples.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable

import numpy as np
import pandas as pd

from ..scoring import MaskedLM, ScoringSettings
from ..scoring.recheck import Recheck, recheck_groups
from .metrics import LEFT_OUT_REASONS

log = logging.getLogger(__name__)

SCORE_COLUMNS = ["model", "subset", "id", "acceptable_score", "unacceptable_score", "left_out"]


def scoring_settings(section: dict, dtype: str | None) -> ScoringSettings:
    """The config's ``scoring`` section with COMPS's own precision (``comps.scoring.dtype``; None
    keeps the section's)."""
    return ScoringSettings(**{**section, **({} if dtype is None else {"dtype": dtype})})


def conditional_scores(
    scorer, prefixes: list[str], phrases: list[str], within_word_l2r: bool = False, share_prefixes: bool = True
) -> np.ndarray:
    """log p(phrase | prefix) of each distinct text once, spread back to every input (a causal
    model places the tokens several texts begin with once, unless ``share_prefixes`` is off)."""
    texts = pd.DataFrame({"prefix": prefixes, "phrase": phrases})
    codes, unique = pd.factorize(pd.MultiIndex.from_frame(texts))
    prefix_list = [prefix for prefix, _ in unique]
    phrase_list = [phrase for _, phrase in unique]
    if isinstance(scorer, MaskedLM):
        scores = scorer.conditional_logprob(prefix_list, phrase_list, within_word_l2r=within_word_l2r)
    else:
        scores = scorer.conditional_logprob(prefix_list, phrase_list, share_prefixes=share_prefixes)
    return np.asarray(scores, dtype=np.float64)[codes]


def left_out(scorer, stimuli: pd.DataFrame) -> tuple[np.ndarray, dict[str, str]]:
    """Why this model cannot score each pair ('' where it can; the acceptable text's reason
    first), and the first message of each reason (texts quoted to 80 characters)."""
    n = len(stimuli)
    texts = pd.DataFrame(
        {
            "prefix": list(stimuli["prefix_acceptable"]) + list(stimuli["prefix_unacceptable"]),
            "phrase": list(stimuli["property_phrase"]) * 2,
        }
    )
    codes, unique = pd.factorize(pd.MultiIndex.from_frame(texts))
    problems = scorer.continuation_problems([p for p, _ in unique], [c for _, c in unique])
    reasons = np.array(["" if found is None else found[0] for found in problems], dtype=object)[codes]
    pairs = np.where(reasons[:n] != "", reasons[:n], reasons[n:])
    examples = {}
    for found in problems:
        if found is not None:
            examples.setdefault(found[0], found[1])
    return pairs, examples


def log_left_out(reasons: np.ndarray, examples: dict[str, str], stimuli: pd.DataFrame) -> Counter:
    """The pairs left out for this model, counted by reason and subset in the job's log."""
    counts = Counter(reason for reason in reasons if reason)
    if counts:
        where = stimuli.assign(reason=reasons)[reasons != ""]
        log.warning(
            "%d of %d pairs left out for this model (no scores, in no accuracy): %s; by subset %s",
            sum(counts.values()),
            len(reasons),
            ", ".join(f"{reason} {n}" for reason, n in sorted(counts.items())),
            where.groupby("subset").size().to_dict(),
        )
        for reason, message in sorted(examples.items()):
            log.warning("%s (%s), e.g.: %s", reason, LEFT_OUT_REASONS[reason], message)
    return counts


def score(
    scorer,
    model: str,
    stimuli: pd.DataFrame,
    within_word_l2r: bool = False,
    share_prefixes: bool = True,
    reasons: np.ndarray | None = None,
) -> pd.DataFrame:
    """Both prefixes' scores of every pair (``SCORE_COLUMNS``); NaN, with the reason, for the
    pairs this model cannot score (``reasons``: from ``left_out``, found here where not given)."""
    n = len(stimuli)
    if reasons is None:
        reasons, _ = left_out(scorer, stimuli)
    kept = np.flatnonzero(reasons == "")
    both = np.full((2, n), np.nan)
    if len(kept):
        part = stimuli.iloc[kept]
        both[:, kept] = conditional_scores(
            scorer,
            list(part["prefix_acceptable"]) + list(part["prefix_unacceptable"]),
            list(part["property_phrase"]) * 2,
            within_word_l2r,
            share_prefixes,
        ).reshape(2, len(kept))
    return pd.DataFrame(
        {
            "model": model,
            "subset": stimuli["subset"].to_numpy(),
            "id": stimuli["id"].to_numpy(dtype=np.int64),
            "acceptable_score": both[0],
            "unacceptable_score": both[1],
            "left_out": np.asarray(reasons, dtype=object),
        }
    )[SCORE_COLUMNS]


def recheck(
    scores: pd.DataFrame, rescore: Callable[[np.ndarray], pd.DataFrame], share: float, factor: float
) -> tuple[pd.DataFrame, Recheck]:
    """``scores`` (``SCORE_COLUMNS``, from a model below float32) with the sampled pairs and those
    within ``factor`` times the sample's largest margin error of a tie replaced by their float32
    scores (the shared ``scoring.recheck``, a pair a group of two that decides by its acceptable
    score strictly above its unacceptable one); ``rescore(rows)`` gives those of the pairs at
    positions ``rows``."""
    scores = scores.reset_index(drop=True)
    columns = ["acceptable_score", "unacceptable_score"]
    flat = scores[columns].to_numpy(dtype=np.float64).ravel()  # a pair's two scores side by side

    def rescore_scores(positions: np.ndarray) -> np.ndarray:
        rows = np.unique(positions // 2)
        both = rescore(rows)[columns].to_numpy(dtype=np.float64)
        return both[np.searchsorted(rows, positions // 2), positions % 2]

    checked, report = recheck_groups(
        flat, np.arange(len(flat)) // 2, rescore_scores, share, factor, decision="first_above_rest", unit="pairs"
    )
    out = scores.copy()
    out[columns] = checked.reshape(-1, 2)
    return out, report
