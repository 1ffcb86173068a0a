"""S-TEST's prompts, as queries that every kind of model reads its own way.

A query is text in which ``[Y]`` marks the object slots — the first is the one scored; the
cascade prompt's second holds the coarser object — and ``[X]`` a masked subject (naturalness).
Masked LMs put their mask token in every slot; causal LMs read the text before the first ``[Y]``
(see :mod:`knowprobe.stest.probe`).

- VP (vanilla): the relation's template (Table 1), "[X] was born in [Y]."
- FP (few-shot): ``k`` other subjects of the same relation with their fine objects, each the
  template filled in without its final period, joined by ", " before the question, as the
  paper's example and the authors' code do: "Melbourne is located in Victoria, Guangzhou is
  located in Guangdong, Toronto is located in [Y]."
- CP (cascade): the template with a which-clause (Table 4): "[X] was born in [Y], which is
  located in [Y]."
- Naturalness: the same with the subject masked, "[X] was born in [Y]." read as
  "[MASK] was born in [MASK]."

A causal LM reads a masked subject as its unknown token. ``subject_spacing`` says how the text
around it is tokenized: ``authors`` (the default), as the authors' GPT-2 connector does (their
LAMA fork's ``lama/modules/gpt2_connector.py``): the text is split at each mask, each piece
stripped of its surrounding blanks and tokenized alone, so the word after the subject is "was",
not " was", and a few-shot context ends at "Victoria," with no space token before the subject;
``spaced``, the text as written, tokenized whole (" was", and in few-shot prompts a space token
of its own before the unknown token).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..io import KnowprobeError
from ..prompts import OBJECT, SUBJECT

METHODS = ["VP", "FP", "CP"]
MEASURES = ["specificity", "naturalness"]


def cascade_template(template: str, clause: str) -> str:
    """The template with a which-clause before its final period:
    ("[X] is part of [Y].", "which is part of [Y]") -> "[X] is part of [Y], which is part of [Y]."."""
    body = template.rstrip()
    if not body.endswith(".") or body.count(OBJECT) != 1 or body.count(SUBJECT) != 1:
        raise KnowprobeError(f"S-TEST template {template!r}: needs one [X], one [Y] and a final period")
    if clause.count(OBJECT) != 1 or SUBJECT in clause:
        raise KnowprobeError(f"S-TEST cascade clause {clause!r}: needs one [Y] and no [X]")
    return body[:-1].rstrip() + ", " + clause.strip() + "."


def filled(template: str, subject: str, obj: str) -> str:
    return template.replace(SUBJECT, subject).replace(OBJECT, obj)


DRAWS = ("numpy", "authors")


def demonstrations(
    relations: pd.Series,
    k: int,
    seed: int,
    draw: str = "numpy",
    facts: pd.Series | None = None,
    usable: np.ndarray | None = None,
) -> list[np.ndarray]:
    """For each row, ``k`` other rows of the same relation (positions into ``relations``), drawn
    with the seed; never the row itself (nor, with ``authors``, a row of the same fact), nor a row
    that is not ``usable`` (a triple the model cannot be asked about, which would otherwise stop
    or leave out the queries it is shown in; it is drawn from as if it were not there). A
    relation with k or fewer others gives all the others.

    ``numpy``: a NumPy generator per relation. ``authors``: as the authors' code draws (their
    LAMA fork's ``batch_eval_KB_completion.py``): per relation, Python's ``random`` seeded with
    ``seed``, over the relation's facts in file order with repeats of a (subject, fine object)
    fact removed (``facts``: one key per row; the first row of a fact stands for it), query i
    taking ``random.sample(range(i) + range(i + 1, n), k)``."""
    if draw not in DRAWS:
        raise ValueError(f"draw {draw!r}: one of {DRAWS}")
    out: list[np.ndarray] = [np.empty(0, dtype=np.int64)] * len(relations)
    values = relations.to_numpy()
    usable = np.ones(len(values), dtype=bool) if usable is None else np.asarray(usable, dtype=bool)
    for number, relation in enumerate(sorted(set(values))):
        rows = np.flatnonzero((values == relation) & usable)
        if draw == "authors":
            keys = facts.to_numpy()[rows] if facts is not None else rows
            first = {}
            for row, key in zip(rows, keys):
                first.setdefault(key, row)
            distinct = np.array(list(first.values()), dtype=np.int64)  # file order
            index = {key: i for i, key in enumerate(first)}
            draws = authors_draws(len(distinct), k, seed)
            for row, key in zip(rows, keys):
                out[row] = distinct[draws[index[key]]]
            continue
        rng = np.random.default_rng([seed, number])
        for i, row in enumerate(rows):
            others = np.delete(rows, i)
            out[row] = others if len(others) <= k else rng.choice(others, size=k, replace=False)
    return out


def authors_draws(n: int, k: int, seed: int) -> list[list[int]]:
    """The authors' draw for n facts: one ``random.Random(seed)`` through the facts in order."""
    import random

    rng = random.Random(seed)
    out = []
    for i in range(n):
        others = list(range(i)) + list(range(i + 1, n))
        out.append(others if len(others) <= k else rng.sample(others, k=k))
    return out


