"""The BEAR format (lm-pub-quiz's ``Dataset``): a directory with ``metadata_relations.json``, which
maps each relation code to its ``templates`` (``[X]`` the subject, ``[Y]`` the object) and its answer
space (``answer_space_labels`` with ``answer_space_ids``), and one JSON-lines file ``CODE.jsonl`` per
relation, a line per instance: ``sub_id, sub_label, obj_id, obj_label, answer_idx`` (the object's
position in the answer space) and any further keys (BEAR's ``sub_aliases``).

:func:`read_dataset` imports such a directory into two tables (the ``bear_relations`` and
``bear_instances`` contracts), keeping every key it does not interpret as JSON text, so that
:func:`write_dataset` gives back the same files (key order aside: JSON objects are compared as
objects). Bad records are counted by file and reason and left out, never a crash: a relation
without its file, without an answer space or without a usable template; an instance line that is
not a JSON object, lacks a label, or whose object is not in the answer space.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from ..download import file_digest
from ..io import (
    INVALID_UTF8,
    MAX_TEXT_CHARACTERS,
    KnowprobeError,
    atomic_path,
    quoted,
    read_jsonl_lenient,
    too_long_text,
)
from ..prompts import template_problem

log = logging.getLogger(__name__)

METADATA_FILE = "metadata_relations.json"
RELATION_COLUMNS = [
    "relation",
    "templates",
    "answer_space_labels",
    "answer_space_ids",
    "metadata",
]
INSTANCE_COLUMNS = ["relation", "instance", "sub_id", "sub_label", "obj_id", "obj_label", "answer_idx", "extra"]
# the metadata keys read into columns; the others travel in ``metadata``
_METADATA_KEYS = ("templates", "answer_space_labels", "answer_space_ids")
_INSTANCE_KEYS = ("sub_id", "sub_label", "obj_id", "obj_label", "answer_idx")

REJECT_REASONS = {
    INVALID_UTF8: "the line is not UTF-8",
    "invalid_json": "the line is not a JSON object",
    "missing_label": "sub_label or obj_label missing or not a non-empty text",
    "too_long": f"a sub_label or obj_label longer than {MAX_TEXT_CHARACTERS:,} characters (no model takes it)",
    "not_in_answer_space": "the object (obj_id, else obj_label) is not in the relation's answer space",
    "answer_left_out": "the object is an answer left out of the answer space (null or too long)",
    "answer_idx_mismatch": "answer_idx names another answer than obj_id (else obj_label) does",
    "duplicate_line": "a line repeating an earlier line of its file exactly (the first is kept)",
    "duplicate_sub_id": "a line whose sub_id an earlier line of its file has, with another object (kept)",
    "no_file": "a relation of the metadata without its CODE.jsonl file",
    "no_metadata": "a CODE.jsonl file whose relation the metadata does not list",
    "no_answer_space": "a relation whose metadata gives no answer space (answer_space_labels and _ids)",
    "null_answer": "an answer of an answer space that is null or not a non-empty text (left out of it)",
    "too_long_answer": f"an answer longer than {MAX_TEXT_CHARACTERS:,} characters (left out of the answer space)",
    "duplicate_answer": "a label given twice in an answer space (the first kept; objects of the second read as it)",
    "bad_template": "a template without exactly one [X] and one [Y], or a templates value not a list (left out)",
    "no_template": "a relation left without a usable template",
}
# reasons counted that leave nothing out
KEPT_REASONS = frozenset({"duplicate_sub_id"})
REJECT_COLUMNS = ["file", "relation", "reason", "description", "n", "left_out", "first"]


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _reject(rejects: list, file: str, relation: str, reason: str, first: str, n: int = 1) -> None:
    """Count ``n`` records of ``reason``, ``first`` naming the first of them (a relation's
    template or answer, a line); a metadata reject is logged here (lines are logged as read)."""
    rejects.append(
        {
            "file": file,
            "relation": relation,
            "reason": reason,
            "description": REJECT_REASONS[reason],
            "n": n,
            "left_out": reason not in KEPT_REASONS,
            "first": first,
        }
    )
    if file == METADATA_FILE:
        log.warning("%s: %s: %s; %s", file, relation, first, "kept" if reason in KEPT_REASONS else "left out")


def read_metadata(path: Path) -> dict:
    try:
        metadata = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise KnowprobeError(f"{path}: file not found (not a BEAR-format directory?)") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise KnowprobeError(f"{path}: not a JSON file ({error})") from None
    if not isinstance(metadata, dict) or not all(isinstance(v, dict) for v in metadata.values()):
        raise KnowprobeError(f"{path}: expected an object mapping each relation code to its metadata object")
    return metadata


def read_relation_info(path: str | Path | None) -> dict[str, list[str]]:
    """Each relation's domains from ``relation_info.json`` (``{"P6": {"domains": [...]}}``); none
    without a file. Only the tables read them (``bear_tables``), so that a change of domains
    reruns the tables and not the scores."""
    if path is None:
        return {}
    try:
        info = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise KnowprobeError(f"{path}: file not found") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise KnowprobeError(f"{path}: not a JSON file ({error})") from None
    if not isinstance(info, dict):
        raise KnowprobeError(f"{path}: expected an object mapping relation codes to their information")
    domains = {}
    for code, entry in info.items():
        values = entry.get("domains") if isinstance(entry, dict) else None
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise KnowprobeError(f"{path}: {code}: 'domains' is not a list of texts")
        domains[code] = values
    return domains


def read_dataset(directory: str | Path) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """A BEAR-format directory as ``(relations, instances, rejects)``: the relations in the
    metadata's order, their instances in file order (``instance`` the line's position among the
    kept ones), and a table (``REJECT_COLUMNS``) of what was counted: per file, relation and
    reason, how many, whether they were left out and the first of them (a relation's template or
    answer, a line number). A directory that gives no instance at all is an error naming it."""
    directory = Path(directory)
    metadata = read_metadata(directory / METADATA_FILE)
    rejects: list[dict] = []
    files = {p.name.removesuffix(".jsonl"): p for p in directory.glob("*.jsonl")}
    for code in sorted(set(files) - set(metadata)):
        _reject(rejects, files[code].name, code, "no_metadata", f"{code}.jsonl")
    relations, instances = [], []
    for code, entry in metadata.items():
        if code not in files:
            _reject(rejects, METADATA_FILE, code, "no_file", f"no {code}.jsonl in {directory}")
            continue
        labels, ids = entry.get("answer_space_labels"), entry.get("answer_space_ids")
        if not (isinstance(labels, list) and isinstance(ids, list) and labels and len(labels) == len(ids)):
            _reject(rejects, METADATA_FILE, code, "no_answer_space", "answer_space_labels and _ids not two lists alike")
            continue
        templates = usable_templates(code, entry.get("templates"), rejects)
        if not templates:
            _reject(rejects, METADATA_FILE, code, "no_template", "no usable template")
            continue
        space = answer_space(code, labels, ids, rejects)
        if not space.labels:
            _reject(rejects, METADATA_FILE, code, "no_answer_space", "no usable answer in its answer space")
            continue
        rows, counts, firsts = read_instances(files[code], code, space)
        for reason, n in sorted(counts.items()):
            _reject(rejects, files[code].name, code, reason, firsts[reason], n)
        instances += rows
        relations.append(
            {
                "relation": code,
                "templates": templates,
                "answer_space_labels": space.labels,
                "answer_space_ids": space.ids,
                "metadata": _json({k: v for k, v in entry.items() if k not in _METADATA_KEYS}),
            }
        )
    if not instances:
        raise KnowprobeError(
            f"{directory}: no instance in any of its {len(files)} relation files (*.jsonl; "
            f"{sum(r['n'] for r in rejects if r['left_out'])} records left out): no BEAR data to probe"
        )
    log.info("%s: %d relations, %d instances", directory, len(relations), len(instances))
    return (
        pd.DataFrame(relations, columns=RELATION_COLUMNS),
        pd.DataFrame(instances, columns=INSTANCE_COLUMNS),
        pd.DataFrame(rejects, columns=REJECT_COLUMNS),
    )


def sample_instances(instances: pd.DataFrame, per_relation: int | None, seed: int) -> pd.DataFrame:
    """A seeded sample of at most ``per_relation`` instances of each relation (``bear.per_relation``;
    None keeps all): each relation's draw depends only on the seed and the relation's code (not on
    which other relations there are), the kept instances stay in file order with their numbers."""
    if per_relation is None:
        return instances
    import zlib

    kept = []
    for code, part in instances.groupby("relation", sort=False):
        if len(part) > per_relation:
            rng = np.random.default_rng([seed, zlib.crc32(str(code).encode())])
            part = part.iloc[np.sort(rng.choice(len(part), per_relation, replace=False))]
        kept.append(part)
    return pd.concat(kept, ignore_index=True) if kept else instances


def sample_note(per_relation: int | None, seed: int, kept: int) -> str:
    """The tables' words for a sample (empty without one)."""
    if per_relation is None:
        return ""
    return (
        f"; a seeded sample of BEAR: at most {per_relation} instances of each relation (bear.per_relation, seed "
        f"{seed}), {kept:,} in all, an estimate of the score over every instance, not the leaderboard's set"
    )


