"""BEAR's measures, as lm-pub-quiz 0.3.3 computes them.

- A fact is answered by the candidate whose statement scores highest; with ``ties="first"`` a tie
  goes to the candidate first in the answer space (lm-pub-quiz's ``Accuracy``:
  ``answer_idx == scores.index(max(scores))``), with ``"wrong"`` a gold answer that ties another
  counts as wrong.
- **Accuracy of a relation** (per template): the share of its instances answered right, in percent.
- **Micro accuracy** (per template): over all instances, the relations' accuracies weighted by their
  instances (lm-pub-quiz's ``accumulate_metrics``: ``np.average(accuracy, weights=support)``).
- **BEAR score** (the leaderboard's figure): the mean of the templates' micro accuracies, ± their
  standard error ``std(ddof) / sqrt(templates)``.
- **Domain accuracy** (relation_info.json): a relation counts in each of its domains; with
  ``divide_support`` (lm-pub-quiz's ``get_metrics(accumulate="domains")``) its weight there is its
  instances divided by its number of domains.
- **Random baseline**: the expected accuracy of a uniform guess, the mean over instances of
  1 / |answer space| (4.68% on BEAR).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

KEYS = ["model", "relation", "template", "instance"]


def predictions(scores: pd.DataFrame, instances: pd.DataFrame, ties: str = "first") -> pd.DataFrame:
    """One row per model, relation, template and instance: the predicted candidate, the gold
    ``answer_idx``, the candidates scored and whether the prediction is right (``ties``)."""
    if ties not in ("first", "wrong"):
        raise ValueError(f"ties must be first or wrong, not {ties!r}")
    frame = scores.sort_values([*KEYS, "candidate"], kind="stable").reset_index(drop=True)
    grouped = frame.groupby(KEYS, sort=False)["score"]
    best = grouped.transform("max")
    at_best = frame["score"] == best
    # the first candidate (in answer-space order) at the best score
    first = frame.loc[at_best].groupby(KEYS, sort=False)["candidate"].first().rename("predicted")
    out = grouped.size().rename("candidates").to_frame().join(first)
    out["ties_at_best"] = frame.loc[at_best].groupby(KEYS, sort=False).size()
    out = out.reset_index().merge(
        instances[["relation", "instance", "answer_idx"]], on=["relation", "instance"], how="left", validate="m:1"
    )
    out["correct"] = out["predicted"] == out["answer_idx"]
    if ties == "wrong":
        out["correct"] &= out["ties_at_best"] == 1
    return out


def by_relation(predicted: pd.DataFrame) -> pd.DataFrame:
    """Accuracy (%) and instances per model, relation and template."""
    out = (
        predicted.groupby(["model", "relation", "template"], sort=False)
        .agg(instances=("correct", "size"), correct=("correct", "sum"))
        .reset_index()
    )
    out["accuracy"] = 100.0 * out["correct"] / out["instances"]
    return out


def micro(relations: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Accuracy weighted by instances (``weight`` where the frame has it), per ``by``."""
    weight = relations["weight"] if "weight" in relations else relations["instances"]
    frame = relations.assign(_w=weight, _wa=weight * relations["accuracy"])
    out = frame.groupby(by, sort=False).agg(instances=("instances", "sum"), _w=("_w", "sum"), _wa=("_wa", "sum"))
    out["accuracy"] = out["_wa"] / out["_w"]
    return out.drop(columns=["_w", "_wa"]).reset_index()


def over_templates(per_template: pd.DataFrame, by: list[str], ddof: int = 1) -> pd.DataFrame:
    """Mean ± standard error of ``accuracy`` over the templates, per ``by``."""

    def summary(values: pd.Series) -> pd.Series:
        n = len(values)
        sem = float(np.std(values, ddof=ddof) / np.sqrt(n)) if n > ddof else float("nan")
        return pd.Series({"templates": n, "mean": float(values.mean()), "sem": sem})

    return per_template.groupby(by, sort=False)["accuracy"].apply(summary).unstack().reset_index()


def by_domain(relations: pd.DataFrame, domains: pd.DataFrame, divide_support: bool = True) -> pd.DataFrame:
    """Accuracy per model, template and domain; ``domains`` has ``relation`` and a list ``domains``."""
    exploded = domains[["relation", "domains"]].explode("domains").dropna().rename(columns={"domains": "domain"})
    counts = exploded.groupby("relation").size().rename("domain_count")
    frame = relations.merge(exploded, on="relation").merge(counts, on="relation")
    frame["weight"] = frame["instances"] / (frame["domain_count"] if divide_support else 1)
    return micro(frame, ["model", "template", "domain"])


def random_baseline(instances: pd.DataFrame, relations: pd.DataFrame) -> float:
    """The mean over instances of 1 / |answer space|, in percent."""
    sizes = relations.set_index("relation")["answer_space_labels"].map(len)
    return float(100.0 * (1.0 / instances["relation"].map(sizes)).mean())
