"""LPAQA's result tables: which rows and columns, from per-relation results.

``per_relation`` rows are ``model, prompt_set, method, dataset, relation, n_facts,
n_objects, micro, macro``; the summary averages them over relations and lays the
datasets side by side, one row per (model, method), in percent as the papers print them.
"""

from __future__ import annotations

import pandas as pd

from ..io import KnowprobeError
from .metrics import average_over_relations

PER_RELATION_COLUMNS = [
    "model",
    "prompt_set",
    "method",
    "dataset",
    "relation",
    "n_facts",
    "n_objects",
    "micro",
    "macro",
]
DATASET_NAMES = {"trex": "T-REx", "google_re": "Google-RE"}
METHOD_ORDER = ["Majority", "Man"]


def single_prompt_results(per_prompt: pd.DataFrame, method: str) -> pd.DataFrame:
    """Per-relation results of a prompt set that has one prompt per relation (e.g. Man)."""
    counts = per_prompt.groupby("relation")["prompt_id"].nunique()
    several = counts[counts > 1]
    if len(several):
        raise KnowprobeError(
            f"method {method}: relation {several.index[0]} has {several.iloc[0]} prompts; "
            f"a single-prompt method needs exactly one"
        )
    return per_prompt.drop(columns=["prompt_id", "template"]).assign(method=method)


def dataset_order(dataset: str) -> int:
    """Known datasets in DATASET_NAMES's order, any other after them."""
    names = list(DATASET_NAMES)
    return names.index(dataset) if dataset in names else len(names)


def summary(per_relation: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, method); for each dataset micro and macro P@1 (%), relations and facts."""
    averaged = average_over_relations(per_relation, keys=["model", "method", "dataset"])
    rows = []
    for (model, method), group in averaged.groupby(["model", "method"], sort=False):
        row = {"model": model, "method": method}
        group = group.sort_values("dataset", key=lambda d: d.map(dataset_order))
        for item in group.itertuples():
            name = DATASET_NAMES.get(item.dataset, item.dataset)
            row[f"{name} micro"] = round(100 * item.micro, 1)
            row[f"{name} macro"] = round(100 * item.macro, 1)
            row[f"{name} relations"] = item.n_relations
            row[f"{name} facts"] = item.n_facts
        rows.append(row)
    frame = pd.DataFrame(rows)
    order = {method: i for i, method in enumerate(METHOD_ORDER)}
    frame["_order"] = frame["method"].map(lambda m: order.get(m, len(order)))
    return frame.sort_values(["model", "_order", "method"], kind="stable").drop(columns="_order").reset_index(drop=True)


def score_columns(frame: pd.DataFrame) -> list[str]:
    return [c for c in frame.columns if c.endswith((" micro", " macro"))]
