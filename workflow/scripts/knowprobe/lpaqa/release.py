"""LPAQA's released prompts (github.com/jzbjyb/LPAQA, ``prompt/``) as prompt sets of their own, so
that knowprobe's ensembles can be run on the paper's own prompts and told apart from its mining.

- ``prompt/mine/P*.jsonl``: the mined prompts (``{"template", "weight"}``; the weight is LPAQA's
  Opti weight for BERT-base);
- ``prompt/paraphrase/P*.jsonl``: paraphrases of each relation's top mined prompt (Mine+Para);
- ``prompt/manual_paraphrase/P*.txt``: the manual prompt and its paraphrases, one a line (Man+Para).
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from ..io import INVALID_UTF8, KnowprobeError, read_jsonl_lenient, read_text_lenient, text_lines
from ..prompts import prompt_table, template_problem

log = logging.getLogger(__name__)

FOLDERS = {"lpaqa_mine": "mine", "lpaqa_paraphrase": "paraphrase", "lpaqa_manual_paraphrase": "manual_paraphrase"}
REJECT_REASONS = {
    INVALID_UTF8: "the line is not UTF-8",
    "invalid_json": "a line of a .jsonl file that is not a JSON object",
    "not_a_prompt": "a JSON object without a template string, or with a weight that is not a number",
    "bad_template": "a template without exactly one [X] and one [Y]",
    "duplicate": "a template already given for the relation; the first is kept",
    "unknown_relation": "a relation LAMA lacks (not in relations.jsonl nor lpaqa.google_re_relations): never probed",
}
DROPPED_COLUMNS = ["relation", "line", "template", "reason"]


def read_file(path: Path, counts: Counter) -> tuple[list[tuple[str, float]], list[tuple[int, str, str | None]]]:
    """One file's prompts in order (template, LPAQA's weight or NaN), and its lines left out
    (``line, reason, text``), counted by reason in ``counts``."""
    seen, left_out = set(), []

    def template_of(template):
        if template_problem(template):
            return "bad_template", template_problem(template)
        if template in seen:
            return "duplicate", f"template {template!r} given again"
        return None

    def record_problem(record):
        template, weight = record.get("template"), record.get("weight", math.nan)
        if not isinstance(template, str) or isinstance(weight, bool) or not isinstance(weight, (int, float)):
            return "not_a_prompt", "not a prompt record ({'template': str, 'weight': number})"
        return template_of(template)

    if path.suffix == ".jsonl":
        lines = read_jsonl_lenient(path, record_problem, counts, left_out)
        found = ((record["template"], float(record.get("weight", math.nan))) for _, record in lines)
    else:
        found = ((template, math.nan) for _, template in read_text_lenient(path, template_of, counts, left_out))
    prompts = []
    for template, weight in found:  # each template seen before the next line is checked
        seen.add(template)
        prompts.append((template, weight))
    return prompts, left_out


def read_relation_files(
    files: Iterable[Path], relations: Iterable[str] | None, read_file, counts: Counter
) -> tuple[list[tuple[str, list]], list[tuple[str, int, str, str]]]:
    """Files of one prompt per line, one file a relation (``P17.jsonl``: the relation is the name's
    stem), each read with ``read_file(path, counts) -> (prompts, left_out)``, where ``left_out``
    holds ``(line, reason, text)``: the prompts per relation in file order, and every line left out
    as ``(relation, line, template, reason)``. ``relations``: those LAMA has; a file of another
    relation is left out, each of its non-empty lines counted as ``unknown_relation`` (it would
    never be probed)."""
    known = None if relations is None else set(relations)
    read, dropped = [], []
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
        prompts, left_out = read_file(path, counts)
        if not prompts:
            log.warning("%s: no prompt of %s", path, relation)
        dropped += [(relation, number, text or "", reason) for number, reason, text in left_out]
        read.append((relation, prompts))
    return read, dropped


def read_folder(
    directory: str | Path, prompt_set: str, relations: Iterable[str] | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One released folder as a prompt set (file order is rank; score: LPAQA's weight, NaN for
    the .txt files), and the lines left out (``relation, line, template, reason``, the reasons
    of ``REJECT_REASONS``), read as every released file is (``io.read_jsonl_lenient``,
    ``io.read_text_lenient``): a line that is not UTF-8, not a prompt, or a repeat is counted,
    named by file and line in the log, and left out; a byte-order mark is read as nothing.
    ``relations``: those LAMA has; a file of another relation is left out, each of its lines
    counted as ``unknown_relation``."""
    folder = Path(directory) / FOLDERS[prompt_set]
    files = sorted(folder.glob("P*.jsonl")) + sorted(folder.glob("P*.txt"))
    if not files:
        raise KnowprobeError(f"{folder}: no P*.jsonl or P*.txt files (LPAQA's prompt/{FOLDERS[prompt_set]})")
    counts = Counter()
    read, dropped = read_relation_files(files, relations, read_file, counts)
    rows = []
    for relation, prompts in read:
        rows += [
            {
                "relation": relation,
                "template": template,
                "source": f"lpaqa-{FOLDERS[prompt_set]}",
                "rank": rank,
                "score": weight,
            }
            for rank, (template, weight) in enumerate(prompts)
        ]
    table = prompt_table(rows)
    log.info(
        "%s: %d prompts of %d relations from %s; %d lines left out (%s)",
        prompt_set,
        len(table),
        table["relation"].nunique(),
        folder,
        len(dropped),
        ", ".join(f"{reason} {n}" for reason, n in sorted(counts.items())) or "none",
    )
    return table, pd.DataFrame(dropped, columns=DROPPED_COLUMNS)
