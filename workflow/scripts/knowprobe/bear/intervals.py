"""BEAR's numbers with their uncertainty (knowprobe.uncertainty): the BEAR score and each template's
accuracy per model with a two-stage cluster bootstrap interval, and paired comparisons of models.

- **Clusters and items.** The relations are the clusters (a relation's instances share its
  templates and its answer space), its instances the items: a replicate draws the relations with
  replacement, then the instances of each drawn relation with replacement.
- **A template's accuracy** is lm-pub-quiz's micro accuracy (``accumulate_metrics``: relations
  weighted by their instances): the share of all instances answered right, so the replicate
  recomputes the share over every drawn instance (``pooled``).
- **The BEAR score** is the mean of the templates' micro accuracies. An instance is answered under
  every template of its relation, so the score is the mean over instances of the share of its
  templates answered right (an instance's templates are not independent of each other: they are
  resampled together, as one item). Where every relation has the same number of templates (BEAR:
  3) the two are equal; the table's value is the latter, its ``templates`` column says how many.
  (The leaderboard's "±", the standard error over the three templates, is a different quantity:
  the spread of the templates, not sampling error; the table keeps it as ``sem``.)
- **Paired comparisons**: two models on the same instances; the difference of the BEAR score with
  the paired interval (each instance's difference of template shares resampled, relations then
  instances), and per template the difference of accuracy with its paired interval and McNemar's
  exact test per relation (Holm), which needs one right/wrong answer per instance and model.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import uncertainty
from ..uncertainty import bootstrap, formatting, paired

SCORE = "BEAR score"
GROUP = ["model", "measure"]


def template_name(template: int) -> str:
    return f"template {int(template) + 1}"


def items(predicted: pd.DataFrame) -> pd.DataFrame:
    """``model, measure, relation, instance, correct``: a row per instance and template (measure
    "template k", correct 0 or 1) and per instance (measure "BEAR score", correct the share of its
    templates answered right), from ``metrics.predictions``."""
    per_template = predicted[["model", "relation", "template", "instance", "correct"]].astype({"correct": float})
    score = (
        per_template.groupby(["model", "relation", "instance"], sort=False)["correct"]
        .mean()
        .reset_index()
        .assign(measure=SCORE)
    )
    templates = per_template.sort_values("template", kind="stable").assign(
        measure=lambda f: f["template"].map(template_name)
    )
    columns = ["model", "measure", "relation", "instance", "correct"]
    frame = pd.concat([score[columns], templates[columns]], ignore_index=True)
    order = {model: i for i, model in enumerate(dict.fromkeys(predicted["model"]))}
    return frame.sort_values("model", key=lambda m: m.map(order), kind="stable").reset_index(drop=True)


def interval_table(frame: pd.DataFrame, settings: uncertainty.Settings, ddof: int = 1) -> pd.DataFrame:
    """A row per model and measure (the BEAR score, each template's accuracy): the value (%) with its
    interval, the relations (clusters) and instances; the BEAR score's row has the templates and
    their standard error (the leaderboard's "±", ``std(ddof) / sqrt(templates)``)."""
    table = bootstrap.interval_rows(frame, GROUP, "relation", "correct", settings, pooled=True)
    out = formatting.in_percent(table, GROUP, "accuracy", "relations", "instances")
    templates = out[out["measure"] != SCORE].groupby("model", sort=False)["accuracy"]
    count = templates.size()
    sem = templates.std(ddof=ddof) / np.sqrt(count)
    is_score = out["measure"] == SCORE
    out["templates"] = np.where(is_score, out["model"].map(count), 1)
    out["sem"] = np.where(is_score, out["model"].map(sem), np.nan)
    return out[[*GROUP, "accuracy", "low", "high", "sem", "templates", "relations", "instances", "note"]]


def layout(table: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "model": table["model"],
            "measure": table["measure"],
            "accuracy": [formatting.cell(r.accuracy, r.low, r.high) for r in table.itertuples()],
            "± sem over templates": ["" if np.isnan(r.sem) else f"{r.sem:.1f}" for r in table.itertuples()],
            "relations": [
                r.relations if not r.note else f"{r.relations} (too few for an interval)" for r in table.itertuples()
            ],
            "instances": table["instances"],
        }
    )


def figure_bars(table: pd.DataFrame):
    """The intervals figure's bars: a group per model, a bar per measure (the BEAR score, then each
    template), each with its accuracy and its interval's bounds (NaN: no interval). Returns (models,
    values, errors) as ``figures.grouped_bars`` takes them."""
    models = list(dict.fromkeys(table["model"]))
    values, errors = {}, {}
    for measure, part in table.groupby("measure", sort=False):
        part = part.set_index("model").reindex(models)
        values[measure] = part["accuracy"].to_numpy(dtype=float)
        errors[measure] = (part["low"].to_numpy(dtype=float), part["high"].to_numpy(dtype=float))
    return models, values, errors


def default_comparisons(config: dict, models: list[str]) -> list[tuple[str, str]]:
    """``comparisons.model_pairs``, or each model against the next of ``models``."""
    pairs = config["model_pairs"] if config["model_pairs"] is not None else list(zip(models, models[1:]))
    return [(a, b) for a, b in pairs if a in models and b in models]


def comparisons(frame: pd.DataFrame, model_pairs, settings: uncertainty.Settings):
    """Per pair of models: the BEAR score's difference A - B (points) with its paired interval over
    the instances both answered, then each template's difference with its paired interval and the
    relations where A or B is better (McNemar, Holm). Returns (summary, per-relation tests)."""
    columns = [
        "A",
        "B",
        "measure",
        "difference",
        "low",
        "high",
        "relations",
        "instances",
        "A better",
        "no difference",
        "B better",
        "note",
    ]
    summary, tests = [], []
    groups = dict(tuple(frame.groupby(GROUP, sort=False)))
    for a, b in model_pairs:
        score_a, score_b = groups.get((a, SCORE)), groups.get((b, SCORE))
        if score_a is None or score_b is None:
            continue
        joined = score_a.merge(score_b, on=["relation", "instance"], suffixes=("_a", "_b"))
        found = paired.paired_interval(
            joined["relation"],
            joined["correct_a"],
            joined["correct_b"],
            settings.bootstrap,
            bootstrap.stream(settings.seed, "paired", a, b, SCORE),
            settings.min_clusters,
            pooled=True,
        )
        summary.append(
            {
                "A": a,
                "B": b,
                "measure": SCORE,
                "difference": 100 * found.value,
                "low": 100 * found.low,
                "high": 100 * found.high,
                "relations": found.clusters,
                "instances": found.items,
                "A better": np.nan,
                "no difference": np.nan,
                "B better": np.nan,
                "note": found.note or "McNemar's tests per template",
            }
        )
        measures = [m for m in dict.fromkeys(frame["measure"]) if m != SCORE]
        pairs = [((a, m), (b, m)) for m in measures]
        part, per_relation = paired.comparison_table(
            groups,
            pairs,
            lambda key: key[1],
            "relation",
            "instance",
            "correct",
            settings,
            name_of=lambda key: key[0],
            pooled=True,
        )
        summary += part.rename(columns={"dataset": "measure", "clusters": "relations", "items": "instances"}).to_dict(
            "records"
        )
        tests.append(per_relation.rename(columns={"cluster": "relation", "dataset": "measure"}))
    test_columns = ["A", "B", "measure", "relation", "b", "c", "p", "p_holm", "verdict"]
    return pd.DataFrame(summary, columns=columns), (
        pd.concat(tests, ignore_index=True) if tests else pd.DataFrame(columns=test_columns)
    )


def comparison_layout(summary: pd.DataFrame) -> pd.DataFrame:
    def count(value):
        return "–" if pd.isna(value) else str(int(value))

    return pd.DataFrame(
        {
            "A": summary["A"],
            "B": summary["B"],
            "measure": summary["measure"],
            "A - B (points)": [formatting.cell(r.difference, r.low, r.high) for r in summary.itertuples()],
            "relations": [
                r.relations if "fewer than" not in r.note else f"{r.relations} (too few for an interval)"
                for r in summary.itertuples()
            ],
            "instances": summary["instances"],
            **{column: summary[column].map(count) for column in ("A better", "no difference", "B better")},
        }
    )


def headlines(table: pd.DataFrame) -> list[str]:
    """The report's landing-page line per model: the BEAR score with its interval over relations and
    the standard error over templates (the leaderboard's "±")."""
    lines = []
    for row in table[table["measure"] == SCORE].itertuples():
        interval = formatting.cell(row.accuracy, row.low, row.high)
        extent = f"{row.relations} relations" + (", too few for an interval" if row.note else ", 95% interval")
        lines.append(
            f"{row.model}: BEAR score {interval}% ({extent}; ± {row.sem:.1f} sem over {row.templates} templates)"
        )
    return lines
