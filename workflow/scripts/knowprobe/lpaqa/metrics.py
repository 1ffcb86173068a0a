"""P@1 exactly as LPAQA defines it, and the Majority baseline.

micro P@1 of a relation: the share of its facts whose gold object ranks first among the
candidates; macro P@1 of a relation: the mean over its unique objects of the per-object
accuracy. Both are then averaged over relations (every relation weighs the same).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

RESULT_COLUMNS = ["relation", "n_facts", "n_objects", "micro", "macro"]


def p_at_1(frame: pd.DataFrame, keys: list[str] | None = None) -> pd.DataFrame:
    """Per relation (and ``keys``): micro and macro P@1 of a boolean ``correct`` column.

    ``frame`` has one row per fact (per key combination) with ``relation``, ``obj_label``
    and ``correct``.
    """
    keys = list(keys or [])
    group = ["relation", *keys]
    per_object = frame.groupby([*group, "obj_label"], sort=True)["correct"].mean().rename("object_accuracy")
    per_relation = frame.groupby(group, sort=True).agg(
        n_facts=("correct", "size"), n_objects=("obj_label", "nunique"), micro=("correct", "mean")
    )
    per_relation["macro"] = per_object.groupby(level=group).mean()
    per_relation["micro"] = per_relation["micro"].astype(float)
    return per_relation.reset_index()[[*group, *RESULT_COLUMNS[1:]]]


def average_over_relations(per_relation: pd.DataFrame, keys: list[str] | None = None) -> pd.DataFrame:
    """Mean of per-relation micro and macro, plus the relation and fact counts."""
    keys = list(keys or [])
    if not keys:
        return pd.DataFrame(
            [
                {
                    "n_relations": len(per_relation),
                    "n_facts": int(per_relation["n_facts"].sum()),
                    "micro": per_relation["micro"].mean(),
                    "macro": per_relation["macro"].mean(),
                }
            ]
        )
    return (
        per_relation.groupby(keys, sort=True)
        .agg(
            n_relations=("relation", "size"),
            n_facts=("n_facts", "sum"),
            micro=("micro", "mean"),
            macro=("macro", "mean"),
        )
        .reset_index()
    )


def probe_correctness(probe: pd.DataFrame) -> pd.DataFrame:
    """A ``correct`` column from probe output: the gold object ranks first among the candidates."""
    return probe.assign(correct=probe["gold_rank"] == 0)


def per_prompt_p_at_1(probe: pd.DataFrame) -> pd.DataFrame:
    """P@1 of every prompt of a prompt set, per relation."""
    return p_at_1(probe_correctness(probe), keys=["prompt_id", "template"])


def majority_correct(facts: pd.DataFrame, objects: dict[str, str]) -> pd.DataFrame:
    """``facts`` with a ``correct`` column: the Majority baseline predicts each relation's object of
    ``objects`` (relation to label), its most frequent object among the facts the run could be
    asked (``lama.majority_objects``, which ``lpaqa_filter_facts`` writes as majority.json before a
    run's own draw): chosen on a draw itself, one fact a relation would make the baseline 100%."""
    return facts.assign(correct=facts["obj_label"].to_numpy() == facts["relation"].map(objects).to_numpy())


def majority(facts: pd.DataFrame, objects: dict[str, str]) -> pd.DataFrame:
    """The Majority baseline per relation (``majority_correct``'s facts averaged)."""
    return p_at_1(majority_correct(facts, objects))


def relation_grid(table: pd.DataFrame, relation: str) -> tuple[np.ndarray, pd.DataFrame, pd.DataFrame]:
    """A relation's probe rows as a ``[prompt, fact]`` grid of row numbers, with its prompts and its
    facts in grid order. The probe writes every fact with every prompt of its relation, sorted by
    relation, prompt and fact; anything else is a table this stage cannot read."""
    rows = np.flatnonzero(table["relation"].to_numpy() == relation)
    part = table.iloc[rows]
    prompts = part.drop_duplicates("prompt_id")[["prompt_id", "template", "source", "rank"]].reset_index(drop=True)
    facts = part.drop_duplicates("fact_id")[["fact_id", "sub_label", "obj_label", "obj_token_id"]]
    facts = facts.sort_values("fact_id", kind="stable").reset_index(drop=True)
    grid = rows.reshape(len(prompts), -1) if len(rows) == len(prompts) * len(facts) else None
    if grid is None or not (
        (part["prompt_id"].to_numpy().reshape(grid.shape) == prompts["prompt_id"].to_numpy()[:, None]).all()
        and (part["fact_id"].to_numpy().reshape(grid.shape) == facts["fact_id"].to_numpy()[None, :]).all()
    ):
        raise ValueError(f"{relation}: probe rows are not every fact with every prompt in order")
    return grid, prompts, facts
