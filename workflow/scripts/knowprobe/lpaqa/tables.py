"""LPAQA's result tables: which rows and columns, from per-relation results.

``per_relation`` rows are ``model, prompt_set, method, dataset, relation, n_facts,
n_objects, micro, macro``; the summary averages them over relations and lays the
datasets side by side, one row per (model, method), in percent as the papers print them.
"""

from __future__ import annotations

import pandas as pd

from ..io import KnowprobeError
from ..prompts import object_at_end
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


def declared_answer_spaces(path: str | None) -> dict[str, list[str]] | None:
    """lpaqa.probe.statement.answer_space as the probe read it (``{relation: [label, ...]}``; the
    probe checked it), or None where the config declares none."""
    if not path:
        return None
    import json

    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def candidate_set_sizes(
    rows: pd.DataFrame,
    runs: dict[str, tuple[str, str]],
    vocab_sizes: dict[str, int],
    answer_spaces: dict[str, list[str]] | None = None,
) -> pd.Series:
    """Per row of per-relation results (``model`` a run, ``method``, ``relation``, ``n_objects``):
    the size of the candidate set its facts were ranked in. Under the mask and next-token scores,
    the run's candidate vocabulary (``vocab_sizes``: run -> words), the same for every relation;
    under the statement score, the relation's set C_r: its declared answer space where
    ``answer_spaces`` lists it, else its distinct gold objects in the split (``n_objects``).
    Majority ranks nothing (it answers each relation's most frequent object): NaN."""
    sizes = []
    for run, method, relation, objects in zip(rows["model"], rows["method"], rows["relation"], rows["n_objects"]):
        score = runs.get(run, (run, "mask"))[1]
        if method == "Majority":
            sizes.append(float("nan"))
        elif score == "statement":
            declared = (answer_spaces or {}).get(relation)
            sizes.append(float(len(declared) if declared is not None else objects))
        else:
            sizes.append(float(vocab_sizes.get(run, float("nan"))))
    return pd.Series(sizes, index=rows.index, dtype=float)


def whole_candidates(frame: pd.DataFrame) -> pd.DataFrame:
    """A summary's counts as whole numbers, missing where a row has none (a row ranks nothing, or
    a dataset only some runs have, such as T-REx-UHN): 322 facts, not 322.0."""
    for column in [c for c in frame.columns if c.endswith((" candidates", " facts", " relations"))]:
        frame[column] = frame[column].round().astype("Int64")
    return frame


def mean_candidates(rows: pd.DataFrame, keys: list[str]) -> dict[tuple, float]:
    """The mean over relations of ``candidates`` per ``keys`` (rows without the column: none)."""
    if "candidates" not in rows:
        return {}
    return rows.groupby(keys, sort=False)["candidates"].mean().to_dict()


