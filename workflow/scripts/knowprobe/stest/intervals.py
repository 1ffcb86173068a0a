"""S-TEST's numbers with their uncertainty (knowprobe.uncertainty): p_r averaged over relations
of every model, measure, method and mode with its two-stage cluster bootstrap interval (relations,
then the triples counted in each), and paired comparisons on the same triples (the few-shot and
cascade prompts against the vanilla ones, each model against the next)."""

from __future__ import annotations

import pandas as pd

from .. import uncertainty
from ..uncertainty import bootstrap, formatting, paired
from .metrics import KEYS, wins

GROUP = KEYS[:-1]  # model, measure, method, mode


def items(scores: pd.DataFrame) -> pd.DataFrame:
    """The triples that count for p_r, each with ``success``: ``GROUP, relation, sub_uri, success``."""
    counted, success = wins(scores)
    return scores.loc[counted, [*KEYS, "sub_uri"]].assign(success=success[counted])


def interval_table(triples: pd.DataFrame, settings: uncertainty.Settings) -> pd.DataFrame:
    table = bootstrap.interval_rows(triples, GROUP, "relation", "success", settings)
    return formatting.in_percent(table, GROUP, "p_r", "relations", "triples")


def layout(table: pd.DataFrame) -> pd.DataFrame:
    return table[GROUP].assign(
        p_r=[formatting.cell(r.p_r, r.low, r.high) for r in table.itertuples()],
        relations=[
            r.relations if not r.note else f"{r.relations} (too few for an interval)" for r in table.itertuples()
        ],
        triples=table["triples"],
    )


def figure_bars(table: pd.DataFrame, measure: str):
    """The bars of one panel of the intervals figure: categories "model (mode)", a group per
    method, each with its p_r and its interval's bounds (NaN: no interval). Returns (categories,
    values, errors) as ``figures.grouped_bars`` takes them."""
    rows = table[table["measure"] == measure]
    categories = list(dict.fromkeys(f"{r.model} ({r.mode})" for r in rows.itertuples()))
    rows = rows.assign(category=[f"{r.model} ({r.mode})" for r in rows.itertuples()])
    values, errors = {}, {}
    for method, part in rows.groupby("method", sort=False):
        part = part.set_index("category").reindex(categories)
        name = method if method != "-" else measure  # relatedness has no prompting method
        values[name] = part["p_r"].to_numpy(dtype=float)
        errors[name] = (part["low"].to_numpy(dtype=float), part["high"].to_numpy(dtype=float))
    return categories, values, errors


def main_mode(triples: pd.DataFrame, model: str) -> str | None:
    """The mode Table 2 shows a model in: mask for masked models, next_token for causal ones."""
    modes = set(triples.loc[triples["model"] == model, "mode"])
    return next((mode for mode in ("mask", "next_token", "sentence") if mode in modes), None)


def default_comparisons(triples: pd.DataFrame, config: dict, models: list[str]) -> list[tuple[tuple, tuple]]:
    """Specificity: each of ``methods`` against ``baseline`` per model and mode; then each pair of
    models (``model_pairs``, or each model against the next) on the baseline in their Table 2 mode."""
    present = set(map(tuple, triples[GROUP].drop_duplicates().to_numpy()))
    pairs = []
    for model in models:
        for mode in sorted({key[3] for key in present if key[0] == model}):
            base = (model, "specificity", config["baseline"], mode)
            pairs += [((model, "specificity", method, mode), base) for method in config["methods"]]
    model_pairs = config["model_pairs"] if config["model_pairs"] is not None else list(zip(models, models[1:]))
    for a, b in model_pairs:
        mode_a, mode_b = main_mode(triples, a), main_mode(triples, b)
        pairs.append(((a, "specificity", config["baseline"], mode_a), (b, "specificity", config["baseline"], mode_b)))
    return [(a, b) for a, b in pairs if a in present and b in present]


def comparisons(triples: pd.DataFrame, pairs, settings: uncertainty.Settings):
    """Per pair: the difference of p_r (points) with its paired interval over the triples both
    count, and the relations where either is better (McNemar, Holm)."""
    groups = dict(tuple(triples.assign(item=triples["relation"] + "/" + triples["sub_uri"]).groupby(GROUP, sort=False)))
    summary, tests = paired.comparison_table(groups, pairs, lambda key: "", "relation", "item", "success", settings)
    return summary.rename(columns={"clusters": "relations", "items": "triples"}), tests.rename(
        columns={"cluster": "relation"}
    )


def headlines(table: pd.DataFrame) -> list[str]:
    """The report's landing-page line per model: p_r of vanilla prompts (specificity) averaged over
    relations in its Table 2 mode, with its interval (50% is no preference for the fine object)."""
    lines = []
    for model in dict.fromkeys(table["model"]):
        rows = table[(table["model"] == model) & (table["measure"] == "specificity") & (table["method"] == "VP")]
        rows = rows.set_index("mode")
        mode = next((m for m in ("mask", "next_token", "sentence") if m in rows.index), None)
        if mode is None:
            continue
        row = rows.loc[mode]
        interval = formatting.cell(row.p_r, row.low, row.high)
        extent = f"{row.relations} relations" + (", too few for an interval" if row.note else ", 95% interval")
        lines.append(f"{model}: p_r {interval}% (vanilla prompts, average; {extent})")
    return lines
