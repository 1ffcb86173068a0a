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

import pandas as pd

from ..download import file_digest
from ..io import INVALID_UTF8, KnowprobeError, atomic_path, read_jsonl_lenient
from ..prompts import template_problem

log = logging.getLogger(__name__)

METADATA_FILE = "metadata_relations.json"
RELATION_COLUMNS = [
    "relation",
    "templates",
    "answer_space_labels",
    "answer_space_ids",
    "domains",
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
    "not_in_answer_space": "the object (obj_id, else obj_label) is not in the relation's answer space",
    "answer_idx_mismatch": "answer_idx names another answer than obj_id (else obj_label) does",
    "no_file": "a relation of the metadata without its CODE.jsonl file",
    "no_metadata": "a CODE.jsonl file whose relation the metadata does not list",
    "no_answer_space": "a relation whose metadata gives no answer space (answer_space_labels and _ids)",
    "bad_template": "a template without exactly one [X] and one [Y] (the template is left out)",
    "no_template": "a relation left without a usable template",
}


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _reject(rejects: list, file: str, reason: str, n: int = 1) -> None:
    rejects.append({"file": file, "reason": reason, "description": REJECT_REASONS[reason], "n": n})


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
    without a file."""
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


def read_dataset(
    directory: str | Path, relation_info: str | Path | None = None
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """A BEAR-format directory as ``(relations, instances, rejects)``: the relations in the
    metadata's order, their instances in file order (``instance`` the line's position among the
    kept ones), and a table ``file, reason, description, n`` of what was left out."""
    directory = Path(directory)
    metadata = read_metadata(directory / METADATA_FILE)
    domains = read_relation_info(relation_info)
    rejects: list[dict] = []
    files = {p.name.removesuffix(".jsonl"): p for p in directory.glob("*.jsonl")}
    for code in sorted(set(files) - set(metadata)):
        _reject(rejects, files[code].name, "no_metadata")
    relations, instances = [], []
    for code, entry in metadata.items():
        if code not in files:
            _reject(rejects, METADATA_FILE, "no_file")
            continue
        labels, ids = entry.get("answer_space_labels"), entry.get("answer_space_ids")
        if not (isinstance(labels, list) and isinstance(ids, list) and labels and len(labels) == len(ids)):
            _reject(rejects, METADATA_FILE, "no_answer_space")
            continue
        templates = [t for t in entry.get("templates") or [] if template_problem(t) is None]
        if len(templates) < len(entry.get("templates") or []):
            _reject(rejects, METADATA_FILE, "bad_template", len(entry.get("templates") or []) - len(templates))
        if not templates:
            _reject(rejects, METADATA_FILE, "no_template")
            continue
        rows, counts = read_instances(files[code], code, [str(i) for i in ids], [str(x) for x in labels])
        for reason, n in sorted(counts.items()):
            _reject(rejects, files[code].name, reason, n)
        instances += rows
        relations.append(
            {
                "relation": code,
                "templates": templates,
                "answer_space_labels": [str(x) for x in labels],
                "answer_space_ids": [str(i) for i in ids],
                "domains": domains.get(code, []),
                "metadata": _json({k: v for k, v in entry.items() if k not in _METADATA_KEYS}),
            }
        )
    missing = [r["relation"] for r in relations if relation_info is not None and r["relation"] not in domains]
    if missing:
        log.warning("%s: no domains for %d relations (%s)", relation_info, len(missing), ", ".join(missing[:5]))
    log.info("%s: %d relations, %d instances", directory, len(relations), len(instances))
    return (
        pd.DataFrame(relations, columns=RELATION_COLUMNS),
        pd.DataFrame(instances, columns=INSTANCE_COLUMNS),
        pd.DataFrame(rejects, columns=["file", "reason", "description", "n"]),
    )


def read_instances(path: Path, code: str, ids: list[str], labels: list[str]) -> tuple[list[dict], Counter]:
    """One relation's instance lines; the answer by ``answer_idx`` where a line gives it, else by
    ``obj_id``, else by ``obj_label`` (lm-pub-quiz joins the answer space on ``obj_id``)."""
    by_id = {i: n for n, i in reversed(list(enumerate(ids)))}
    by_label = {x: n for n, x in reversed(list(enumerate(labels)))}

    def answer(record) -> int | None:
        if "obj_id" in record:
            return by_id.get(str(record["obj_id"]))
        return by_label.get(record["obj_label"])

    def problem(record):
        if not all(isinstance(record.get(k), str) and record[k].strip() for k in ("sub_label", "obj_label")):
            return "missing_label", REJECT_REASONS["missing_label"]
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
        return None

    counts: Counter = Counter()
    rows = []
    for _, record in read_jsonl_lenient(path, problem, counts):
        found = record.get("answer_idx", answer(record))
        rows.append(
            {
                "relation": code,
                "instance": len(rows),
                "sub_id": str(record.get("sub_id", "")),
                "sub_label": record["sub_label"],
                "obj_id": str(record.get("obj_id", ids[found])),
                "obj_label": record["obj_label"],
                "answer_idx": int(found),
                "extra": _json({k: v for k, v in record.items() if k not in _INSTANCE_KEYS}),
            }
        )
    return rows, counts


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
