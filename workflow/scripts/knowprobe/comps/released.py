"""The authors' released stimuli (github.com/kanishkamisra/comps, ``data/comps/``): one JSON line
per minimal pair, with (at least) ``id, property, acceptable_concept, unacceptable_concept,
prefix_acceptable, prefix_unacceptable, property_phrase, similarity`` and the negative's kind as
``negative_sample_type`` or, as the authors' README calls it, ``condition``; the WUGS files add
the nonce words and ``distraction_type``. Other fields are kept out of the contract, not rejected.

Two layouts are read:

- the README's: ``comps_base.jsonl``, ``comps_wugs.jsonl`` and one ``comps_wugs_dist.jsonl`` whose
  ``distraction_type`` says where the distractor stands (``before`` or ``close``; ``in-between``
  or ``far``);
- four files: ``comps_base.jsonl``, ``comps_wugs.jsonl``, ``comps_wugs_dist-before.jsonl`` and
  ``comps_wugs_dist-in-between.jsonl``, the subset given by the file.

A line of ``comps_wugs.jsonl`` whose ``distraction_type`` names a distractor's place goes to that
WUGS-DIST subset too. A line that is not such a record is counted by file and reason and left
out, never a crash.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from pathlib import Path

import pandas as pd

from ..io import INVALID_UTF8, KnowprobeError, read_jsonl_lenient
from .builder import STIMULUS_COLUMNS, SUBSETS

log = logging.getLogger(__name__)

BASE_FILE, WUGS_FILE, DIST_FILE = "comps_base.jsonl", "comps_wugs.jsonl", "comps_wugs_dist.jsonl"
SPLIT_DIST_FILES = {
    "wugs_dist_before": "comps_wugs_dist-before.jsonl",
    "wugs_dist_in_between": "comps_wugs_dist-in-between.jsonl",
}
# distraction_type -> subset (the README says "close (before) and far (in-between)")
DISTRACTION_TYPES = {
    "base": "wugs",
    "before": "wugs_dist_before",
    "close": "wugs_dist_before",
    "in-between": "wugs_dist_in_between",
    "in_between": "wugs_dist_in_between",
    "far": "wugs_dist_in_between",
}
KIND_FIELDS = ("negative_sample_type", "condition")  # the file's name for it, and the README's
TEXT_FIELDS = (
    "property",
    "acceptable_concept",
    "unacceptable_concept",
    "prefix_acceptable",
    "prefix_unacceptable",
    "property_phrase",
)
REJECT_REASONS = {
    INVALID_UTF8: "the line is not UTF-8",
    "invalid_json": "the line is not a JSON object",
    "missing_field": "a field of the release is missing",
    "bad_type": "a field of the wrong type (an id not an integer, an empty text, a similarity not a number)",
    "duplicate_id": "an id already given to another pair of the same subset in the same file; the first is kept",
    "duplicate_record": "a whole record (texts, negative kind and all) repeated in the same subset; the first is kept",
    "unknown_distraction_type": "a WUGS-DIST line whose distraction_type is not before/close or in-between/far",
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


def negative_kind(record: dict):
    return next((record[key] for key in KIND_FIELDS if key in record), None)


def problem(record: dict) -> str | None:
    """Why a released line (a JSON object) is left out, or None."""
    if any(key not in record for key in ("id", *TEXT_FIELDS, "similarity")) or negative_kind(record) is None:
        return "missing_field"
    if not isinstance(record["id"], int) or isinstance(record["id"], bool):
        return "bad_type"
    if any(not isinstance(record[key], str) or not record[key].strip() for key in TEXT_FIELDS):
        return "bad_type"
    kind = negative_kind(record)
    if not isinstance(kind, str) or not kind.strip():
        return "bad_type"
    similarity = record["similarity"]
    if similarity is not None and (not isinstance(similarity, (int, float)) or isinstance(similarity, bool)):
        return "bad_type"
    return None


def subset_of(record: dict, default: str | None) -> str | None:
    """The subset a line belongs to: its distraction_type where it names one, else the file's."""
    kind = record.get("distraction_type")
    if isinstance(kind, str) and kind.strip().lower() in DISTRACTION_TYPES:
        return DISTRACTION_TYPES[kind.strip().lower()]
    return default


# what makes a record the same record: all of it but its id (two negative kinds that chose the
# same concept give two pairs of the same texts: COMPS's four pairs per positive)
RECORD_FIELDS = (*TEXT_FIELDS, "negative_sample_type", "similarity", "nonce_words")


class Seen:
    """What the files of one release have given so far, per subset: each id's file and line, and
    every record (without its id), so that a repeat is told across files too."""

    def __init__(self):
        self.ids: dict[tuple[str, int], tuple[str, int]] = {}  # (subset, id) -> (file, line)
        self.records: set[tuple] = set()


def record_key(row: dict) -> tuple:
    similarity = None if math.isnan(row["similarity"]) else row["similarity"]
    return (row["subset"], *(row[key] for key in RECORD_FIELDS if key != "similarity"), similarity)


