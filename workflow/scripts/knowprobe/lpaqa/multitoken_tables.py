"""The multi-token facts' tables (issue 41): accuracy per model, method and prompt set on the test
half with each set's Top-1 prompts, macro over relations (X-FACTR's headline) and micro over
facts, for all facts and split by the gold object's token count in the model's tokenizer (1, 2,
3, ≥ 4), under both correctness rules, each with its 95% cluster bootstrap interval (relations,
then facts); paired comparisons of methods and of models on the same facts (the difference with
its paired interval, McNemar per relation and Holm), as LPAQA's; and the fact set's size per
relation and token count."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import uncertainty
from ..uncertainty import bootstrap, formatting, paired

BUCKETS = ("1", "2", "3", "≥4")  # the gold object's token count
ALL = "all"


def bucket(tokens) -> np.ndarray:
    """Each token count's bucket label (``BUCKETS``)."""
    counts = np.asarray(tokens, dtype=np.int64)
    return np.array(BUCKETS, dtype=object)[np.clip(counts, 1, 4) - 1]


def selected_rows(predictions: pd.DataFrame, selection: pd.DataFrame) -> pd.DataFrame:
    """The test rows each prompt set's Top-1 choice asks, one per (prompt set, method, fact)."""
    test = predictions[predictions["split"] == "test"]
    chosen = selection[["prompt_set", "method", "relation", "template"]]
    return test.merge(chosen, on=["method", "relation", "template"], how="inner")


def accuracy(predictions: pd.DataFrame, selection: pd.DataFrame, model: str, kind: str) -> pd.DataFrame:
    """One model's accuracy rows: per method, prompt set and token bucket (``all`` first), the
    test facts and relations counted, and the exact-match and substring accuracy (%), macro (the
    mean over relations of each relation's accuracy on its facts in the bucket; relations without
    one left out) and micro (over the bucket's facts)."""
    rows = selected_rows(predictions, selection)
    rows = rows.assign(tokens=bucket(rows["obj_tokens"]))
    out = []
    for (method, prompt_set), group in rows.groupby(["method", "prompt_set"], sort=False):
        for tokens in (ALL, *BUCKETS):
            part = group if tokens == ALL else group[group["tokens"] == tokens]
            entry = {
                "model": model,
                "kind": kind,
                "method": method,
                "prompt_set": prompt_set,
                "tokens": tokens,
                "facts": len(part),
                "relations": part["relation"].nunique(),
            }
            for rule in ("exact", "substring"):
                correct = part[f"correct_{rule}"].astype(float)
                entry[f"macro_{rule}"] = 100 * correct.groupby(part["relation"]).mean().mean() if len(part) else np.nan
                entry[f"micro_{rule}"] = 100 * correct.mean() if len(part) else np.nan
            entry["definition"] = group["definition"].iat[0]
            out.append(entry)
    return pd.DataFrame(out, columns=ACCURACY_COLUMNS)


ACCURACY_COLUMNS = [
    "model",
    "kind",
    "method",
    "prompt_set",
    "tokens",
    "facts",
    "relations",
    "macro_exact",
    "micro_exact",
    "macro_substring",
    "micro_substring",
    "definition",
]


KEYS = ["model", "method", "prompt_set", "tokens"]
# what is measured, as (column, statistic): macro over relations (X-FACTR's headline) and micro
# over facts, under each correctness rule
STATISTICS = [(f"{kind}_{rule}", kind) for rule in ("exact", "substring") for kind in ("macro", "micro")]


def bucketed(rows: pd.DataFrame) -> pd.DataFrame:
    """The selected test rows once as ``tokens = all`` and once in their token bucket."""
    rows = rows.assign(tokens=bucket(rows["obj_tokens"]))
    return pd.concat([rows.assign(tokens=ALL), rows], ignore_index=True)


def with_intervals(table: pd.DataFrame, rows: pd.DataFrame, settings: uncertainty.Settings):
    """``table`` (``accuracy``'s rows of every model) with each statistic's 95% interval as
    ``<statistic>_low`` and ``_high`` (%): the two-stage cluster bootstrap, relations then facts,
    every row on the same facts (methods and prompt sets of a model; models on one bucket's facts
    where their buckets agree) resampled together. ``rows``: every model's selected test rows
    (``selected_rows``, with ``model``). Returns the table and the macro exact-match replicates
    (``bootstrap.SharedDraws`` of the ``all`` rows), which ``comparisons`` reuses."""
    long = bucketed(rows)
    shared = None
    for column, kind in STATISTICS:
        rule = column.split("_", 1)[1]
        found, drawn = bootstrap.shared_interval_rows(
            long, KEYS, "relation", "fact_id", f"correct_{rule}", settings, pooled=kind == "micro"
        )
        if column == "macro_exact":
            shared = drawn
        found = found.assign(**{f"{column}_low": 100 * found["low"], f"{column}_high": 100 * found["high"]})
        table = table.merge(found[[*KEYS, f"{column}_low", f"{column}_high"]], on=KEYS, how="left")
    return table, shared


