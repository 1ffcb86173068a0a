"""Any knowprobe fact set with templates as a BEAR-format directory, so that lm-pub-quiz (or BEAR's
slice of this workflow, through ``bear.path``) can score it.

Facts come as a table of one of knowprobe's contracts, read by the contract its Parquet file names:
``facts`` and ``model_facts`` (LAMA T-REx and Google-RE, T-REx-train: ``sub_uri``, ``obj_uri``),
``stest_triples`` (S-TEST: the fine object, or with ``--object coarse`` the coarse one), or a
BEAR-format directory itself. Templates come as a ``prompts`` table (a prompt set of LPAQA's: the
``--top`` best by rank per relation) or as JSON lines ``{"relation": ..., "template": ...}``. Each
relation's answer space is the distinct objects of its facts, in order of first appearance
(lm-pub-quiz's ``answer_space_from_instance_table``); a relation without a template is left out
and counted.

    python -m knowprobe.bear.export results/lpaqa/facts/trex/test.parquet \\
        --templates results/lpaqa/prompts/mine.parquet --top 3 --out bear-trex-mine

A command line rather than a rule of BEAR's slice: a rule would name the file layout of another
study's outputs and tie the slices together (docs/bear.md, Export).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from .. import contracts
from ..io import KnowprobeError, read_jsonl
from ..prompts import template_problem
from .dataset import INSTANCE_COLUMNS, RELATION_COLUMNS, read_dataset, write_dataset

log = logging.getLogger(__name__)

FACT_COLUMNS = ["relation", "sub_id", "sub_label", "obj_id", "obj_label"]


def from_facts(facts: pd.DataFrame, templates: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """``(relations, instances, left_out)`` of BEAR's tables from ``facts`` (``FACT_COLUMNS``) and
    ``templates`` (``relation, template`` in order); ``left_out`` counts what was dropped."""
    left_out = {"relations_without_template": 0, "bad_templates": 0, "duplicate_facts": 0}
    usable = templates[[template_problem(t) is None for t in templates["template"]]]
    left_out["bad_templates"] = len(templates) - len(usable)
    by_relation = {r: list(dict.fromkeys(g["template"])) for r, g in usable.groupby("relation", sort=False)}
    unique = facts.drop_duplicates(FACT_COLUMNS)
    left_out["duplicate_facts"] = len(facts) - len(unique)
    relations, instances = [], []
    for relation, part in unique.groupby("relation", sort=False):
        if relation not in by_relation:
            left_out["relations_without_template"] += 1
            continue
        space = part.drop_duplicates("obj_id")[["obj_id", "obj_label"]]
        index = {o: i for i, o in enumerate(space["obj_id"])}
        relations.append(
            {
                "relation": relation,
                "templates": by_relation[relation],
                "answer_space_labels": list(space["obj_label"]),
                "answer_space_ids": list(space["obj_id"]),
                "metadata": "{}",
            }
        )
        labels = dict(zip(space["obj_id"], space["obj_label"]))
        for n, fact in enumerate(part.itertuples(index=False)):
            instances.append(
                {
                    "relation": relation,
                    "instance": n,
                    "sub_id": fact.sub_id,
                    "sub_label": fact.sub_label,
                    "obj_id": fact.obj_id,
                    "obj_label": labels[fact.obj_id],
                    "answer_idx": index[fact.obj_id],
                    "extra": "{}",
                }
            )
    return (
        pd.DataFrame(relations, columns=RELATION_COLUMNS),
        pd.DataFrame(instances, columns=INSTANCE_COLUMNS),
        left_out,
    )


def read_facts(path: str | Path, obj: str = "fine") -> pd.DataFrame:
    """Facts as ``FACT_COLUMNS`` from a table of a knowprobe contract (``facts``, ``model_facts``,
    ``stest_triples``)."""
    path = Path(path)
    try:
        name = (pq.read_schema(path).metadata or {}).get(b"knowprobe.contract", b"").decode()
    except (OSError, ValueError) as error:
        raise KnowprobeError(f"{path}: not a Parquet file ({error})") from None
    if name in ("facts", "model_facts"):
        frame = contracts.read(path, contracts.CONTRACTS[name])
        return frame.rename(columns={"sub_uri": "sub_id", "obj_uri": "obj_id"})[FACT_COLUMNS]
    if name == "stest_triples":
        frame = contracts.read(path, contracts.STEST_TRIPLES)
        return frame.rename(columns={"sub_uri": "sub_id", f"{obj}_uri": "obj_id", f"{obj}_label": "obj_label"})[
            FACT_COLUMNS
        ]
    raise KnowprobeError(f"{path}: a table of contract {name or '?'}; give facts, model_facts or stest_triples")


def read_templates(path: str | Path, top: int | None = None) -> pd.DataFrame:
    """``relation, template`` from a ``prompts`` table (the ``top`` best by rank per relation) or
    JSON lines with ``relation`` and ``template``."""
    path = Path(path)
    if path.suffix == ".parquet":
        frame = contracts.read(path, contracts.PROMPTS).sort_values(["relation", "rank"], kind="stable")
        if top is not None:
            frame = frame.groupby("relation", sort=False).head(top)
        return frame[["relation", "template"]].reset_index(drop=True)
    rows = [
        {"relation": str(r["relation"]), "template": r["template"]}
        for _, r in read_jsonl(path, required=("relation", "template"))
    ]
    frame = pd.DataFrame(rows, columns=["relation", "template"])
    return frame.groupby("relation", sort=False).head(top) if top is not None else frame


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m knowprobe.bear.export",
        description="Write knowprobe facts with templates (or a BEAR-format directory) as a BEAR-format directory.",
    )
    parser.add_argument("facts", help="a facts, model_facts or stest_triples Parquet table, or a BEAR-format directory")
    parser.add_argument("--templates", help="a prompts Parquet table or JSON lines of relation and template")
    parser.add_argument("--top", type=int, default=None, help="the best TOP templates per relation (default all)")
    parser.add_argument("--object", choices=["fine", "coarse"], default="fine", help="S-TEST's object (default fine)")
    parser.add_argument("--out", required=True, help="the directory to write")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        if Path(args.facts).is_dir():
            relations, instances, rejects = read_dataset(args.facts)
            left_out = {f"{r.file}: {r.relation}: {r.reason}": int(r.n) for r in rejects.itertuples() if r.left_out}
        else:
            if not args.templates:
                raise KnowprobeError("--templates is needed with a facts table")
            relations, instances, left_out = from_facts(
                read_facts(args.facts, args.object), read_templates(args.templates, args.top)
            )
        if relations.empty:
            raise KnowprobeError(f"{args.facts}: no relation with facts and a template to export")
        write_dataset(relations, instances, args.out)
    except KnowprobeError as error:
        print(f"knowprobe: {error}", file=sys.stderr)
        return 1
    print(
        f"{args.out}: {len(relations)} relations, {len(instances)} instances; left out: "
        + json.dumps({k: v for k, v in left_out.items() if v})
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
