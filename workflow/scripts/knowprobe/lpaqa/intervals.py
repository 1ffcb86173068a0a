"""LPAQA's headline numbers with their uncertainty (knowprobe.uncertainty): the rows of Tables 2
and 3 (Majority, Man, each other set's Top1, Top3, Top5, Opti and Oracle) on every test set, micro
and macro P@1 with their two-stage cluster bootstrap intervals (relations, then facts; for macro,
relations, then objects, then facts), and paired comparisons (each method against Man, each model
against the next one configured).
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from .. import uncertainty
from ..uncertainty import bootstrap, formatting, paired
from .paper import MAIN_METHODS, SET_NAMES
from .tables import DATASET_NAMES, dataset_order

KEYS = ["model", "prompts", "method", "dataset"]


def headline_facts(method_facts: pd.DataFrame, majority: pd.DataFrame, prompt_sets: list[str]) -> pd.DataFrame:
    """Per fact, whether it is right under each headline row: ``model, prompts, method, dataset,
    relation, fact_id, obj_label, correct``. ``majority``: the filtered facts with Majority's
    ``correct`` (and ``model, dataset``)."""
    frames = [majority.assign(prompts="Majority", method="Top1")]
    for prompt_set in prompt_sets:
        rows = method_facts[method_facts["prompt_set"] == prompt_set]
        methods = ["Top1"] if prompt_set == "manual" else MAIN_METHODS
        frames.append(rows[rows["method"].isin(methods)].assign(prompts=SET_NAMES.get(prompt_set, prompt_set)))
    columns = [*KEYS, "relation", "fact_id", "obj_label", "correct"]
    return pd.concat([frame[columns] for frame in frames], ignore_index=True)


def interval_table(facts: pd.DataFrame, settings: uncertainty.Settings, draws: list | None = None) -> pd.DataFrame:
    """Per headline row: micro and macro P@1 (%) with their 95% intervals, relations and facts.
    The rows on the same facts (every method, prompt set and model of a test set whose filtered
    facts agree) are resampled together (``bootstrap.shared_interval_rows``); pass a list as
    ``draws`` to receive the micro replicates, which ``comparisons`` reuses."""
    micro, shared = bootstrap.shared_interval_rows(facts, KEYS, "relation", "fact_id", "correct", settings)
    if draws is not None:
        draws.append(shared)
    macro, _ = bootstrap.shared_interval_rows(
        facts, KEYS, "relation", "fact_id", "correct", settings, objects="obj_label"
    )
    table = micro.merge(macro, on=KEYS, suffixes=("", "_macro"))
    out = table[KEYS].assign(
        micro=100 * table["value"],
        micro_low=100 * table["low"],
        micro_high=100 * table["high"],
        macro=100 * table["value_macro"],
        macro_low=100 * table["low_macro"],
        macro_high=100 * table["high_macro"],
        relations=table["clusters"],
        facts=table["items"],
        note=table["note"],
    )
    return out.sort_values("dataset", key=lambda d: d.map(dataset_order), kind="stable").reset_index(drop=True)


cell = formatting.cell


def dataset_name(dataset: str) -> str:
    """T-REx, Google-RE, T-REx-UHN (a test set's name as the tables print it)."""
    if dataset.endswith("_uhn"):
        return f"{DATASET_NAMES.get(dataset[:-4], dataset[:-4])}-UHN"
    return DATASET_NAMES.get(dataset, dataset)


def layout(table: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, prompts, method), per dataset its micro and macro cells "value [low,
    high]" and its relations (the clusters); where there are too few, the note."""
    rows = {}
    for item in table.itertuples():
        row = rows.setdefault((item.model, item.prompts, item.method), {})
        name = dataset_name(item.dataset)
        row[f"{name} micro"] = cell(item.micro, item.micro_low, item.micro_high)
        row[f"{name} macro"] = cell(item.macro, item.macro_low, item.macro_high)
        row[f"{name} relations"] = item.relations if not item.note else f"{item.relations} (too few for an interval)"
    out = pd.DataFrame([{"model": k[0], "prompts": k[1], "method": k[2], **v} for k, v in rows.items()])
    for column in out.columns:
        if column.endswith(" relations") and out[column].map(lambda v: isinstance(v, float)).all():
            out[column] = out[column].astype("Int64")  # a dataset some rows lack (Majority on T-REx-UHN)
    return out