def summary(per_relation: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, method); for each dataset micro and macro P@1 (%), relations, facts and,
    where the rows carry them, the candidates (the candidate set's size, averaged over relations)."""
    averaged = average_over_relations(per_relation, keys=["model", "method", "dataset"])
    candidates = mean_candidates(per_relation, ["model", "method", "dataset"])
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
            if candidates:
                row[f"{name} candidates"] = candidates.get((model, method, item.dataset), float("nan"))
        rows.append(row)
    frame = whole_candidates(pd.DataFrame(rows))
    order = {method: i for i, method in enumerate(METHOD_ORDER)}
    frame["_order"] = frame["method"].map(lambda m: order.get(m, len(order)))
    return frame.sort_values(["model", "_order", "method"], kind="stable").drop(columns="_order").reset_index(drop=True)


def headlines(baseline: pd.DataFrame) -> list[str]:
    """The report's landing-page line per run from the baseline table, for a run without
    T-REx-train (it selects no prompts, so has no interval): the manual prompts' micro P@1 on the
    first test set (T-REx) beside Majority's, over how many facts and candidates; one short line,
    as the headlines share the first screen."""
    lines = []
    micro = [c for c in baseline.columns if c.endswith(" micro")]
    for model, rows in baseline.groupby("model", sort=False):
        manual, majority = rows[rows["method"] == "Man"], rows[rows["method"] == "Majority"]
        column = next((c for c in micro if not manual.empty and pd.notna(manual[c].iloc[0])), None)
        if column is None:
            continue
        name = column[: -len(" micro")]
        against = f" (Majority {majority[column].iloc[0]:.1f})" if not majority.empty else ""
        size = manual[f"{name} candidates"].iloc[0] if f"{name} candidates" in manual else None
        among = f", {int(size):,} candidates" if size is not None and pd.notna(size) else ""
        lines.append(
            f"{model}: manual prompts {manual[column].iloc[0]:.1f}{against}, micro P@1 (%) over "
            f"{int(manual[f'{name} facts'].iloc[0])} {name} facts{among}; no interval"
        )
    return lines


def score_columns(frame: pd.DataFrame) -> list[str]:
    return [c for c in frame.columns if c.endswith((" micro", " macro"))]


def shown_columns(frame: pd.DataFrame) -> list[str]:
    """A summary's columns as its Markdown shows them, per dataset: micro, macro, then what they
    are over, the facts and the candidates (the candidate set's size): a score over 19 facts and
    49,149 candidates is not one over 20 facts and 20 candidates."""
    return [c for c in frame.columns if c.endswith((" micro", " macro", " facts", " candidates"))]


# the methods of the score table: the baseline, then the paper's Top-1, Top-3, Top-5, Opti, Oracle
SCORE_METHODS = ["Majority", "Top1", "Top3", "Top5", "Opti", "Oracle"]


def score_summary(results: pd.DataFrame, runs: dict[str, tuple[str, str]]) -> pd.DataFrame:
    """Every run's test P@1 (%) per prompt set and method, averaged over relations: one row per
    (run, prompt set, method) of ``SCORE_METHODS``, with the run's model and score beside its name
    (``runs``: run -> (model, score)), each dataset's micro and macro side by side. ``results``:
    rows of the ``results`` contract (selection and Majority), ``model`` the run."""
    rows = results[(results["split"] == "test") & results["method"].isin(SCORE_METHODS)]
    averaged = average_over_relations(rows, keys=["model", "prompt_set", "method", "dataset"])
    candidates = mean_candidates(rows, ["model", "prompt_set", "method", "dataset"])
    out = []
    for (run, prompt_set, method), group in averaged.groupby(["model", "prompt_set", "method"], sort=False):
        model, score = runs.get(run, (run, "mask"))
        row = {"run": run, "model": model, "score": score, "prompt_set": prompt_set, "method": method}
        for item in group.sort_values("dataset", key=lambda d: d.map(dataset_order)).itertuples():
            name = DATASET_NAMES.get(item.dataset, item.dataset)
            row[f"{name} micro"] = round(100 * item.micro, 1)
            row[f"{name} macro"] = round(100 * item.macro, 1)
            row[f"{name} facts"] = item.n_facts
            if candidates:
                row[f"{name} candidates"] = candidates.get((run, prompt_set, method, item.dataset), float("nan"))
        out.append(row)
    frame = whole_candidates(pd.DataFrame(out))
    if frame.empty:
        return frame
    run_order = {run: i for i, run in enumerate(runs)}
    method_order = {method: i for i, method in enumerate(SCORE_METHODS)}
    frame["_run"] = frame["run"].map(lambda r: run_order.get(r, len(run_order)))
    frame["_set"] = (frame["prompt_set"] != "-").astype(int)
    frame["_method"] = frame["method"].map(method_order)
    frame = frame.sort_values(["_run", "_set", "prompt_set", "_method"], kind="stable")
    return frame.drop(columns=["_run", "_set", "_method"]).reset_index(drop=True)


def right_context_counts(prompts: pd.DataFrame) -> pd.DataFrame:
    """Per relation: prompts, and those whose ``[Y]`` is not at the end (``object_at_end``), whose
    right context the next-token score drops."""
    frame = prompts[["relation", "template"]].drop_duplicates()
    frame = frame.assign(not_at_end=~frame["template"].map(object_at_end))
    counts = frame.groupby("relation", sort=True)["not_at_end"].agg(prompts="size", not_at_end="sum")
    return counts.reset_index().astype({"prompts": "int64", "not_at_end": "int64"})