def queries(
    triples: pd.DataFrame, relations: dict, k: int, seed: int, draw: str = "numpy", usable: np.ndarray | None = None
) -> pd.DataFrame:
    """Every (triple, measure, method) query: ``row`` (position in ``triples``), ``measure``,
    ``method``, ``query``; the few-shot demonstrations drawn as ``draw`` says, among the
    ``usable`` triples only (all by default)."""
    triples = triples.reset_index(drop=True)
    facts = triples["sub_label"] + "\t" + triples["fine_label"]
    shots = demonstrations(triples["relation"], k, seed, draw, facts, usable)
    rows = []
    for row, triple in enumerate(triples.itertuples(index=False)):
        spec = relations[triple.relation]
        template = spec["template"]
        cascade = cascade_template(template, spec["cascade"])
        context = "".join(
            filled(template, triples.at[j, "sub_label"], triples.at[j, "fine_label"]).rstrip()[:-1] + ", "
            for j in shots[row]
        )
        for measure in MEASURES:
            subject = SUBJECT if measure == "naturalness" else triple.sub_label
            for method, text in (
                ("VP", template.replace(SUBJECT, subject)),
                ("FP", context + template.replace(SUBJECT, subject)),
                ("CP", cascade.replace(SUBJECT, subject)),
            ):
                rows.append({"row": row, "measure": measure, "method": method, "query": text})
    return pd.DataFrame(rows, columns=["row", "measure", "method", "query"])


def masked_form(query: str, mask: str) -> tuple[str, int, int]:
    """The query for a masked LM: every slot a mask; the number of masks and which is scored."""
    first = query.index(OBJECT)
    masks = query.count(OBJECT) + query.count(SUBJECT)
    slot = query[:first].count(SUBJECT)
    return query.replace(SUBJECT, mask).replace(OBJECT, mask), masks, slot


SUBJECT_SPACINGS = ("authors", "spaced")


def with_subject(text: str, subject_token: str, spacing: str = "authors") -> str:
    """``text`` with each masked subject ``[X]`` given as ``subject_token`` (a special token, which
    the tokenizer never merges with its neighbours). ``authors``: the pieces between the masks
    stripped and joined to the token without blanks, so that each piece is tokenized as it would
    be alone ("[X] was born in" -> "<|endoftext|>was born in"); ``spaced``: the text as written."""
    if spacing not in SUBJECT_SPACINGS:
        raise ValueError(f"subject spacing {spacing!r}: one of {SUBJECT_SPACINGS}")
    if spacing == "spaced":
        return text.replace(SUBJECT, subject_token)
    return subject_token.join(piece.strip() for piece in text.split(SUBJECT))


def causal_prefix(query: str, subject_token: str, spacing: str = "authors") -> str:
    """What a causal LM reads before the scored slot (a masked subject is the model's unknown
    token, as LAMA's GPT-2 connector masks; ``spacing``, see the module's docstring)."""
    return with_subject(query[: query.index(OBJECT)].rstrip(), subject_token, spacing)


def causal_continuation(query: str, first: str, second: str, subject_token: str, spacing: str = "authors") -> str:
    """The rest of the sentence from the scored slot on, with ``first`` in it and ``second`` in
    the cascade's slot: the sentence mode compares whole sentences, clause included."""
    rest = with_subject(query[query.index(OBJECT) :], subject_token, spacing)
    return rest.replace(OBJECT, first, 1).replace(OBJECT, second, 1)