def read_file(
    path: Path, default_subset: str | None, by_distraction_type: bool = True, seen: Seen | None = None
) -> tuple[pd.DataFrame, Counter]:
    """One released file's lines: in ``default_subset``, or where ``by_distraction_type``, in the
    subset a line's distraction_type names (a line naming none, with no default, is a counted
    reject). ``seen``: what the release's other files gave (an id of a subset given to another
    pair in another file is an error naming both files: the release contradicts itself)."""
    rows, rejects = [], Counter()
    seen = Seen() if seen is None else seen

    def row_of(record):
        similarity = record["similarity"]
        subset = subset_of(record, default_subset) if by_distraction_type else default_subset
        return {
            "subset": subset,
            **{key: record[key] for key in ("id", *TEXT_FIELDS)},
            "negative_sample_type": negative_kind(record),
            "similarity": math.nan if similarity is None else float(similarity),
            "nonce_words": nonce_words(record),
            "origin": "released",
        }

    def check(record):
        reason = problem(record)
        if reason is None:
            row = row_of(record)
            given = seen.ids.get((row["subset"], row["id"]))
            if row["subset"] is None:
                reason = "unknown_distraction_type"
            elif record_key(row) in seen.records:
                reason = "duplicate_record"
            elif given is not None and given[0] == path.name:
                reason = "duplicate_id"
        return None if reason is None else (reason, REJECT_REASONS[reason])

    for number, record in read_jsonl_lenient(path, check, rejects):
        row = row_of(record)
        given = seen.ids.get((row["subset"], row["id"]))
        if given is not None:
            raise KnowprobeError(
                f"{path}:{number}: id {row['id']} of {row['subset']} is another pair's in {given[0]}:{given[1]}; the "
                "release contradicts itself (give each pair of a subset its own id)"
            )
        seen.ids[(row["subset"], row["id"])] = (path.name, number)
        seen.records.add(record_key(row))
        rows.append(row)
    return pd.DataFrame(rows, columns=STIMULUS_COLUMNS), rejects


def release_files(directory: Path) -> dict[str, str | None]:
    """The files of the release's layout found in ``directory``, each with its subset: of every
    line in the split WUGS-DIST files, of lines without a distraction_type in the others."""
    missing = [name for name in (BASE_FILE, WUGS_FILE) if not (directory / name).is_file()]
    if missing:
        raise KnowprobeError(f"{directory}: no {missing[0]} among the released files")
    files = {BASE_FILE: "base", WUGS_FILE: "wugs"}
    split = [(directory / name).is_file() for name in SPLIT_DIST_FILES.values()]
    if (directory / DIST_FILE).is_file():
        if any(split):
            raise KnowprobeError(
                f"{directory}: both {DIST_FILE} and {' / '.join(SPLIT_DIST_FILES.values())}: "
                "give one layout of WUGS-DIST"
            )
        return files | {DIST_FILE: None}
    if not all(split):
        names = [name for name, present in zip(SPLIT_DIST_FILES.values(), split) if not present]
        raise KnowprobeError(f"{directory}: no {DIST_FILE} and no {names[0]} among the released files (WUGS-DIST)")
    return files | {name: subset for subset, name in SPLIT_DIST_FILES.items()}


def read_release(directory: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every subset's released stimuli, and a table ``file, reason, description, n`` of the lines
    left out. A file that gives no pair, or a subset without pairs, is one error naming the file:
    a table of the release without it would describe a part of the release as if it were all."""
    directory = Path(directory)
    frames, counts, seen = [], [], Seen()
    files = release_files(directory)
    for name, subset in files.items():
        frame, rejects = read_file(
            directory / name, subset, by_distraction_type=name in (WUGS_FILE, DIST_FILE), seen=seen
        )
        log.info(
            "%s: %d pairs (%s; %d lines left out)",
            name,
            len(frame),
            ", ".join(f"{k} {v}" for k, v in frame["subset"].value_counts().sort_index().items()),
            sum(rejects.values()),
        )
        if frame.empty:
            raise KnowprobeError(f"{directory / name}: no pairs ({left_out(rejects) or 'an empty file'})")
        frames.append(frame)
        counts += [
            {"file": name, "reason": r, "description": REJECT_REASONS[r], "n": n} for r, n in sorted(rejects.items())
        ]
    stimuli = pd.concat(frames, ignore_index=True)
    for subset in SUBSETS:
        if not (stimuli["subset"] == subset).any():
            name = next(name for name, default in files.items() if default in (subset, None))
            kinds = " or ".join(kind for kind, to in DISTRACTION_TYPES.items() if to == subset)
            why = (
                "every line names a distractor's place"
                if name == WUGS_FILE
                else f"no line's distraction_type is {kinds}"
            )
            raise KnowprobeError(f"{directory / name}: no pairs of {subset} ({why})")
    return stimuli, pd.DataFrame(counts, columns=["file", "reason", "description", "n"])


def left_out(rejects: Counter) -> str:
    """``"28 lines left out: invalid_utf8 28"``, or empty where none were."""
    if not rejects:
        return ""
    return f"{sum(rejects.values())} lines left out: " + ", ".join(f"{r} {n}" for r, n in sorted(rejects.items()))
