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

from ..download import file_digest
from ..io import INVALID_UTF8, KnowprobeError, read_jsonl_lenient, text_lines
from ..prompts import prompt_table, template_problem

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
    known = None if relations is None else set(relations)
    rows, dropped, counts = [], [], Counter()
    for path in files:
        relation = path.name.split(".")[0]
        if known is not None and relation not in known:
            lines = [(number, line) for number, line in text_lines(path) if line is None or line.strip()]
            log.warning(
                "%s: %s is not a relation of LAMA (relations.jsonl) nor of lpaqa.google_re_relations; "
                "its %d lines left out",
                path,
                relation,
                len(lines),
            )
            counts["unknown_relation"] += len(lines)
            dropped += [(relation, number, line or "", "unknown_relation") for number, line in lines]
            continue
        patterns, left_out = read_file(path, counts)
        if not patterns:
            log.warning("%s: no pattern of %s", path, relation)
        dropped += [(relation, number, text or "", reason) for number, reason, text in left_out]
        rows += [
            {"relation": relation, "template": pattern, "source": SOURCE, "rank": rank, "score": float("nan")}
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


def read_checksums(path: str | Path) -> dict[str, str]:
    """A sha256sum listing (``<hash>  <file>`` lines, the file relative to the unpacked folder);
    a line of another shape is one error naming the file and line."""
    listed = {}
    for number, line in text_lines(path):
        if line is None:
            raise KnowprobeError(f"{path}:{number}: not UTF-8")
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 2 or len(parts[0]) != 64 or not all(c in "0123456789abcdef" for c in parts[0].lower()):
            raise KnowprobeError(f"{path}:{number}: not a '<sha256>  <file>' line")
        listed[parts[1]] = parts[0].lower()
    if not listed:
        raise KnowprobeError(f"{path}: no '<sha256>  <file>' line")
    return listed


def verify_patterns(directory: str | Path, checksums: str | Path) -> int:
    """Check ParaRel's unpacked folder against the listing: each listed file present with its
    SHA-256, and no ``graphs_json/P*.jsonl`` the listing lacks (else this is not the pinned
    commit's data). A difference is one error naming the file; returns the files checked."""
    directory = Path(directory)
    listed = read_checksums(checksums)
    for name, digest in sorted(listed.items()):
        path = directory / name
        if not path.is_file():
            raise KnowprobeError(f"{directory}: {name} missing (the listing {checksums} names it)")
        found = file_digest(path, "sha256")
        if found != digest:
            raise KnowprobeError(f"{path}: sha256 {found} does not match {digest} from {checksums}")
    extra = sorted(
        str(path.relative_to(directory))
        for path in (directory / FOLDER).glob("P*.jsonl")
        if str(path.relative_to(directory)) not in listed
    )
    if extra:
        raise KnowprobeError(f"{directory}: {', '.join(extra)} not in the listing {checksums}")
    log.info("%s: %d files match %s", directory, len(listed), checksums)
    return len(listed)
