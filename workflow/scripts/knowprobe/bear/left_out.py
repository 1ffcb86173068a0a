"""What a model could not take in BEAR (``probe.leave_out``): the reasons, for the probe's log
and the tables' notes (no torch here, so that the tables' job needs none)."""

from __future__ import annotations

from ..io import left_out_line  # noqa: F401 (the probe's line, shared with the other probes)

# why a model cannot take a statement (the scorers' ``statement_problems``), and what follows
LEFT_OUT_REASONS = {
    "too_long": "statements longer than the model takes (scoring.max_length or its positions)",
    "no_tokens": "statements whose answer (with conditional; else the whole text) has no token of its own",
    "mask_token": "statements holding the masked model's own mask token (in a subject, an answer or a template)",
    "gold_left_out": "(instance, template) pairs left out whole: the right answer's statement was left out",
}
LEFT_OUT_COLUMNS = ["reason", "description", "n", "example"]
