"""ParaRel's patterns (Elazar et al., Measuring and Improving Consistency in Pretrained Language
Models, TACL 2021; github.com/yanaiela/pararel, ``data/pattern_data/graphs_json/P*.jsonl``) as
the prompt set ``pararel``: per T-REx relation a family of paraphrased patterns, one JSON object
a line (``{"pattern", "lemma", "extended_lemma", "tense"}``), with LAMA's ``[X]``/``[Y]`` slots.

A pattern is a template as it is given, less the spaces around it (some patterns end in a
space); file order is its rank; ParaRel gives no weight, so the score is NaN.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from ..download import verify_manifest
from ..io import INVALID_UTF8, KnowprobeError, read_jsonl_lenient
from ..prompts import prompt_table, template_problem
from .release import read_relation_files

log = logging.getLogger(__name__)

FOLDER = "graphs_json"  # under ParaRel's data/pattern_data/
SOURCE = "pararel"
REJECT_REASONS = {
    INVALID_UTF8: "the line is not UTF-8",
    "invalid_json": "a line that is not a JSON object",
    "not_a_pattern": "a JSON object without a pattern string",
    "bad_template": "a pattern without exactly one [X] and one [Y]",
    "duplicate": "a pattern already given for the relation; the first is kept",
    "unknown_relation": "a relation LAMA lacks (not in relations.jsonl nor lpaqa.google_re_relations): never probed",
}
DROPPED_COLUMNS = ["relation", "line", "template", "reason"]


def read_file(path: Path, counts: Counter) -> tuple[list[str], list[tuple[int, str, str | None]]]:
    """One relation's patterns in file order, and its lines left out (``line, reason, text``),
    counted by reason in ``counts``."""
    seen, left_out = set(), []

    def problem(record):
        pattern = record.get("pattern")
        if not isinstance(pattern, str):
            return "not_a_pattern", "not a ParaRel pattern record ({'pattern': str, ...})"
        pattern = pattern.strip()
        if template_problem(pattern):
            return "bad_template", template_problem(pattern)
        if pattern in seen:
            return "duplicate", f"pattern {pattern!r} given again"
        seen.add(pattern)
        return None

    patterns = [record["pattern"].strip() for _, record in read_jsonl_lenient(path, problem, counts, left_out)]
    return patterns, left_out


def read_patterns(directory: str | Path, relations: Iterable[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """ParaRel's ``graphs_json`` folder under ``directory`` (its ``data/pattern_data``) as the
    prompt set ``pararel`` (contract PROMPTS; rank: file order; score: NaN), and the lines left
    out (``relation, line, template, reason``, the reasons of ``REJECT_REASONS``), each named by
    file and line in the log. ``relations``: those LAMA has; a file of another relation is left
    out, each of its non-empty lines counted as ``unknown_relation``."""
    folder = Path(directory) / FOLDER
    files = sorted(folder.glob("P*.jsonl"))
    if not files:
        raise KnowprobeError(f"{folder}: no P*.jsonl files (ParaRel's data/pattern_data/{FOLDER})")
    counts = Counter()
    read, dropped = read_relation_files(files, relations, read_file, counts)
    rows = [
        {"relation": relation, "template": pattern, "source": SOURCE, "rank": rank, "score": float("nan")}
        for relation, patterns in read
        for rank, pattern in enumerate(patterns)
    ]
    table = prompt_table(rows)
    log.info(
        "pararel: %d patterns of %d relations from %s (%d files); %d lines left out (%s)",
        len(table),
        table["relation"].nunique(),
        folder,
        len(files),
        len(dropped),
        ", ".join(f"{reason} {n}" for reason, n in sorted(counts.items())) or "none",
    )
    return table, pd.DataFrame(dropped, columns=DROPPED_COLUMNS)


def verify_patterns(directory: str | Path, checksums: str | Path) -> int:
    """Check ParaRel's unpacked folder against the listing: each listed file present with its
    SHA-256, and no ``graphs_json/P*.jsonl`` the listing lacks (else this is not the pinned
    commit's data). A difference is one error naming the file; returns the files checked."""
    return verify_manifest(directory, checksums, unlisted=f"{FOLDER}/P*.jsonl")
