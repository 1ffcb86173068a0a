"""Paraphrase consistency of a prompt set (ParaRel, Elazar et al., TACL 2021) from the probe's
answers: a relation's prompts are a family of paraphrases (manual ones, mined ones, back-translated
ones); the share of ordered pairs of a subject's (fact's) prompts whose answers (the best
candidate) agree, right or wrong, per relation, then averaged over relations;
beside it the share of subjects all of whose prompts are right (consistent accuracy) and all of
whose prompts agree. With ``article_rule``, ParaRel's rule: a prompt whose "a"/"an" before [Y]
disagrees with the gold object is skipped for that fact. Two readings
(``consistency.subject_rows``): ``pararel``, as ParaRel's code computes them (the default), and
``per_subject``, each subject's share averaged. Relations with one prompt do not enter. The
measures are knowprobe.uncertainty's."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import uncertainty
from ..uncertainty import bootstrap, consistency
from .metrics import relation_grid


def relation_arrays(table: pd.DataFrame, relation: str, article_rule: bool = True):
    """``[fact, prompt]`` answers, correctness and kept prompts of one relation's probe rows."""
    grid, prompts, facts = relation_grid(table, relation)
    answers = table["prediction"].to_numpy()[grid].T
    right = (table["gold_rank"].to_numpy()[grid] == 0).T
    kept = np.ones(answers.shape, dtype=bool)
    if article_rule:
        templates, objects = prompts["template"].to_numpy(), facts["obj_label"].to_numpy()
        kept = np.array([[not consistency.article_mismatch(t, o) for t in templates] for o in objects], dtype=bool)
        kept = kept.reshape(answers.shape)
    return answers, right, kept


def relation_subjects(table: pd.DataFrame, article_rule: bool = True):
    """Every relation with two prompts or more as ``[subject, prompt]`` arrays stacked over
    relations (prompts padded: not present, not kept): cluster ids, answers, correctness, kept,
    present, and the (subject, prompt) entries the article rule skipped."""
    skipped = 0
    cluster_ids, answers_all, right_all, kept_all, present_all = [], [], [], [], []
    width = table.groupby("relation")["prompt_id"].nunique().max() if len(table) else 0
    for relation in sorted(set(table["relation"])):
        answers, right, kept = relation_arrays(table, relation, article_rule)
        if answers.shape[1] < 2:
            continue
        pad = width - answers.shape[1]
        answers_all.append(np.pad(answers.astype(object), ((0, 0), (0, pad)), constant_values=None))
        right_all.append(np.pad(right, ((0, 0), (0, pad))))
        kept_all.append(np.pad(kept, ((0, 0), (0, pad))))
        present_all.append(np.pad(np.ones(answers.shape, bool), ((0, 0), (0, pad))))
        cluster_ids += [relation] * len(answers)
        skipped += int((~kept).sum())
    if not cluster_ids:
        return None
    arrays = (answers_all, right_all, kept_all, present_all)
    return (np.array(cluster_ids), *map(np.concatenate, arrays), skipped)


def prompt_set_consistency(table: pd.DataFrame, article_rule: bool = True, reading: str = "pararel"):
    """ParaRel's measures of one probe table (one model, prompt set, dataset) under ``reading``
    (``consistency.subject_rows``: ParaRel's code by default): the totals
    (``consistency.Consistency``) and one row per relation with two prompts or more."""
    found = relation_subjects(table, article_rule)
    if found is None:
        return consistency.Consistency(np.nan, np.nan, np.nan, 0, 0, 0, reading), pd.DataFrame()
    cluster_ids, answers, right, kept, present, skipped = found
    total, per = consistency.consistency(cluster_ids, answers, right, kept, present, reading)
    total = consistency.Consistency(**{**total.__dict__, "skipped": skipped})
    return total, pd.DataFrame(per).rename(columns={"cluster": "relation"})


def consistency_intervals(
    table: pd.DataFrame, settings: uncertainty.Settings, article_rule: bool = True, reading: str = "pararel"
) -> dict[str, bootstrap.Interval]:
    """The 95% intervals of the three measures (relations, then subjects; the two-stage cluster
    bootstrap, each measure from a stream of its own): consistency under ``pararel`` is each
    relation's pooled ratio (``consistency.ratio_interval``), every other measure a mean over
    relations of the mean over the subjects that enter it (``bootstrap.cluster_interval``)."""
    found = relation_subjects(table, article_rule)
    if found is None:
        return {}
    cluster_ids, answers, right, kept, present, _ = found
    rows = consistency.subject_rows(answers, right, kept, present, reading)
    out = {}
    key = (reading, str(article_rule), str(len(table)))
    if reading == "pararel":
        rng = bootstrap.stream(settings.seed, "consistency", *key)
        out["consistency"] = consistency.ratio_interval(
            cluster_ids, rows["agreeing"], rows["pairs"], settings.bootstrap, rng, settings.min_clusters
        )
    for measure in ("share", "all_right", "all_agree") if reading == "per_subject" else ("all_right", "all_agree"):
        values = rows[measure]
        enter = ~np.isnan(values)
        rng = bootstrap.stream(settings.seed, measure, *key)
        name = {"share": "consistency", "all_right": "consistent_accuracy", "all_agree": "all_agree"}[measure]
        out[name] = bootstrap.cluster_interval(
            cluster_ids[enter], values[enter], settings.bootstrap, rng, settings.min_clusters
        )
    return out
