"""COMPS's numbers with their uncertainty (knowprobe.uncertainty): accuracy per model and subset
(the accuracy table's number: the share of right pairs) with its two-stage cluster bootstrap
interval, the clusters being the properties (a property's pairs share its phrase and concepts:
properties are to COMPS what relations are to LAMA): properties drawn with replacement, then the
pairs of each drawn property, the accuracy recomputed over all drawn pairs. Paired comparisons:
each model against the next, on the same pairs."""

from __future__ import annotations

import pandas as pd

from .. import uncertainty
from ..uncertainty import bootstrap, formatting, paired
from .metrics import correct
from .tables import SUBSET_NAMES

GROUP = ["model", "subset"]


def items(scored_pairs: pd.DataFrame) -> pd.DataFrame:
    """``model, subset, property, id, correct``."""
    return scored_pairs[["model", "subset", "property", "id"]].assign(correct=correct(scored_pairs).to_numpy())


def interval_table(pairs: pd.DataFrame, settings: uncertainty.Settings) -> pd.DataFrame:
    table = bootstrap.interval_rows(pairs, GROUP, "property", "correct", settings, pooled=True)
    return formatting.in_percent(table, GROUP, "accuracy", "properties", "pairs")


def layout(table: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "model": table["model"],
            "subset": table["subset"].map(lambda s: SUBSET_NAMES.get(s, s)),
            "accuracy": [formatting.cell(r.accuracy, r.low, r.high) for r in table.itertuples()],
            "properties": [
                r.properties if not r.note else f"{r.properties} (too few for an interval)" for r in table.itertuples()
            ],
            "pairs": table["pairs"],
        }
    )


def figure_bars(table: pd.DataFrame):
    """The intervals figure's bars: a group of bars per model, a bar per subset, each with its
    accuracy and its interval's bounds (NaN: no interval). Returns (models, values, errors) as
    ``figures.grouped_bars`` takes them."""
    models = list(dict.fromkeys(table["model"]))
    values, errors = {}, {}
    for subset, part in table.groupby("subset", sort=False):
        part = part.set_index("model").reindex(models)
        name = SUBSET_NAMES.get(subset, subset)
        values[name] = part["accuracy"].to_numpy(dtype=float)
        errors[name] = (part["low"].to_numpy(dtype=float), part["high"].to_numpy(dtype=float))
    return models, values, errors


def default_comparisons(pairs: pd.DataFrame, config: dict, models: list[str]) -> list[tuple[tuple, tuple]]:
    present = set(map(tuple, pairs[GROUP].drop_duplicates().to_numpy()))
    model_pairs = config["model_pairs"] if config["model_pairs"] is not None else list(zip(models, models[1:]))
    subsets = list(dict.fromkeys(pairs["subset"]))
    found = [((a, subset), (b, subset)) for a, b in model_pairs for subset in subsets]
    return [(a, b) for a, b in found if a in present and b in present]


def comparisons(pairs: pd.DataFrame, model_pairs, settings: uncertainty.Settings):
    groups = dict(tuple(pairs.groupby(GROUP, sort=False)))
    summary, tests = paired.comparison_table(
        groups,
        model_pairs,
        lambda key: SUBSET_NAMES.get(key[1], key[1]),
        "property",
        "id",
        "correct",
        settings,
        name_of=lambda key: key[0],
        pooled=True,
    )
    return summary.rename(columns={"clusters": "properties", "items": "pairs", "dataset": "subset"}), tests.rename(
        columns={"cluster": "property", "dataset": "subset"}
    )


def headlines(table: pd.DataFrame) -> list[str]:
    """The report's landing-page line per model: accuracy on each subset with its interval."""
    lines = []
    for model, rows in table.groupby("model", sort=False):
        cells = ", ".join(
            f"{SUBSET_NAMES.get(r.subset, r.subset)} {formatting.cell(r.accuracy, r.low, r.high)}"
            for r in rows.itertuples()
        )
        lines.append(f"{model}: {cells} (accuracy %, 95% interval over properties; chance 50)")
    return lines
