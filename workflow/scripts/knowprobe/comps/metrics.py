"""COMPS's measure: a pair is right when the acceptable prefix gives the property phrase a
strictly higher log-probability than the unacceptable one (a tie is wrong: the model does not
tell the concepts apart). Accuracy is the share of right pairs, in percent; chance is 50. A pair
the model could not score (``left_out``: too long for it, a phrase without tokens for it) is in
no accuracy and counted apart, per group."""

from __future__ import annotations

import pandas as pd

CHANCE = 50.0


def correct(scores: pd.DataFrame) -> pd.Series:
    return scores["acceptable_score"] > scores["unacceptable_score"]


def accuracy(scored: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Accuracy (%) over the pairs scored (``pairs``), and the pairs left out (``left_out``: the
    model could not score them), per group of ``by``."""
    missing = scored[["acceptable_score", "unacceptable_score"]].isna().any(axis=1)
    if "left_out" in scored:
        missing |= scored["left_out"].fillna("").ne("")
    frame = scored.assign(correct=correct(scored).astype(float).where(~missing), missing=missing)
    out = (
        frame.groupby(by, sort=False)
        .agg(pairs=("correct", "count"), accuracy=("correct", "mean"), left_out=("missing", "sum"))
        .reset_index()
    )
    out["accuracy"] = 100.0 * out["accuracy"]
    out["left_out"] = out["left_out"].astype(int)
    return out


# why a pair is left out for one model (comps.probe), named in its log and the tables' footnotes
LEFT_OUT_REASONS = {
    "too_long": "a prefix with the phrase is longer than the model takes (scoring.max_length or its positions)",
    "no_tokens": "the property phrase has no token of its own for the model's tokenizer",
    "no_context": "a prefix with no token for a causal model without a start token",
}
