"""COMPS's tables: the stimuli's statistics beside the paper's, and accuracy per model × subset,
by negative-sample type, and by model family and size."""

from __future__ import annotations

import pandas as pd

from . import metrics
from .builder import SUBSETS
from .metrics import LEFT_OUT_REASONS

SUBSET_NAMES = {
    "base": "COMPS-BASE",
    "wugs": "COMPS-WUGS",
    "wugs_dist_before": "WUGS-DIST (before)",
    "wugs_dist_in_between": "WUGS-DIST (in between)",
}

# what the tables' layouts (Markdown, LaTeX, the report's pages) call the CSV columns named for code
COLUMN_LABELS = {"negative_sample_type": "negative-sample type", "parameters_millions": "parameters (millions)"}


def statistics(sources: dict[str, pd.DataFrame], paper: dict) -> pd.DataFrame:
    """Per source of stimuli and subset: pairs, properties, positive and all concepts, pairs per
    negative type, and the paper's counts where it gives them (pairs with the difference)."""
    rows = []
    reported = paper["statistics"]["subsets"]
    for source, stimuli in sources.items():
        for subset in SUBSETS:
            part = stimuli[stimuli["subset"] == subset]
            kinds = part["negative_sample_type"].value_counts()
            paper_row = reported.get(subset, {})
            rows.append(
                {
                    "source": source,
                    "subset": SUBSET_NAMES[subset],
                    "pairs": len(part),
                    "paper_pairs": paper_row.get("pairs"),
                    "pairs_minus_paper": None if "pairs" not in paper_row else len(part) - paper_row["pairs"],
                    "properties": part["property"].nunique(),
                    "paper_properties": paper_row.get("properties"),
                    "positive_concepts": part["acceptable_concept"].nunique(),
                    "paper_positive_concepts": paper_row.get("positive_concepts"),
                    "concepts": len(set(part["acceptable_concept"]) | set(part["unacceptable_concept"])),
                    **{f"pairs_{kind}": int(n) for kind, n in sorted(kinds.items())},
                }
            )
    out = pd.DataFrame(rows)
    for column in [c for c in out.columns if c.startswith(("pairs", "paper_", "properties", "positive", "concepts"))]:
        out[column] = out[column].astype("Int64")
    return out


def statistics_layout(statistics: pd.DataFrame) -> pd.DataFrame:
    """The statistics as the report and the Markdown show them, narrow enough for a screen: each
    count 'ours (the paper's, difference)' where the paper gives it, the pairs per negative type
    in one column."""

    def count(ours, paper) -> str:
        return str(ours) if pd.isna(paper) else f"{ours} ({paper}, {ours - paper:+d})"

    kinds = [c for c in statistics.columns if c.startswith("pairs_") and c != "pairs_minus_paper"]
    return pd.DataFrame(
        {
            "source": statistics["source"],
            "subset": statistics["subset"],
            "pairs": [count(o, p) for o, p in zip(statistics["pairs"], statistics["paper_pairs"])],
            "properties": [count(o, p) for o, p in zip(statistics["properties"], statistics["paper_properties"])],
            "positive concepts": [
                count(o, p) for o, p in zip(statistics["positive_concepts"], statistics["paper_positive_concepts"])
            ],
            "concepts": statistics["concepts"].astype(str),
            "pairs per negative type": [
                ", ".join(f"{kind.removeprefix('pairs_')} {row[kind]}" for kind in kinds if pd.notna(row[kind]))
                for _, row in statistics.iterrows()
            ],
        }
    )


def scored(scores: pd.DataFrame, stimuli: pd.DataFrame) -> pd.DataFrame:
    """Scores with each pair's negative type."""
    return scores.merge(
        stimuli[["subset", "id", "negative_sample_type", "property"]], on=["subset", "id"], how="left", validate="m:1"
    )


def left_out_note(scores: pd.DataFrame) -> str:
    """The accuracy tables' footnote: the pairs each model could not score, by reason (an empty
    string where every model scored every pair)."""
    left = scores[scores["left_out"].fillna("") != ""]
    if left.empty:
        return ""
    counts = []
    for model, rows in left.groupby("model", sort=False):
        reasons = rows["left_out"].value_counts().sort_index()
        counts.append(f"{model} {len(rows)} ({', '.join(f'{r} {n}' for r, n in reasons.items())})")
    reasons = "; ".join(f"{r}: {LEFT_OUT_REASONS[r]}" for r in sorted(set(left["left_out"])))
    return f" Pairs left out (the model could not score them; in no accuracy): {', '.join(counts)} ({reasons})."


def start_token_note(models: pd.DataFrame) -> str:
    """The tables' note naming the token each causal model read before every prefix (its probe's
    record; ``none``: the authors' reading, comps.scoring.start_token: false)."""
    if "start_token" not in models:
        return ""
    causal = models[models["kind"] == "causal"]
    if causal.empty:
        return ""
    named = ", ".join(f"{row.model}: {row.start_token}" for row in causal.itertuples())
    return f" Causal models' start token (before every prefix): {named}."


def by_subset(scored_pairs: pd.DataFrame) -> pd.DataFrame:
    """Accuracy per model and subset (long form)."""
    out = metrics.accuracy(scored_pairs, ["model", "subset"])
    return out.assign(subset_name=out["subset"].map(SUBSET_NAMES))


def by_negative_type(scored_pairs: pd.DataFrame) -> pd.DataFrame:
    out = metrics.accuracy(scored_pairs, ["model", "subset", "negative_sample_type"])
    return out.assign(subset_name=out["subset"].map(SUBSET_NAMES))


def wide(long: pd.DataFrame, index: list[str], column: str = "subset_name") -> pd.DataFrame:
    """One row per ``index``, a column of accuracy per value of ``column`` (in order)."""
    order = (
        [SUBSET_NAMES[s] for s in SUBSETS if SUBSET_NAMES[s] in set(long[column])] if column == "subset_name" else None
    )
    table = long.pivot_table(index=index, columns=column, values="accuracy", aggfunc="first", sort=False)
    if order:
        table = table.reindex(columns=order)
    return table.reset_index().rename_axis(columns=None)


def by_family(accuracy: pd.DataFrame, models: pd.DataFrame) -> pd.DataFrame:
    """Accuracy per subset with each model's family (its architecture, ``model_type``), kind and
    parameter count, ordered by family then size."""
    table = wide(accuracy, ["model"])
    out = models.merge(table, on="model", how="right")
    out = out.sort_values(["family", "parameters", "model"], kind="stable").reset_index(drop=True)
    out["parameters_millions"] = (out["parameters"] / 1e6).round(1)
    return out[["family", "model", "kind", "parameters_millions", *[c for c in table.columns if c != "model"]]]


def headlines(accuracy: pd.DataFrame) -> list[str]:
    """The report's landing-page line per model: accuracy on each subset (chance is 50%)."""
    lines = []
    for model, rows in accuracy.groupby("model", sort=False):
        cells = ", ".join(f"{SUBSET_NAMES[r.subset]} {r.accuracy:.1f}" for r in rows.itertuples())
        lines.append(f"{model}: {cells}")
    return lines