def usable_templates(code: str, templates, rejects: list) -> list[str]:
    """A relation's usable templates, each bad one counted by name (a ``templates`` value that
    is not a list is one bad field)."""
    if templates is None:
        return []
    if not isinstance(templates, list):
        _reject(rejects, METADATA_FILE, code, "bad_template", f"templates is a {type(templates).__name__}, not a list")
        return []
    usable = []
    for n, template in enumerate(templates):
        problem = template_problem(template)
        if problem is None and too_long_text(template):
            problem = f"template {n + 1} is {len(template):,} characters long"
        if problem is None:
            usable.append(template)
        else:
            first = problem if isinstance(template, str) else f"template {n + 1} is {template!r}"
            _reject(rejects, METADATA_FILE, code, "bad_template", f"template {n + 1}: {first}")
    return usable


class AnswerSpace(NamedTuple):
    """A relation's usable answers, and where each of the metadata's positions went: its new
    position, or None where the answer was left out (a label given twice maps to its first)."""

    labels: list[str]
    ids: list[str]
    given_ids: list[str]
    given_labels: list[str]
    position: list[int | None]


def answer_space(code: str, labels: list, ids: list, rejects: list) -> AnswerSpace:
    """The answer space with null, too long and repeated labels left out, each counted by name."""
    kept_labels, kept_ids, position, seen = [], [], [], {}
    for n, (label, answer_id) in enumerate(zip(labels, ids)):
        if not isinstance(label, str) or not label.strip():
            _reject(rejects, METADATA_FILE, code, "null_answer", f"answer {n + 1} ({answer_id!r}) is {label!r}")
            position.append(None)
        elif too_long_text(label):
            first = f"answer {n + 1} ({answer_id!r}) is {len(label):,} characters long: {quoted(label)}"
            _reject(rejects, METADATA_FILE, code, "too_long_answer", first)
            position.append(None)
        elif label in seen:
            first = f"answer {n + 1} ({answer_id!r}) repeats {quoted(label)}, answer {seen[label] + 1}"
            _reject(rejects, METADATA_FILE, code, "duplicate_answer", first)
            position.append(position[seen[label]])
        else:
            seen[label] = n
            position.append(len(kept_labels))
            kept_labels.append(label)
            kept_ids.append(str(answer_id))
    return AnswerSpace(kept_labels, kept_ids, [str(i) for i in ids], [str(x) for x in labels], position)


