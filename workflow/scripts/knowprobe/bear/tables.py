"""BEAR's tables: the BEAR score of each model (each template's micro accuracy, their mean ±
standard error) beside the leaderboard's, the random baseline; accuracy per relation and per
domain. Every row names the score and the tie rule it was computed with."""

from __future__ import annotations

import re

import pandas as pd

from ..tables import left_out_note as shared_left_out_note
from . import metrics
from .left_out import LEFT_OUT_COLUMNS


def score_name(kind: str, pll: str, conditional: bool, start_token: str | None = None) -> str:
    """The statement score a model's numbers come from, as the tables name it; a causal model's
    with the start token its probe put before every statement (``start_token``: its label, as
    ``scoring.start_token.StartToken.label`` gives it)."""
    if kind == "masked":
        return f"PLL {pll}" + (", answer tokens" if conditional else "")
    if start_token is None or (isinstance(start_token, float) and start_token != start_token):
        after = "the start token"  # a record from before the probe named it
    elif start_token.startswith("none"):
        after = f"no start token ({start_token})" if start_token != "none" else "no start token"
    else:
        after = f"the start token {start_token}"
    if conditional:
        return f"answer-to-end log-prob after {after} and prefix"
    return f"statement log-prob after {after}"


def model_settings(models: pd.DataFrame, pll: str, conditional: bool, ties: str) -> pd.DataFrame:
    """Each model's ``model, kind, family, parameters`` with the ``score`` (a causal model's with
    the start token its probe recorded) and ``ties`` it used."""
    out = models[["model", "kind", "family", "parameters"]].copy()
    starts = models["start_token"] if "start_token" in models else [None] * len(models)
    out["score"] = [score_name(k, pll, conditional, start) for k, start in zip(out["kind"], starts)]
    out["ties"] = ties
    return out


def leaderboard_entry(model: str, hub_id: str | None, paper: dict) -> dict | None:
    """The leaderboard's entry for a model: by its name, else its hub id's last part."""
    entries = {name.lower(): entry for name, entry in paper["models"].items()}
    hub_name = hub_id.rsplit("/", 1)[-1] if isinstance(hub_id, str) else None
    for name in (model, hub_name):
        if name and name.lower() in entries:
            return entries[name.lower()]
    return None


def accuracy(
    predicted: pd.DataFrame, models: pd.DataFrame, paper: dict, ddof: int, settings: pd.DataFrame
) -> pd.DataFrame:
    """One row per model: each template's micro accuracy, their mean and standard error, the
    leaderboard's mean and sem where it lists the model and the difference (ours − theirs)."""
    relations = metrics.by_relation(predicted)
    per_template = metrics.micro(relations, ["model", "template"])
    summary = metrics.over_templates(per_template, ["model"], ddof)
    wide = per_template.pivot_table(index="model", columns="template", values="accuracy", sort=False)
    wide.columns = [f"template_{t + 1}" for t in wide.columns]
    out = settings.merge(summary, on="model").merge(wide.reset_index(), on="model")
    out = out.merge(per_template.groupby("model", sort=False)["instances"].max().reset_index(), on="model")
    hub_ids = dict(zip(models["model"], models.get("hub_id", pd.Series([None] * len(models)))))
    board = [leaderboard_entry(m, hub_ids.get(m), paper) or {} for m in out["model"]]
    out["leaderboard_mean"] = [b.get("mean") for b in board]
    out["leaderboard_sem"] = [b.get("sem") for b in board]
    out["difference"] = out["mean"].round(1) - out["leaderboard_mean"].astype(float).round(1)
    return out


def plus_minus(mean, sem) -> str:
    """'mean ± sem' with one decimal; the mean alone without a sem, '–' without a mean."""
    if mean is None or pd.isna(mean):
        return "–"
    return f"{mean:.1f}" if sem is None or pd.isna(sem) else f"{mean:.1f} ± {sem:.1f}"


def accuracy_layout(table: pd.DataFrame, baseline: float, paper_baseline: float | None) -> pd.DataFrame:
    """The accuracy table for people: a row per model, then the random baseline."""
    templates = [c for c in table.columns if c.startswith("template_")]
    pm = plus_minus

    rows = []
    for row in table.itertuples(index=False):
        rows.append(
            {
                "model": row.model,
                "kind": row.kind,
                "score": row.score,
                "parameters (M)": f"{row.parameters / 1e6:.1f}",
                **{f"template {c.split('_')[1]}": getattr(row, c) for c in templates},
                "BEAR (mean ± sem)": pm(row.mean, row.sem),
                "leaderboard": pm(row.leaderboard_mean, row.leaderboard_sem),
                "difference": "–" if pd.isna(row.difference) else f"{row.difference:+.1f}",
            }
        )
    rows.append(
        {
            "model": "random baseline",
            "kind": "–",
            "score": "1 / answer-space size",
            "parameters (M)": "–",
            **{f"template {c.split('_')[1]}": baseline for c in templates},
            "BEAR (mean ± sem)": f"{baseline:.1f}",
            "leaderboard": "–" if paper_baseline is None else f"{paper_baseline:.1f}",
            "difference": "–" if paper_baseline is None else f"{round(baseline, 1) - round(paper_baseline, 1):+.1f}",
        }
    )
    return pd.DataFrame(rows)


