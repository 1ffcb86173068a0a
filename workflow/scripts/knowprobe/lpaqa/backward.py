"""LPAQA's backward features (section 6.2, Table 15): log P(subject | object, prompt).

Inspired by maximum mutual information decoding, LPAQA adds to Opti's score of an object the
backward log-probability of the subject given that object and the prompt, computed only for the
B most probable objects of each fact. Here the B objects of a fact are the same for all its
prompts: the B best by the sum of the prompts' forward log-probs (``selection.top_b_columns``).
The subject is scored in the prompt with the object filled in, by pseudo-log-likelihood: each of
its tokens masked in turn, the others visible (``MaskedLM.span_logprob``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..prompts import OBJECT, SUBJECT


def filled(template: str, subject: str, obj: str) -> tuple[str, tuple[int, int]]:
    """The template with subject and object filled in, and the subject's character span."""
    subject, obj = subject.strip(), obj.strip()
    x, y = template.index(SUBJECT), template.index(OBJECT)
    begin = x if x < y else x - len(OBJECT) + len(obj)
    return template.replace(SUBJECT, subject).replace(OBJECT, obj), (begin, begin + len(subject))


def pairs(relation: str, prompts: pd.DataFrame, facts: pd.DataFrame, columns: np.ndarray, words, token_ids):
    """One row per (prompt, fact, object among the fact's top B), in that order: what the backward
    table holds, and the text and subject span to score."""
    rows, texts, spans = [], [], []
    for prompt_id, template in zip(prompts["prompt_id"], prompts["template"]):
        for fact_id, subject, fact_columns in zip(facts["fact_id"], facts["sub_label"], columns):
            for position, column in enumerate(fact_columns):
                text, span = filled(template, subject, words[column])
                rows.append((relation, fact_id, prompt_id, position, token_ids[column]))
                texts.append(text)
                spans.append(span)
    frame = pd.DataFrame(rows, columns=["relation", "fact_id", "prompt_id", "position", "token_id"])
    return frame, texts, spans
