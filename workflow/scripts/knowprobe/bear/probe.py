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
from .left_out import LEFT_OUT_COLUMNS, LEFT_OUT_REASONS, left_out_line  # noqa: F401 (the probe's names)

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


def leave_out(scorer, statements_: pd.DataFrame, instances: pd.DataFrame, conditional: bool = False):
    """The statements this model can score, and a table (``LEFT_OUT_COLUMNS``) of the others by
    reason, each with its first message (inputs quoted to 80 characters). A statement the model
    cannot take is left out, so its candidate cannot be this instance's answer under this template;
    where it is the right answer's, the whole (instance, template) is left out (counted as
    ``gold_left_out``): no number is computed from a fact the model could not be asked. Every
    other statement keeps its score, every other fact its number."""
    if not len(statements_):
        return statements_, pd.DataFrame(columns=LEFT_OUT_COLUMNS)
    keys = statements_["answer_start"].astype(str) + ":" + statements_["answer_end"].astype(str) + ":"
    codes, distinct = pd.factorize(keys + statements_["text"], sort=False)
    rows = statements_.iloc[np.unique(codes, return_index=True)[1]]  # each distinct statement's first row
    spans = list(zip(rows["answer_start"], rows["answer_end"])) if conditional else None
    problems = scorer.statement_problems(list(rows["text"]), spans)
    reason = np.array([p[0] if p else "" for p in problems], dtype=object)[codes]
    bad = reason != ""
    gold = (
        statements_[["relation", "instance"]]
        .merge(instances[["relation", "instance", "answer_idx"]], on=["relation", "instance"], how="left")["answer_idx"]
        .to_numpy()
    )
    is_gold = statements_["candidate"].to_numpy() == gold
    group = ["relation", "template", "instance"]
    lost = statements_.loc[bad & is_gold, group].drop_duplicates()
    in_lost = statements_[group].merge(lost.assign(_lost=True), on=group, how="left")["_lost"].fillna(False)
    kept = statements_.loc[~bad & ~in_lost.to_numpy(dtype=bool)]
    examples = {}
    for problem in problems:
        if problem:
            examples.setdefault(problem[0], problem[1])
    table = [
        {"reason": name, "description": LEFT_OUT_REASONS[name], "n": int((reason == name).sum()), "example": example}
        for name, example in sorted(examples.items(), key=lambda item: list(LEFT_OUT_REASONS).index(item[0]))
    ]
    if len(lost):
        first_lost = lost.iloc[0]
        table.append(
            {
                "reason": "gold_left_out",
                "description": LEFT_OUT_REASONS["gold_left_out"],
                "n": len(lost),
                "example": f"{first_lost.relation}, template {int(first_lost.template) + 1}, "
                f"instance {int(first_lost.instance)}",
            }
        )
    return kept, pd.DataFrame(table, columns=LEFT_OUT_COLUMNS)


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
