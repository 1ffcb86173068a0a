"""The multi-token facts' tables (issue 41): accuracy per model, method and prompt set on the test
half with each set's Top-1 prompts, macro over relations (X-FACTR's headline) and micro over
facts, for all facts and split by the gold object's token count in the model's tokenizer (1, 2,
3, ≥ 4), under both correctness rules; and the fact set's size per relation and token count."""

from __future__ import annotations

import numpy as np
import pandas as pd

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


def accuracy_layout(table: pd.DataFrame) -> pd.DataFrame:
    """The Markdown layout: a row per model, method and prompt set, a column per token bucket,
    each cell "macro / micro" exact-match accuracy (%) with the facts counted."""

    def cell(row) -> str:
        if not row["facts"]:
            return "–"
        return f"{row['macro_exact']:.1f} / {row['micro_exact']:.1f} ({row['facts']})"

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