def method_pairs(table: pd.DataFrame) -> list[tuple[tuple, tuple]]:
    """The comparisons, as pairs of (model, method, prompt set): per model and prompt set every
    two of its methods (closed and open: statement, mlama, independent, order, confidence,
    generate, in that order); per method and prompt set each model against the next one of the
    table that has it."""
    order = ["statement", "mlama", "independent", "order", "confidence", "generate"]
    present = table[table["tokens"] == ALL][["model", "method", "prompt_set"]].drop_duplicates()
    models = list(dict.fromkeys(present["model"]))
    pairs = []
    for (model, prompt_set), group in present.groupby(["model", "prompt_set"], sort=False):
        methods = sorted(group["method"], key=lambda m: order.index(m) if m in order else len(order))
        pairs += [
            ((model, a, prompt_set), (model, b, prompt_set)) for i, a in enumerate(methods) for b in methods[i + 1 :]
        ]
    have = set(map(tuple, present.to_numpy()))
    for (method, prompt_set), _ in present.groupby(["method", "prompt_set"], sort=False):
        asked = [m for m in models if (m, method, prompt_set) in have]
        pairs += [((a, method, prompt_set), (b, method, prompt_set)) for a, b in zip(asked, asked[1:])]
    return pairs


def comparisons(rows: pd.DataFrame, pairs, settings: uncertainty.Settings, shared=None):
    """Per pair: A - B of the macro exact-match accuracy (points; the mean over relations) on all
    the facts both answered, with its paired cluster bootstrap interval, and the relations where A
    or B is better by McNemar's exact test after Holm's correction, or neither; and the
    per-relation tests. ``shared``: ``with_intervals``' replicates (pairs on the same facts take
    the difference of theirs)."""
    long = bucketed(rows)
    long = long[long["tokens"] == ALL]
    groups = {(*key, ALL): frame for key, frame in long.groupby(["model", "method", "prompt_set"], sort=False)}
    keyed = [((*a, ALL), (*b, ALL)) for a, b in pairs]
    summary, tests = paired.comparison_table(
        groups,
        keyed,
        lambda key: "",
        "relation",
        "fact_id",
        "correct_exact",
        settings,
        name_of=lambda key: " ".join(key[:3]),
        shared=shared,
    )
    summary = summary.rename(columns={"clusters": "relations", "items": "facts"})
    return summary, tests.rename(columns={"cluster": "relation"}).drop(columns="dataset")


def comparison_layout(summary: pd.DataFrame) -> pd.DataFrame:
    return formatting.comparison_layout(summary.rename(columns={"relations": "clusters"}), "relations")


def accuracy_layout(table: pd.DataFrame) -> pd.DataFrame:
    """The Markdown layout: a row per model, method and prompt set, a column per token bucket,
    each cell "macro / micro" exact-match accuracy (%) with the facts counted, and where the table
    has them the macro's 95% interval ("macro [low, high] / micro (facts)")."""

    def cell(row) -> str:
        if not row["facts"]:
            return "–"
        macro = f"{row['macro_exact']:.1f}"
        if "macro_exact_low" in row and row["macro_exact_low"] == row["macro_exact_low"]:
            macro += f" [{row['macro_exact_low']:.1f}, {row['macro_exact_high']:.1f}]"
        return f"{macro} / {row['micro_exact']:.1f} ({row['facts']})"

    table = table.assign(cell=table.apply(cell, axis=1))
    wide = table.pivot_table(
        index=["model", "method", "prompt_set"], columns="tokens", values="cell", aggfunc="first", sort=False
    )
    return wide.reindex(columns=[ALL, *BUCKETS]).fillna("–").reset_index()


def fact_sizes(facts: pd.DataFrame, tokens: pd.DataFrame, test_facts: set[str]) -> pd.DataFrame:
    """Per model and relation, the facts (and those in the test half) by the object's token count."""
    merged = tokens.merge(facts[["fact_id", "relation"]], on=["fact_id", "relation"], how="inner")
    merged = merged.assign(tokens=bucket(merged["obj_tokens"]), test=merged["fact_id"].isin(test_facts))
    counts = merged.pivot_table(
        index=["model", "relation"], columns="tokens", values="fact_id", aggfunc="count", fill_value=0, sort=False
    )
    counts = counts.reindex(columns=list(BUCKETS), fill_value=0)
    counts.insert(0, "test", merged.groupby(["model", "relation"], sort=False)["test"].sum())
    counts.insert(0, "facts", merged.groupby(["model", "relation"], sort=False).size())
    return counts.reset_index()
