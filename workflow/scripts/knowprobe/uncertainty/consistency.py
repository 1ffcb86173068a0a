"""Paraphrase consistency as ParaRel defines it (Elazar et al., 2021): per subject, the share of
ordered pairs of its prompts that give the same answer, with ParaRel's article rule; pooled per
cluster and averaged over clusters, with the cluster bootstrap's interval (docs/uncertainty.md)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import DEFAULT_B, MIN_CLUSTERS
from .bootstrap import Interval, chunks, item_set, percentile_interval, replicate_counts

VOWELS = set("aeiouAEIOU")


def article_mismatch(template: str, obj: str) -> bool:
    """ParaRel's rule: a prompt whose "a" before ``[Y]`` meets an object starting with a vowel, or
    whose "an" meets one starting otherwise, is skipped for that fact."""
    padded = f" {template}"
    starts_vowel = bool(obj) and obj[0] in VOWELS
    return (" a [Y]" in padded and starts_vowel) or (" an [Y]" in padded and not starts_vowel)


READINGS = ("pararel", "per_subject")  # how consistency pools subjects (docs/uncertainty.md)


@dataclass(frozen=True)
class Consistency:
    consistency: float  # mean over clusters of the agreeing ordered pairs' share (reading: pooled or per subject)
    consistent_accuracy: float  # ... of the share of subjects all of whose prompts are right
    all_agree: float  # ... of the share of subjects all of whose prompts agree
    clusters: int
    subjects: int  # subjects counted (pararel: every subject of the clusters; per_subject: those with two kept prompts)
    skipped: int  # (subject, prompt) entries not kept (the article rule; a caller padding prompts counts its own)
    reading: str = "pararel"


def subject_consistency(answers: np.ndarray, right: np.ndarray, kept: np.ndarray, present: np.ndarray | None = None):
    """Per subject (rows of ``[subject, prompt]`` arrays of answer codes, correctness, whether the
    prompt is kept (the article rule) and whether it exists (``present``, default ``kept``: padding)):
    the ordered pairs of kept prompts, those agreeing, whether all present prompts are right, whether
    all kept prompts are right, whether all kept agree, and the kept prompts counted."""
    present = kept if present is None else present
    n = kept.sum(axis=1)
    same = (answers[:, :, None] == answers[:, None, :]) & kept[:, :, None] & kept[:, None, :]
    agreeing = same.sum(axis=(1, 2)) - n  # ordered pairs: leave out each prompt with itself
    pairs = n * (n - 1)
    return {
        "pairs": pairs,
        "agreeing": agreeing,
        "all_right_present": (right | ~present).all(axis=1),
        "all_right_kept": (right | ~kept).all(axis=1),
        "all_agree": agreeing == pairs,
        "kept": n,
    }


def subject_rows(answers, right, kept, present=None, reading: str = "pararel") -> dict:
    """Per subject, what each measure averages under ``reading`` (NaN where the subject does not
    enter it), the ordered pairs and the agreeing ones:

    * ``pararel`` (ParaRel's code, ``encode_consistency_probe.py``): consistency pools the
      relation's ordered pairs of kept prompts over its subjects (``analyze_results``: agreeing
      pairs over pairs); consistent accuracy is the share of *all* the relation's subjects every
      one of whose prompts is right, the article rule not applied (``group_score_lama_eval``); all
      agree, of the subjects with a kept prompt, those whose kept prompts give one answer
      (``consistent_subjects``).
    * ``per_subject``: each subject's share of agreeing pairs, then the mean over subjects with
      two kept prompts; consistent accuracy and all agree over the same subjects, on kept prompts."""
    if reading not in READINGS:
        raise ValueError(f"consistency reading {reading!r}: one of {', '.join(READINGS)}")
    found = subject_consistency(np.asarray(answers), np.asarray(right), np.asarray(kept), present)
    pairs, agreeing, n = found["pairs"], found["agreeing"], found["kept"]
    if reading == "pararel":
        share = np.full(len(pairs), np.nan)  # pooled: the cluster's sum of agreeing over its sum of pairs
        all_right = found["all_right_present"].astype(float)
        all_agree = np.where(n >= 1, found["all_agree"], np.nan)
    else:
        valid = n >= 2
        share = np.where(valid, agreeing / np.maximum(pairs, 1), np.nan)
        all_right = np.where(valid, found["all_right_kept"], np.nan)
        all_agree = np.where(valid, found["all_agree"], np.nan)
    return {"share": share, "all_right": all_right, "all_agree": all_agree, "pairs": pairs, "agreeing": agreeing}


def consistency(cluster_ids, answers, right, kept, present=None, reading: str = "pararel") -> tuple[Consistency, dict]:
    """ParaRel's consistency over ``[subject, prompt]`` arrays (one row per subject, with its
    cluster in ``cluster_ids``; prompts padded with ``present = kept = False``), read as
    ``subject_rows`` says: per cluster, then the mean over clusters. A cluster whose subjects have
    no pair of kept prompts has no consistency (NaN; ParaRel's code reports -1) and leaves that
    mean. Returns the totals and per-cluster columns."""
    rows_of = subject_rows(answers, right, kept, present, reading)
    cluster_ids = np.asarray(cluster_ids)
    per_subject = reading == "per_subject"
    entering = ~np.isnan(rows_of["share"]) if per_subject else np.ones(len(cluster_ids), bool)
    names = np.unique(cluster_ids[entering])
    rows = {
        "cluster": names,
        "subjects": [],
        "pairs": [],
        "consistency": [],
        "consistent_accuracy": [],
        "all_agree": [],
    }
    for name in names:
        mask = entering & (cluster_ids == name)
        pairs = int(rows_of["pairs"][mask].sum())
        if per_subject:
            value = float(rows_of["share"][mask].mean())
        else:
            value = float(rows_of["agreeing"][mask].sum() / pairs) if pairs else np.nan
        rows["subjects"].append(int(mask.sum()))
        rows["pairs"].append(pairs)
        rows["consistency"].append(value)
        rows["consistent_accuracy"].append(float(np.nanmean(rows_of["all_right"][mask])))
        agree = rows_of["all_agree"][mask]
        rows["all_agree"].append(float(np.nanmean(agree)) if (~np.isnan(agree)).any() else np.nan)

    def over_clusters(column):
        values = np.asarray(rows[column], dtype=float)
        return float(np.nanmean(values)) if (~np.isnan(values)).any() else np.nan

    total = Consistency(
        over_clusters("consistency"),
        over_clusters("consistent_accuracy"),
        over_clusters("all_agree"),
        len(names),
        int(entering.sum()),
        int((~np.asarray(kept)).sum() if present is None else (~np.asarray(kept) & np.asarray(present)).sum()),
        reading,
    )
    return total, rows


def ratio_interval(
    cluster_ids,
    numerators,
    denominators,
    b: int = DEFAULT_B,
    rng: np.random.Generator | None = None,
    min_clusters: int = MIN_CLUSTERS,
) -> Interval:
    """The mean over clusters of each cluster's pooled ratio (sum of numerators over sum of
    denominators of its items; ParaRel's consistency: agreeing pairs over pairs) with its two-stage
    cluster bootstrap interval: clusters, then items, drawn as indices (``replicate_counts``); a
    cluster drawn c times counts c times with the ratio of its c resamples pooled. Clusters without
    a denominator do not enter."""
    cluster_ids = np.asarray(cluster_ids)
    numerators, denominators = np.asarray(numerators, float), np.asarray(denominators, float)
    items, order = item_set(cluster_ids, np.arange(len(cluster_ids)))
    m = len(items.names)
    one_hot = np.zeros((len(items), m))
    one_hot[np.arange(len(items)), items.clusters] = 1.0
    num, den = numerators[order, None] * one_hot, denominators[order, None] * one_hot
    sums_num, sums_den = num.sum(axis=0), den.sum(axis=0)
    counted = sums_den > 0
    value = float((sums_num[counted] / sums_den[counted]).mean()) if counted.any() else np.nan
    if m < min_clusters or not counted.any():
        return percentile_interval(value, np.empty(0), m, len(items), min_clusters)
    rng = rng if rng is not None else np.random.default_rng(0)
    sizes = one_hot.sum(axis=0)
    out = np.empty(b)
    done = 0
    for size in chunks(b, len(items)):
        counts = replicate_counts(items, size, rng).astype(np.float64)
        copies = (counts @ one_hot) / sizes  # how often each cluster was drawn
        drawn_num, drawn_den = counts @ num, counts @ den
        use = (copies > 0) & (drawn_den > 0)
        ratio = np.divide(drawn_num, drawn_den, out=np.zeros_like(drawn_num), where=use)
        out[done : done + size] = (copies * ratio).sum(axis=1) / np.maximum((copies * use).sum(axis=1), 1e-12)
        done += size
    return percentile_interval(value, out, m, len(items), min_clusters)