def relations_table(predicted: pd.DataFrame, relations: pd.DataFrame, settings: pd.DataFrame) -> pd.DataFrame:
    """Accuracy per model, relation and template (long form), with the relation's answers and domains."""
    out = metrics.by_relation(predicted)
    info = relations.assign(
        answers=relations["answer_space_labels"].map(len), domains=relations["domains"].map(", ".join)
    )[["relation", "answers", "domains"]]
    out = out.merge(info, on="relation", how="left").merge(settings[["model", "score", "ties"]], on="model")
    out["template"] = out["template"] + 1
    return out[
        ["model", "relation", "domains", "answers", "template", "instances", "correct", "accuracy", "score", "ties"]
    ]


def relations_layout(table: pd.DataFrame, ddof: int) -> pd.DataFrame:
    """A row per relation, a column per model: its accuracy's mean ± sem over the templates."""
    summary = metrics.over_templates(table, ["relation", "model"], ddof)
    summary["cell"] = [plus_minus(m, s) for m, s in zip(summary["mean"], summary["sem"])]
    wide = summary.pivot_table(index="relation", columns="model", values="cell", aggfunc="first", sort=False)
    info = table.drop_duplicates("relation").set_index("relation")[["domains", "answers", "instances"]]
    out = info.join(wide).reset_index()
    # P20 before P103, as BEAR's files sort (natural order)
    order = sorted(
        out.index, key=lambda i: [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", out.loc[i, "relation"])]
    )
    return out.loc[order].reset_index(drop=True)


def with_domains(relations: pd.DataFrame, domains: dict[str, list[str]]) -> pd.DataFrame:
    """The relations with a ``domains`` column (relation_info.json's; empty for a relation it
    does not list, and for all without it)."""
    return relations.assign(domains=[list(domains.get(code, [])) for code in relations["relation"]])


DOMAIN_COLUMNS = ["model", "domain", "template", "instances", "accuracy", "score", "ties"]


def domains_table(
    predicted: pd.DataFrame, relations: pd.DataFrame, settings: pd.DataFrame, divide_support: bool
) -> pd.DataFrame:
    """Accuracy per model, domain and template (long form); no rows where no relation has a
    domain (bear.relation_info.path: null)."""
    if not relations["domains"].map(len).any():
        return pd.DataFrame(columns=DOMAIN_COLUMNS)
    out = metrics.by_domain(metrics.by_relation(predicted), relations, divide_support)
    out = out.merge(settings[["model", "score", "ties"]], on="model")
    out["template"] = out["template"] + 1
    return out[DOMAIN_COLUMNS]


def domains_layout(table: pd.DataFrame, ddof: int) -> pd.DataFrame:
    if not len(table):
        return pd.DataFrame(columns=["domain"])
    summary = metrics.over_templates(table, ["domain", "model"], ddof)
    summary["cell"] = [plus_minus(m, s) for m, s in zip(summary["mean"], summary["sem"])]
    wide = summary.pivot_table(index="domain", columns="model", values="cell", aggfunc="first", sort=True)
    return wide.reset_index().rename_axis(columns=None)


def left_out_note(models: pd.DataFrame) -> str:
    """The tables' note on what each model could not take (``probe.leave_out``, in the model's
    record's ``left_out``)."""
    by_model = {}
    for row in models.to_dict("records"):
        records = row.get("left_out")
        by_model[row["model"]] = pd.DataFrame(records if isinstance(records, list) else [], columns=LEFT_OUT_COLUMNS)
    return shared_left_out_note(by_model)


def headlines(table: pd.DataFrame) -> list[str]:
    """The report's landing-page line per model: the BEAR score beside the leaderboard's."""
    lines = []
    for row in table.itertuples(index=False):
        board = "" if pd.isna(row.leaderboard_mean) else f" (leaderboard {row.leaderboard_mean:.1f})"
        lines.append(f"{row.model}: BEAR {row.mean:.1f} ± {row.sem:.1f}{board}, {row.score}")
    return lines