def read_instances(path: Path, code: str, space: AnswerSpace) -> tuple[list[dict], Counter, dict[str, str]]:
    """One relation's instance lines; the answer by ``answer_idx`` where a line gives it, else by
    ``obj_id``, else by ``obj_label`` (lm-pub-quiz joins the answer space on ``obj_id``), checked
    against the metadata's answer space and then placed in the usable one. Also the first line of
    each reason counted."""
    ids, labels = space.given_ids, space.given_labels
    by_id = {i: n for n, i in reversed(list(enumerate(ids)))}
    by_label = {x: n for n, x in reversed(list(enumerate(labels)))}
    seen_lines: set[str] = set()
    objects_of: dict[str, str] = {}

    def answer(record) -> int | None:
        if "obj_id" in record:
            return by_id.get(str(record["obj_id"]))
        return by_label.get(record["obj_label"])

    def problem(record):
        if not all(isinstance(record.get(k), str) and record[k].strip() for k in ("sub_label", "obj_label")):
            return "missing_label", REJECT_REASONS["missing_label"]
        for key in ("sub_label", "obj_label"):
            if too_long_text(record[key]):
                return "too_long", f"{key} is {len(record[key]):,} characters long: {quoted(record[key])}"
        found = answer(record)
        if found is None:
            return (
                "not_in_answer_space",
                f"object {record.get('obj_id', record['obj_label'])!r} not in the answer space",
            )
        given = record.get("answer_idx")
        if given is not None:
            index = _int(given)
            key, names = ("obj_id", ids) if "obj_id" in record else ("obj_label", labels)
            if not (0 <= index < len(ids) and names[index] == str(record[key])):
                return "answer_idx_mismatch", f"answer_idx {given!r} does not name {key} {record[key]!r}"
            found = index
        if space.position[found] is None:
            return "answer_left_out", f"object {ids[found]!r} is answer {found + 1}, left out of the answer space"
        line = _json(record)
        if line in seen_lines:
            return "duplicate_line", f"repeats an earlier line: {quoted(line)}"
        seen_lines.add(line)
        return None

    counts: Counter = Counter()
    left_out: list = []
    firsts: dict[str, str] = {}
    rows = []
    for number, record in read_jsonl_lenient(path, problem, counts, left_out):
        given = record.get("answer_idx")
        found = answer(record) if given is None else int(given)
        sub_id = str(record.get("sub_id", ""))
        obj = str(record.get("obj_id", record["obj_label"]))
        if sub_id and objects_of.setdefault(sub_id, obj) != obj:
            counts["duplicate_sub_id"] += 1
            firsts.setdefault("duplicate_sub_id", f"line {number}: sub_id {sub_id!r}")
            log.warning("%s:%d: sub_id %r again, with another object; kept", path, number, sub_id)
        rows.append(
            {
                "relation": code,
                "instance": len(rows),
                "sub_id": sub_id,
                "sub_label": record["sub_label"],
                "obj_id": str(record.get("obj_id", ids[found])),
                "obj_label": record["obj_label"],
                "answer_idx": int(space.position[found]),
                "extra": _json({k: v for k, v in record.items() if k not in _INSTANCE_KEYS}),
            }
        )
    for number, reason, _ in left_out:
        firsts.setdefault(reason, f"line {number}")
    return rows, counts, firsts