def default_comparisons(
    facts: pd.DataFrame, config: dict, models: list[str], scores: dict[str, str] | None = None
) -> list[tuple[tuple, tuple]]:
    """The pairs (A, B) of headline rows ``(model, prompts, method)`` compared: each configured
    method of every other prompt set against the baseline (Man's Top1), per model (run); then the
    baseline of each model against that of the next model configured (or ``model_pairs``). With
    ``scores`` (run -> score), "the next" is the next run of the same score: runs under different
    scores rank different candidate sets, so their P@1 is not the same measurement."""
    present = set(map(tuple, facts[["model", "prompts", "method"]].drop_duplicates().to_numpy()))
    base_prompts = SET_NAMES.get(config["baseline"]["prompt_set"], config["baseline"]["prompt_set"])
    base_method = config["baseline"]["method"]
    pairs = []
    for model in models:
        baseline = (model, base_prompts, base_method)
        for row in sorted(present, key=lambda r: (r[1], r[2])):
            if row[0] == model and row != baseline and row[2] in config["methods"] and row[1] != "Majority":
                pairs.append((row, baseline))
    model_pairs = config["model_pairs"]
    if model_pairs is None:
        scores = scores or {}
        model_pairs = []
        for score in dict.fromkeys(scores.get(model) for model in models):
            alike = [model for model in models if scores.get(model) == score]
            model_pairs += list(zip(alike, alike[1:]))
    for a, b in model_pairs:
        pairs.append(((a, base_prompts, base_method), (b, base_prompts, base_method)))
    return [(a, b) for a, b in pairs if a in present and b in present]


def comparisons(
    facts: pd.DataFrame,
    pairs: list[tuple[tuple, tuple]],
    settings: uncertainty.Settings,
    shared: bootstrap.SharedDraws | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per pair and dataset: the difference of micro P@1 (A - B, points) with its paired
    interval, and the relations where A or B is better (McNemar, Holm) or neither; and the
    per-relation tests. ``shared``: the micro replicates ``interval_table`` drew (a pair on the
    same facts takes their difference; without them, or on other facts, the pair is resampled)."""
    groups = dict(tuple(facts.groupby(["model", "prompts", "method", "dataset"], sort=False)))
    datasets = sorted(facts["dataset"].unique(), key=dataset_order)
    keyed = [((*a, dataset), (*b, dataset)) for a, b in pairs for dataset in datasets]
    summary, tests = paired.comparison_table(
        groups,
        keyed,
        lambda key: dataset_name(key[-1]),
        "relation",
        "fact_id",
        "correct",
        settings,
        name_of=lambda key: " ".join(key[:-1]),
        shared=shared,
    )
    summary = summary.rename(columns={"clusters": "relations", "items": "facts"})
    return summary, tests.rename(columns={"cluster": "relation"})


def comparison_layout(summary: pd.DataFrame) -> pd.DataFrame:
    return formatting.comparison_layout(summary.rename(columns={"relations": "clusters"}), "relations")


def headlines(intervals: pd.DataFrame, first: Iterable[str] = ()) -> list[str]:
    """The report's landing-page line per model, from the intervals table (micro P@1 on T-REx):
    the manual prompts and the best Top-1 of the other prompt sets, with their 95% intervals.
    ``first``: models whose runs lead, every score of theirs (the pretrained models of a run beside
    models trained here: report.smk)."""
    rows = intervals[(intervals["dataset"] == "trex") & (intervals["method"] == "Top1")]
    # the runs of the models in first, then the mask runs (named after their model) lead where
    # there are any, the others (MODEL@SCORE) counted in one line, so that the landing page's first
    # screen holds every study's headline
    runs = list(dict.fromkeys(rows["model"]))
    first = set(first)
    leading = [run for run in runs if run.split("@")[0] in first]
    lead = leading + [run for run in runs if "@" not in run and run not in leading] or runs
    rows = rows[rows["model"].isin(lead)].sort_values("model", key=lambda runs: runs.map(lead.index), kind="stable")
    lines = []
    for model, group in rows.groupby("model", sort=False):
        manual = group[group["prompts"] == "Man"]
        others = group[~group["prompts"].isin(["Majority", "Man"])]
        if manual.empty:
            continue
        man = manual.iloc[0]
        text = f"{model}: manual prompts {cell(man.micro, man.micro_low, man.micro_high)}"
        if not others.empty:  # a run of the manual prompts alone has no other set to compare
            best = others.loc[others["micro"].idxmax()]
            text += f", best Top-1 {cell(best.micro, best.micro_low, best.micro_high)} ({best.prompts})"
        lines.append(text + f"; micro P@1 (%) over {man.relations} relations")
    others = [run for run in runs if run not in lead]
    if lines:  # what every line shares, said once
        more = f"; {len(others)} more runs (other scores) in the table" if others else ""
        lines[-1] += "; 95% cluster bootstrap intervals" + more
    return lines
