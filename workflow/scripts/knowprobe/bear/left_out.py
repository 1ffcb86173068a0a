"""What a model could not take in BEAR (``probe.leave_out``): the reasons and the one line that
states them, in the probe's log and the tables' notes (pandas only, so that the tables' job needs
no torch)."""

from __future__ import annotations

import pandas as pd

# why a model cannot take a statement (the scorers' ``statement_problems``), and what follows
LEFT_OUT_REASONS = {
    "too_long": "statements longer than the model takes (scoring.max_length or its positions)",
    "no_tokens": "statements whose answer (with conditional; else the whole text) has no token of its own",
    "mask_token": "statements holding the masked model's own mask token (in a subject, an answer or a template)",
    "gold_left_out": "(instance, template) pairs left out whole: the right answer's statement was left out",
}
LEFT_OUT_COLUMNS = ["reason", "description", "n", "example"]


def left_out_line(left_out: pd.DataFrame) -> str:
    """What a model left out, as one line for the log and the tables' notes."""
    if not len(left_out):
        return "nothing left out"
    return "; ".join(f"{row.n:,} {row.description} (first: {row.example})" for row in left_out.itertuples())
