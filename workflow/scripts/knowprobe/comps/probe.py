"""COMPS's scores through the shared scorers: log p(property phrase | prefix) for the acceptable
and the unacceptable prefix of every pair (§3.2 of the paper, "scoring by premise").

Causal LMs sum the log-probabilities of the phrase's tokens after the prefix; masked LMs give the
conditional pseudo-log-likelihood (each phrase token masked in turn, the prefix and the rest of
the phrase visible; with ``within_word_l2r`` the later pieces of the same word are masked too).
Each distinct (prefix, phrase) text is scored once: a positive concept's sentence recurs in the
four pairs of its negatives, so about 60% of COMPS-BASE's texts are distinct. A causal model
also places the tokens several distinct texts begin with ("a robin" before each of its
properties) once, each text's later tokens attending to them (``CausalLM.conditional_logprob``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..scoring import MaskedLM, ScoringSettings

SCORE_COLUMNS = ["model", "subset", "id", "acceptable_score", "unacceptable_score"]


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


def score(
    scorer, model: str, stimuli: pd.DataFrame, within_word_l2r: bool = False, share_prefixes: bool = True
) -> pd.DataFrame:
    """Both prefixes' scores of every pair (``SCORE_COLUMNS``)."""
    n = len(stimuli)
    both = conditional_scores(
        scorer,
        list(stimuli["prefix_acceptable"]) + list(stimuli["prefix_unacceptable"]),
        list(stimuli["property_phrase"]) * 2,
        within_word_l2r,
        share_prefixes,
    )
    return pd.DataFrame(
        {
            "model": model,
            "subset": stimuli["subset"].to_numpy(),
            "id": stimuli["id"].to_numpy(dtype=np.int64),
            "acceptable_score": both[:n],
            "unacceptable_score": both[n:],
        }
    )[SCORE_COLUMNS]