def _int(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else -1


def write_dataset(relations: pd.DataFrame, instances: pd.DataFrame, directory: str | Path) -> list[Path]:
    """Write the tables :func:`read_dataset` gives (or :mod:`knowprobe.bear.export` builds) as a
    BEAR-format directory that lm-pub-quiz's ``Dataset.from_path`` loads; the files written."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    metadata, written = {}, []
    by_relation = dict(tuple(instances.groupby("relation", sort=False)))
    for row in relations.itertuples(index=False):
        metadata[row.relation] = {
            **json.loads(row.metadata or "{}"),
            "templates": list(row.templates),
            "answer_space_labels": list(row.answer_space_labels),
            "answer_space_ids": list(row.answer_space_ids),
        }
        lines = []
        part = by_relation.get(row.relation, instances.iloc[:0]).sort_values("instance", kind="stable")
        for record in part.itertuples(index=False):
            line = {
                "sub_id": record.sub_id,
                "sub_label": record.sub_label,
                **json.loads(record.extra or "{}"),
                "obj_id": record.obj_id,
                "obj_label": record.obj_label,
                "answer_idx": int(record.answer_idx),
            }
            lines.append(json.dumps(line, ensure_ascii=False) + "\n")
        path = directory / f"{row.relation}.jsonl"
        with atomic_path(path) as tmp:
            tmp.write_text("".join(lines), encoding="utf-8")
        written.append(path)
    with atomic_path(directory / METADATA_FILE) as tmp:
        tmp.write_text(json.dumps(metadata, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return [directory / METADATA_FILE, *written]


def verify_digest(path: str | Path, expected: str, source: str) -> None:
    """Check one file's SHA-256 against ``expected`` (from ``source``, a config key)."""
    actual = file_digest(path, "sha256")
    if actual != expected:
        raise KnowprobeError(
            f"{path}: sha256 {actual} does not match {expected} ({source}); delete it to download it anew"
        )
    log.info("%s: sha256 verified", path)
