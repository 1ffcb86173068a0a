"""Paraphrase consistency of a prompt set (ParaRel, Elazar et al., TACL 2021) from the probe's
answers: a relation's prompts are a family of paraphrases (manual ones, mined ones, back-translated
ones); per subject (fact), the share of ordered pairs of its prompts whose answers (the best
candidate) agree, right or wrong, averaged over the relation's subjects and then over relations;
beside it the share of subjects all of whose prompts are right (consistent accuracy) and all of
whose prompts agree. With ``article_rule``, ParaRel's rule: a prompt whose "a"/"an" before [Y]
disagrees with the gold object is skipped for that fact. Subjects left with fewer than two prompts,
and relations with one prompt, do not enter. The measures are knowprobe.uncertainty's."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import uncertainty
from .metrics import relation_grid


def relation_arrays(table: pd.DataFrame, relation: str, article_rule: bool = True):
    """``[fact, prompt]`` answers, correctness and kept prompts of one relation's probe rows."""
    grid, prompts, facts = relation_grid(table, relation)
    answers = table["prediction"].to_numpy()[grid].T
    right = (table["gold_rank"].to_numpy()[grid] == 0).T
    kept = np.ones(answers.shape, dtype=bool)
    if article_rule:
        templates, objects = prompts["template"].to_numpy(), facts["obj_label"].to_numpy()
        kept = np.array([[not uncertainty.article_mismatch(t, o) for t in templates] for o in objects], dtype=bool)
        kept = kept.reshape(answers.shape)
    return answers, right, kept


def prompt_set_consistency(table: pd.DataFrame, article_rule: bool = True):
    """ParaRel's measures of one probe table (one model, prompt set, dataset): the totals
    (``uncertainty.Consistency``) and one row per relation with two prompts or more."""
    skipped = 0
    cluster_ids, answers_all, right_all, kept_all = [], [], [], []
    width = table.groupby("relation")["prompt_id"].nunique().max() if len(table) else 0
    for relation in sorted(set(table["relation"])):
        answers, right, kept = relation_arrays(table, relation, article_rule)
        if answers.shape[1] < 2:
            continue
        pad = width - answers.shape[1]
        answers_all.append(np.pad(answers.astype(object), ((0, 0), (0, pad)), constant_values=None))
        right_all.append(np.pad(right, ((0, 0), (0, pad))))
        kept_all.append(np.pad(kept, ((0, 0), (0, pad))))
        cluster_ids += [relation] * len(answers)
        skipped += int((~kept).sum())
    if not cluster_ids:
        return uncertainty.Consistency(np.nan, np.nan, np.nan, 0, 0, 0), pd.DataFrame()
    total, per = uncertainty.consistency(
        np.array(cluster_ids), np.concatenate(answers_all), np.concatenate(right_all), np.concatenate(kept_all)
    )
    total = uncertainty.Consistency(**{**total.__dict__, "skipped": skipped})
    return total, pd.DataFrame(per).rename(columns={"cluster": "relation"})
