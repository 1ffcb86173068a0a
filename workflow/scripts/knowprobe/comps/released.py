"""The authors' released stimuli (github.com/kanishkamisra/comps, ``data/comps/``): one JSON line
per minimal pair in ``comps_base.jsonl``, ``comps_wugs.jsonl``, ``comps_wugs_dist-before.jsonl``
and ``comps_wugs_dist-in-between.jsonl``, with (at least) ``id, property, acceptable_concept,
unacceptable_concept, prefix_acceptable, prefix_unacceptable, property_phrase,
negative_sample_type, similarity``; the WUGS files add the nonce words and ``distraction_type``.
Other fields are kept out of the contract, not rejected.

A line that is not such a record is counted by file and reason and left out, never a crash.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from pathlib import Path

import pandas as pd

from ..io import KnowprobeError, read_jsonl_lenient
from .builder import STIMULUS_COLUMNS

log = logging.getLogger(__name__)

FILES = {
    "base": "comps_base.jsonl",
    "wugs": "comps_wugs.jsonl",
    "wugs_dist_before": "comps_wugs_dist-before.jsonl",
    "wugs_dist_in_between": "comps_wugs_dist-in-between.jsonl",
}
TEXT_FIELDS = (
    "property",
    "acceptable_concept",
    "unacceptable_concept",
    "prefix_acceptable",
    "prefix_unacceptable",
    "property_phrase",
    "negative_sample_type",
)
REJECT_REASONS = {
    "invalid_json": "the line is not a JSON object",
    "missing_field": "a field of the release is missing",
    "bad_type": "a field of the wrong type (an id not an integer, an empty text, a similarity not a number)",
    "duplicate_id": "an id already seen in the same file; the first is kept",
}


def nonce_words(record: dict) -> str:
    """The nonce words of a WUGS line, as the builder writes them ("wug", or "wug dax")."""
    for key in ("nonce_words", "nonsense_words"):
        value = record.get(key)
        if isinstance(value, list) and all(isinstance(w, str) for w in value):
            return " ".join(value)
        if isinstance(value, str):
            return value
    return ""


def problem(record: dict) -> str | None:
    """Why a released line (a JSON object) is left out, or None."""
    if any(key not in record for key in ("id", *TEXT_FIELDS, "similarity")):
        return "missing_field"
    if not isinstance(record["id"], int) or isinstance(record["id"], bool):
        return "bad_type"
    if any(not isinstance(record[key], str) or not record[key].strip() for key in TEXT_FIELDS):
        return "bad_type"
    similarity = record["similarity"]
    if similarity is not None and (not isinstance(similarity, (int, float)) or isinstance(similarity, bool)):
        return "bad_type"
    return None


def read_file(path: Path, subset: str) -> tuple[pd.DataFrame, Counter]:
    rows, rejects, ids = [], Counter(), set()

    def check(record):
        reason = problem(record) or ("duplicate_id" if record["id"] in ids else None)
        return None if reason is None else (reason, REJECT_REASONS[reason])

    for _, record in read_jsonl_lenient(path, check, rejects):
        ids.add(record["id"])
        similarity = record["similarity"]
        rows.append(
            {
                "subset": subset,
                **{key: record[key] for key in ("id", *TEXT_FIELDS)},
                "similarity": math.nan if similarity is None else float(similarity),
                "nonce_words": nonce_words(record),
                "origin": "released",
            }
        )
    return pd.DataFrame(rows, columns=STIMULUS_COLUMNS), rejects


def read_release(directory: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every subset's released stimuli, and a table ``file, reason, description, n`` of the lines
    left out."""
    directory = Path(directory)
    frames, counts = [], []
    for subset, name in FILES.items():
        path = directory / name
        if not path.is_file():
            raise KnowprobeError(f"{directory}: no {name} among the released files")
        frame, rejects = read_file(path, subset)
        log.info("%s: %d pairs from %s (%d lines left out)", subset, len(frame), path, sum(rejects.values()))
        frames.append(frame)
        counts += [
            {"file": name, "reason": r, "description": REJECT_REASONS[r], "n": n} for r, n in sorted(rejects.items())
        ]
    return pd.concat(frames, ignore_index=True), pd.DataFrame(counts, columns=["file", "reason", "description", "n"])
