"""BEAR's part of the demo models' corpus: the BEAR-format set's facts written out with corpus
templates (phrasings other than the probed templates), a share of the facts held out, and the words
its statements will meet (every template's words, capitalised as a statement opens, and every
answer), each to be one token of the demo's word-level vocabulary."""

from __future__ import annotations

import pandas as pd

from ..demo_model import corpus
from ..prompts import OBJECT, SUBJECT


def sentences(
    relations: pd.DataFrame, instances: pd.DataFrame, templates: pd.DataFrame, holdout: float, seed: int
) -> tuple[list[tuple[str, int, int]], set]:
    """``(text, object_start, object_end)`` of the facts not held out, and the held-out fact ids
    (``relation-instance``)."""
    facts = instances.assign(fact_id=instances["relation"] + "-" + instances["instance"].astype(str))
    return corpus(facts[["fact_id", "relation", "sub_label", "obj_label"]], templates, holdout, seed)


def words(relations: pd.DataFrame, instances: pd.DataFrame) -> list[str]:
    """The texts whose words the demo vocabulary must hold."""
    out = []
    for relation in relations.itertuples(index=False):
        for template in relation.templates:
            text = " ".join(template.replace(SUBJECT, " ").replace(OBJECT, " ").split())
            out += [text, text[:1].upper() + text[1:]]
        out += list(relation.answer_space_labels)
    out += list(dict.fromkeys(instances["sub_label"]))
    return out
