"""Calibration of BEAR's answers: per model and template, p(c) is the softmax over the relation's
answer space of the candidates' statement scores (an instance's scores, ``bear_scores``), the
confidence max p(c), an answer right as BEAR counts it (``metrics.predictions``: the first
candidate at the best score, ``ties``). ECE over equal-width bins ((m-1)/M, m/M], the multi-class
Brier score, accuracy and mean confidence over all instances, and KL(gold objects || answer-space
prior) per relation averaged over relations, each with its 95% cluster bootstrap interval
(relations, then instances; the KL: relations). No temperature is fitted: BEAR has no split to fit
it on. The measures are knowprobe.uncertainty's."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import uncertainty
from ..uncertainty import bootstrap, calibration, formatting
from .metrics import KEYS

MEASURES = ("accuracy", "confidence", "ece", "brier", "prior_kl")


def relation_matrices(scores: pd.DataFrame, predicted: pd.DataFrame):
    """Per (model, template, relation): the ``[instance, candidate]`` scores, the gold candidate
    of each instance and whether BEAR counts its answer right."""
    frame = scores.sort_values([*KEYS, "candidate"], kind="stable")
    right = predicted.set_index(KEYS)[["answer_idx", "correct"]]
    for (model, template, relation), part in frame.groupby(["model", "template", "relation"], sort=False):
        matrix = part.pivot(index="instance", columns="candidate", values="score")
        keys = pd.MultiIndex.from_arrays(
            [[model] * len(matrix), [relation] * len(matrix), [template] * len(matrix), matrix.index]
        )
        judged = right.reindex(keys)
        yield (
            (model, template, relation),
            matrix.to_numpy(np.float64),
            judged["answer_idx"].to_numpy(),
            judged["correct"].to_numpy(bool),
        )


def calibration_table(
    scores: pd.DataFrame, predicted: pd.DataFrame, bins: int, settings: uncertainty.Settings
) -> pd.DataFrame:
    """One row per model and template: the measures (accuracy, confidence, ECE in %; Brier; the
    prior's KL) with ``<measure>_low`` and ``_high``, relations and instances."""
    collected = {}
    for (model, template, relation), matrix, gold, right in relation_matrices(scores, predicted):
        p = calibration.softmax(matrix)
        gold = gold.astype(np.int64)
        entry = collected.setdefault(
            (model, template), {"relation": [], "confidence": [], "right": [], "brier": [], "kl": []}
        )
        gold_p = p[np.arange(len(gold)), gold]
        entry["relation"].append(np.full(len(gold), relation, dtype=object))
        entry["confidence"].append(p.max(axis=1))
        entry["right"].append(right)
        entry["brier"].append((p**2).sum(axis=1) - 2 * gold_p + 1)
        entry["kl"].append(calibration.prior_kl(p, gold))
    rows = []
    for (model, template), entry in collected.items():
        relation = np.concatenate(entry["relation"])
        confidence, right = np.concatenate(entry["confidence"]), np.concatenate(entry["right"])
        brier = np.concatenate(entry["brier"])
        rng = bootstrap.stream(settings.seed, "bear calibration", model, str(template))
        found = calibration.calibration_intervals(
            relation, confidence, right, brier, bins, settings.bootstrap, rng, settings.min_clusters
        )
        kl = np.asarray(entry["kl"])
        rng = bootstrap.stream(settings.seed, "bear prior_kl", model, str(template))
        found["prior_kl"] = bootstrap.cluster_interval(
            np.arange(len(kl)).astype(str), kl, settings.bootstrap, rng, settings.min_clusters
        )
        row = {"model": model, "template": template}
        for measure in MEASURES:
            scale = 100 if measure in ("accuracy", "confidence", "ece") else 1
            row[measure] = scale * found[measure].value
            row[f"{measure}_low"] = scale * found[measure].low
            row[f"{measure}_high"] = scale * found[measure].high
        rows.append({**row, "relations": len(kl), "instances": len(right)})
    return pd.DataFrame(rows)


def layout(table: pd.DataFrame) -> pd.DataFrame:
    """For people: each measure as "value [low, high]"."""
    digits = {"accuracy": 1, "confidence": 1, "ece": 1, "brier": 3, "prior_kl": 3}
    cells = {
        measure: [
            formatting.cell(r[measure], r[f"{measure}_low"], r[f"{measure}_high"], d) for r in table.to_dict("records")
        ]
        for measure, d in digits.items()
    }
    return table[["model", "template"]].assign(**cells, relations=table["relations"], instances=table["instances"])
