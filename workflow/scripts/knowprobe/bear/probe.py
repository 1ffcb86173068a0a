"""BEAR's scores: every template of every relation, filled with each instance's subject and each
candidate of the relation's answer space (a *statement*, ``knowprobe.statements.fill_statement``:
the first character upper-cased by default, as lm-pub-quiz), scored by the shared statement scores
(``statement_logprob`` of the scoring layer, docs/scoring.md): for masked LMs the pseudo-log-
likelihood summed over the statement's tokens (``within_word_l2r`` by default, ``original`` as an
option), for causal LMs the sum of every token's log-probability after BOS; with ``conditional`` only
the answer's tokens (lm-pub-quiz's answer-span reduction). The scorer shares a fact's prefix among
its candidates and scores identical statements once.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from ..scoring.recheck import Recheck, recheck_groups

SCORE_COLUMNS = ["model", "relation", "template", "instance", "candidate", "score"]


def statements(relations: pd.DataFrame, instances: pd.DataFrame, capitalize: bool = True) -> pd.DataFrame:
    """Every statement to score: ``relation, template, instance, candidate, text, answer_start,
    answer_end`` (the answer's characters in the text)."""
    from ..statements import fill_statement

    by_relation = dict(tuple(instances.groupby("relation", sort=False)))
    rows = []
    for relation in relations.itertuples(index=False):
        part = by_relation.get(relation.relation)
        if part is None:
            continue
        for t, template in enumerate(relation.templates):
            for instance, subject in zip(part["instance"], part["sub_label"]):
                for c, answer in enumerate(relation.answer_space_labels):
                    filled = fill_statement(template, subject, answer, capitalize=capitalize)
                    rows.append(
                        (relation.relation, t, instance, c, filled.text, filled.answer_start, filled.answer_end)
                    )
    return pd.DataFrame(
        rows, columns=["relation", "template", "instance", "candidate", "text", "answer_start", "answer_end"]
    )


def score(
    scorer, model: str, statements_: pd.DataFrame, pll: str = "within_word_l2r", conditional: bool = False
) -> pd.DataFrame:
    """The statements' scores (``SCORE_COLUMNS``)."""
    spans = list(zip(statements_["answer_start"], statements_["answer_end"])) if conditional else None
    values = scorer.statement_logprob(list(statements_["text"]), spans, pll=pll)
    out = statements_[["relation", "template", "instance", "candidate"]].copy()
    out.insert(0, "model", model)
    out["score"] = np.asarray(values, dtype=np.float64)
    return out[SCORE_COLUMNS]


def recheck(
    scores: pd.DataFrame, rescore: Callable[[np.ndarray], np.ndarray], share: float, factor: float
) -> tuple[pd.DataFrame, Recheck]:
    """``scores`` (``SCORE_COLUMNS``, from a model below float32) with float32's scores where the
    scoring layer's recheck asks for them (``knowprobe.scoring.recheck``): an (instance, template)
    is a group deciding by its best answer, ties to the first in the answer space (the rows of a
    group are in that order); ``rescore(rows)`` gives the float32 scores of the rows at those
    positions."""
    groups = scores.groupby(["relation", "template", "instance"], sort=False).ngroup().to_numpy()
    checked, report = recheck_groups(
        scores["score"].to_numpy(), groups, rescore, share, factor, decision="best", unit="(instance, template) groups"
    )
    return scores.assign(score=checked), report


def cost(relations: pd.DataFrame, instances: pd.DataFrame) -> int:
    """The statements a model scores: Σ over relations of templates × instances × answers."""
    counts = instances.groupby("relation").size()
    return int(
        sum(
            len(r.templates) * int(counts.get(r.relation, 0)) * len(r.answer_space_labels)
            for r in relations.itertuples(index=False)
        )
    )
